// A developer's own account, on the main app. Bodies may be JSON or form-encoded (inputs: schemas.ts);
// browsers get pages and redirects with a message, programs JSON {msg, msgType, ...}.
//
// page.ts
//   GET  /_/account                          the page (JSON {account, logins, agents} for programs)
// credentials.ts
//   POST /_/account/password                 {current, password}: every other sign-in ends
//   POST /_/account/username                 {username, password}: the host moves; the old one redirects 30 days
//   POST /_/account/email                    {email, password}: a confirmation link to the new address
//   GET  /_/account/email/:token, POST       confirm the new address (the old one is told)
// sign-ins.ts
//   POST /_/account/sessions/:id/end         ends one sign-in (and its document-host sessions)
//   POST /_/account/sessions/end-all         ends every sign-in, this one included
// agent-keys.ts
//   POST /_/account/agent-keys               {name, access: read|write, account: <id>, folder?, days?}: an agent
//                                            key, shown once with the lines to connect an agent (JSON: 201
//                                            {key, ...its facts, connect})
//   POST /_/account/agent-keys/:id/revoke    its next call is refused
// delete.ts
//   POST /_/account/delete                   {confirm: <username>, password}: the account, for good
// export.ts
//   GET  /_/account/export[?versions=1]      the whole tree as a zip (src/accounts/export.ts)
//   POST /_/account/import                   multipart `file` (and `folder`, optional): a zip into the tree,
//                                            all or nothing
//   GET  /_/export/:token                    the last export of a deleted account (7 days)
// reset.ts
//   GET  /_/reset, POST /_/reset {email}     "forgot password": mails a link (same answer either way)
//   GET  /_/reset/:token, POST {password}    choose a new password through the link
import type { RoutePlugin } from '../plugin.ts';
import { onlyOn } from '../../hosts.ts';
import page from './page.ts';
import credentials from './credentials.ts';
import signIns from './sign-ins.ts';
import deletion from './delete.ts';
import agentKeys from './agent-keys.ts';
import transfer from './export.ts';
import reset from './reset.ts';

const groups: RoutePlugin[] = [page, credentials, signIns, agentKeys, deletion, transfer, reset];

/** The groups register on this plugin's own instance, not as child plugins: one scope, as before the split. */
const plugin: RoutePlugin = async (app, opts) => {
  onlyOn(app, 'main', 'Your account is on the main app.');
  for (const group of groups) await group(app, opts);
};

export default plugin;
