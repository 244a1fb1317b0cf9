// Email confirmation: the mailed link (on the app's host), and asking for a new one (on the app
// user's own host, where their session is).
import type { RoutePlugin } from '../plugin.ts';
import type { Services } from '../../../services.ts';
import type { NodeRow } from '../../../nodes/find.ts';
import { KilnError, notFound, unauthorized } from '../../../errors.ts';
import { personFacts, usernameOf } from '../../../accounts/people.ts';
import { getNode } from '../../../nodes/tree.ts';
import { childPathOf } from '../../../nodes/find.ts';
import { confirmEmail, sendConfirmation, type AppLinks } from '../../../apps/app-users.ts';
import { documentHostUrl } from '../../../core/urls.ts';
import { appLoginPage, appNoticePage } from '../../../ui/apps.ts';
import { wantsHtml } from '../../io.ts';
import { bodies, tokenParams } from './schemas.ts';
import { hostAccount } from '../../hosts.ts';
import { refuseCrossSite } from '../../origin.ts';
import { backTo, formPost, mainLogin, namedApp, ownInstanceUrl, refOf, sendPage, tokenOf } from './shared.ts';

/** The app an app user signed up on (404 when there is none). */
async function signupAppOf(s: Services, accountId: number): Promise<NodeRow> {
  const person = await personFacts(s, accountId);
  const node = person?.signupAppId ? await getNode(s, person.signupAppId) : undefined;
  if (!node) throw notFound('There is no app to confirm an email for.');
  return node;
}

/** Links of an app on its owner's host, built from configuration. */
async function appLinksOf(s: Services, app: NodeRow): Promise<AppLinks> {
  return {
    hostUrl: documentHostUrl(s.config, await usernameOf(s, app.owner_id)),
    appName: app.name,
    appPath: childPathOf(app),
  };
}

const confirm: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/app/confirm/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    hostAccount(req);
    const token = tokenOf(req);
    let accountId: number;
    try {
      ({ accountId } = await confirmEmail(s, token));
    } catch (err) {
      if (!(err instanceof KilnError) || !wantsHtml(req)) throw err;
      return sendPage(reply, appNoticePage({ title: 'Link expired', text: err.message }), err.status);
    }
    const url = await ownInstanceUrl(s, accountId);
    const msg = 'Your email is confirmed. You can now save your copy.';
    if (!wantsHtml(req)) return reply.send({ msg, msgType: 'success', ...(url ? { url } : {}) });
    const link = url ? { href: url, label: 'Open your copy' } : undefined;
    return sendPage(reply, appNoticePage({ title: 'Email confirmed', text: msg, link }));
  });

  app.post(
    '/_/app/confirm',
    { schema: { body: bodies.confirm }, attachValidation: true },
    formPost(
      backTo('login'),
      (req, msg) => appLoginPage({ app: namedApp(req), msg, mainLogin: mainLogin(s) }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        // Asked on the app user's own host (where their session is); the link goes to the app's host.
        const actor = req.caller.actor;
        if (!actor) throw unauthorized();
        const { accountId, email, emailConfirmed } = actor;
        const node = await signupAppOf(s, accountId);
        const msg = emailConfirmed
          ? 'Your email is already confirmed.'
          : `We sent a new confirmation link to ${email}.`;
        if (!emailConfirmed) await sendConfirmation(s, { accountId, email }, await appLinksOf(s, node));
        if (wantsHtml(req))
          return sendPage(reply, appNoticePage({ title: 'Confirm your email', text: msg, app: refOf(node) }));
        return reply.send({ msg, msgType: 'success' });
      },
    ),
  );
};

export default confirm;
