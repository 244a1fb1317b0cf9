// Multi-tenant app pages, on the app's host (the app owner's document host, or its custom domain).
// `app` names the app by its path on that host (`todo.html`, `tools/todo.html`), in the query for
// GETs and in the body (or query) for POSTs. GET serves the form, POST processes it (form-encoded or
// JSON). Browsers get a 302 (back to the form with msg/msgType on a refusal); AJAX gets JSON.
//
// signup.ts
//   GET  /_/app/signup?app=<path>   sign-up form
//   POST /_/app/signup              {app, email, password, username?} → an app_user account (username
//                                   generated when empty) with its own instance of the app; signed in;
//                                   a confirmation link mailed; 302 to the instance (AJAX: 201 JSON)
//   GET  /_/app/signup?app=<copy>   on an app user's host, naming their copy: 302 to its app's sign-up
//   GET  /_/app/info?app=<path>     what a page is: {app, copy, signupUrl} (the app starter's script)
// sign-in.ts
//   GET  /_/app/login?app=<path>    sign-in form
//   POST /_/app/login               {app, email (or username), password} → 302 to the caller's instance
//                                   of the app (an app user of it without one gets one); only app users
//                                   of that app: anyone else's email answers like an unknown one
// reset.ts
//   GET  /_/app/reset?app=<path>    form asking for a reset link
//   POST /_/app/reset               {app, email} → the same answer whether or not an account uses the
//                                   email; if one does, a single-use link (1 hour) is mailed
//   GET  /_/app/reset/<token>       new-password form (400 page when the link is invalid or expired)
//   POST /_/app/reset/<token>       {password} → password set, email confirmed, other sessions ended,
//                                   signed in, 302 to the instance (only links of this host's app users)
// confirm.ts
//   GET  /_/app/confirm/<token>     confirms the email (`people.email_confirmed = 1`); a page linking
//                                   to the instance (AJAX: JSON)
//   POST /_/app/confirm             on the app user's own host, signed in with an unconfirmed email:
//                                   mails a new link (to the app's host)
//
// Inputs: schemas.ts. Rate limits: the general limiter counts every request to these pages
// (src/ratelimit/http.ts); the strict limiter (5 per hour per address) counts sign-ups and reset requests.
//
// This host runs the app owner's scripts, which could read what is typed on these pages: developers
// sign in on the main app (the pages link there), and nobody but an app user of this host's apps has a
// password checked, set or mailed for here (src/apps/app-users.ts).
//
// Instances live on the app user's own host: `<appuser>.<root>/<instance name>`. Sessions are per host
// (src/http/sessions.ts): signing in on the app's host gives the app user a session on their own host,
// through the session handshake (`signInUrl` in JSON answers; browsers are redirected through it).
import type { RoutePlugin } from '../plugin.ts';
import { onlyOn } from '../../hosts.ts';
import signup from './signup.ts';
import signIn from './sign-in.ts';
import reset from './reset.ts';
import confirm from './confirm.ts';

const groups: RoutePlugin[] = [signup, signIn, reset, confirm];

/** The groups register on this plugin's own instance, not as child plugins: one scope, as before the split. */
const plugin: RoutePlugin = async (app, opts) => {
  onlyOn(app, 'document', 'App pages are on the app’s own host.');
  for (const group of groups) await group(app, opts);
};

export default plugin;
