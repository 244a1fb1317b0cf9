// An app's sign-ups (src/apps): who signed up, and disabling one of them.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { flag, queryMsg, sendPage, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { documentHostUrl } from '../../../core/urls.ts';
import { appSignups, setAppUserDisabled } from '../../../apps/apps.ts';
import { signedIn } from '../../../nodes/manage.ts';
import { appSignupUrl } from '../../../ui/dashboard.ts';
import { signupsPage } from '../../../ui/apps.ts';
import { DASHBOARD, mainOnly, manager, nodeParams } from './shared.ts';

const disable = z.object({ disabled: flag });
/** The app and one of its users: a malformed id is no such one (404). */
const userParams = nodeParams.extend({ user: nodeParams.shape.id });

const signups: RoutePlugin = async (app, { services: s }) => {
  app.get(`${DASHBOARD}/nodes/:id/signups`, { schema: { params: nodeParams } }, async (req, reply) => {
    mainOnly(req);
    const me = signedIn(req.ctx, 'manage');
    const { app: node, users, hostUsername } = await appSignups(req.ctx, { appId: req.params.id });
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', app: node.name, users };
    return sendPage(
      reply,
      signupsPage({
        username: me.username,
        app: node,
        users,
        signupUrl: appSignupUrl(documentHostUrl(s.config, hostUsername), node),
        msg: queryMsg(req),
      }),
    );
  });

  app.post(
    `${DASHBOARD}/nodes/:id/signups/:user/disable`,
    { schema: { params: userParams, body: disable }, attachValidation: true },
    async (req, reply) => {
      manager(req);
      const { id: appId, user: userId } = req.params;
      const disabled = req.body.disabled;
      const user = await setAppUserDisabled(req.ctx, { appId, userId, disabled });
      const msg = disabled
        ? `${user.username} is disabled: they cannot sign in, and their copy answers "unavailable".`
        : `${user.username} may sign in again.`;
      if (wantsHtml(req))
        return reply.redirect(withMessage(s.secret, `${DASHBOARD}/nodes/${appId}/signups`, msg, 'success'), 302);
      return { msg, msgType: 'success' };
    },
  );
};

export default signups;
