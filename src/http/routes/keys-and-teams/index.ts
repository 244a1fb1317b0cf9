// Dashboard: sync keys and teams (signed-in developers, main app). Bodies may be JSON or form-encoded
// (inputs: schemas.ts).
//
// keys.ts
//   GET  /_/dashboard/keys[?tab=active|inactive]   page (JSON {keys} for programs)
//   POST /_/dashboard/keys                          generate: JSON {key} for programs; browsers get 303 to
//                                                   the page, which shows the key once (a reload makes none);
//                                                   402 payment-required without a plan that includes sync
//   POST /_/dashboard/keys/:id/revoke               revoke (requests with it answer 401 from then on)
// teams.ts
//   GET  /_/dashboard/teams                         page (JSON {teams} for programs)
//   POST /_/dashboard/teams                         create {username}: the caller is its owner
//   POST /_/dashboard/teams/:id/members             {username, role}: add a member or change a role (owners)
//   POST /_/dashboard/teams/:id/members/:person/remove
// invites.ts
//   POST /_/dashboard/teams/:id/invites             {email, role}: mails a one-time link (owners)
//   GET  /_/invite/:token                           the invitation; POST accepts it (signed in with that email)
//
// Browser form posts come back to the page with msg/msgType; AJAX gets JSON {msg, msgType, ...}.
import type { RoutePlugin } from '../plugin.ts';
import { onlyOn } from '../../hosts.ts';
import keys from './keys.ts';
import teams from './teams.ts';
import invites from './invites.ts';

const groups: RoutePlugin[] = [keys, teams, invites];

/** The groups register on this plugin's own instance, not as child plugins: one scope, as before the split. */
const plugin: RoutePlugin = async (app, opts) => {
  onlyOn(app, 'main');
  for (const group of groups) await group(app, opts);
};

export default plugin;
