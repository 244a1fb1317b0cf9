// Team invitations: an owner invites an address; the invitee accepts through the mailed link, signed in
// with that address.
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { KilnError } from '../../../errors.ts';
import { managesFiles } from '../../../teams/teams.ts';
import { acceptInvite, invitationOf, inviteToTeam, type Invitation } from '../../../teams/invites.ts';
import { invitePage } from '../../../ui/keys.ts';
import { sendPage, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { nodeParams } from '../dashboard/shared.ts';
import { bodies } from './schemas.ts';
import { TEAMS, developer, operate } from './shared.ts';

const tokenParams = z.object({ token: z.string() });

/** What accepting answers: the words, and where a browser goes (a team's tree for who may change it). */
function joinedAnswer(joined: Invitation & { already: boolean }) {
  const { team, role } = joined;
  const msg = joined.already
    ? `You were already in ${team.username} (as ${role}).`
    : `Welcome to ${team.username}: you are ${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}.`;
  const to = managesFiles(role) ? `/_/dashboard?team=${encodeURIComponent(team.username)}` : TEAMS;
  return { msg, to };
}

const invites: RoutePlugin = async (app, { services: s }) => {
  app.post(
    `${TEAMS}/:id/invites`,
    { schema: { params: nodeParams, body: bodies.invite }, attachValidation: true },
    (req, reply) =>
      operate(req, reply, TEAMS, async (ctx) => {
        const { role, email } = req.body;
        const link = (token: string) => `${s.config.baseUrl}/_/invite/${token}`;
        const sent = await inviteToTeam(ctx, { teamId: req.params.id, email, role, link });
        return {
          msg: `Invitation sent to ${sent.email}: the link in it adds them to ${sent.team.username} as ${sent.role}.`,
          extra: { invitation: { email: sent.email, role: sent.role, team: sent.team.username } },
        };
      }),
  );

  app.get('/_/invite/:token', { schema: { params: tokenParams } }, async (req, reply) => {
    reply.header('cache-control', 'no-store').header('referrer-policy', 'same-origin');
    const { token } = req.params;
    const me = req.ctx.caller.actor;
    let invitation: Invitation;
    try {
      invitation = await invitationOf(s, token);
    } catch (err) {
      if (!(err instanceof KilnError) || !wantsHtml(req)) throw err;
      return sendPage(reply, invitePage({ token, username: me?.username, error: err.message }), err.status);
    }
    if (!wantsHtml(req)) return { team: invitation.team.username, role: invitation.role, email: invitation.email };
    return sendPage(reply, invitePage({ token, username: me?.username, email: me?.email, invitation }));
  });

  app.post(
    '/_/invite/:token',
    { schema: { params: tokenParams, body: z.unknown() }, attachValidation: true },
    async (req, reply) => {
      const me = developer(req, true);
      const joined = await acceptInvite(s, req.params.token, me);
      const { msg, to } = joinedAnswer(joined);
      if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, to, msg, 'success'), 302);
      return reply.send({ msg, msgType: 'success', team: joined.team.username, role: joined.role });
    },
  );
};

export default invites;
