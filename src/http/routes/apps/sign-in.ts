// Signing in on an app's host: only app users of that app (a developer signs in on the main app).
import type { RoutePlugin } from '../plugin.ts';
import { badRequest } from '../../../errors.ts';
import { passwordLogin } from '../../../accounts/login.ts';
import { appLoginPage } from '../../../ui/apps.ts';
import { queryMsg, wantsHtml } from '../../io.ts';
import { refuseCrossSite } from '../../origin.ts';
import { handoff, signIn } from '../../sessions.ts';
import { bodies, bodyOf, pageQuery } from './schemas.ts';
import { appOf, backTo, destination, formPost, mainLogin, namedApp, refOf, sendPage } from './shared.ts';

const signInPages: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/app/login', { schema: { querystring: pageQuery } }, async (req, reply) => {
    const node = await appOf(req, 'view');
    return sendPage(reply, appLoginPage({ app: refOf(node), msg: queryMsg(req), mainLogin: mainLogin(s) }));
  });

  app.post(
    '/_/app/login',
    { schema: { body: bodies.login }, attachValidation: true },
    formPost(
      backTo('login'),
      (req, msg) => appLoginPage({ app: namedApp(req), msg, mainLogin: mainLogin(s) }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        const node = await appOf(req, 'view');
        const b = bodyOf(bodies.login, req);
        const identifier = b.email ?? b.username;
        if (!identifier) throw badRequest('Enter your email or username.', 'missing-field');
        if (!b.password) throw badRequest('Enter your password.', 'missing-field');
        // Only this app's users: a developer's password is never checked here (it belongs on the main
        // app's sign-in page). An app user's attempts count with the main page's, per address and account.
        const who = await passwordLogin(s, req.ip, identifier, b.password, { kind: 'app', appId: node.id });
        const login = await signIn(req, reply, s, who.accountId);
        const url = await destination(s, req, who, node);
        const next = await handoff(s, req, login, url);
        if (wantsHtml(req)) return reply.redirect(next, 302);
        const msg = `Signed in as ${who.username}.`;
        return reply.send({ msg, msgType: 'success', username: who.username, url, signInUrl: next });
      },
    ),
  );
};

export default signInPages;
