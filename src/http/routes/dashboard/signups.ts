// An app's sign-ups (src/apps): who signed up, and disabling one of them.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { flag, idParam, parse, queryMsg, sendPage, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { authorizeActor } from '../../../access/authorize.ts';
import { documentHostUrl } from '../../../core/urls.ts';
import { appSignups, setAppUserDisabled } from '../../../apps/apps.ts';
import { appSignupUrl } from '../../../ui/dashboard.ts';
import { signupsPage } from '../../../ui/apps.ts';
import { DASHBOARD, mainOnly, manager } from './shared.ts';

const disable = z.object({ disabled: flag });

const signups: RoutePlugin = async (app, { services: s }) => {
  app.get(`${DASHBOARD}/nodes/:id/signups`, async (req, reply) => {
    mainOnly(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const { app: node, users } = await appSignups(s, actor.accountId, idParam(req));
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', app: node.name, users };
    return sendPage(
      reply,
      signupsPage({
        username: actor.username,
        app: node,
        users,
        signupUrl: appSignupUrl(documentHostUrl(s.config, actor.username), node),
        msg: queryMsg(req),
      }),
    );
  });

  app.post(`${DASHBOARD}/nodes/:id/signups/:user/disable`, async (req, reply) => {
    const actor = manager(req);
    const disabled = parse(disable, req.body).disabled;
    const appId = idParam(req);
    const user = await setAppUserDisabled(s, actor.accountId, appId, idParam(req, 'user'), disabled);
    const msg = disabled
      ? `${user.username} is disabled: they cannot sign in, and their copy answers "unavailable".`
      : `${user.username} may sign in again.`;
    if (wantsHtml(req))
      return reply.redirect(withMessage(s.secret, `${DASHBOARD}/nodes/${appId}/signups`, msg, 'success'), 302);
    return { msg, msgType: 'success' };
  });
};

export default signups;
