// Team invitations: an owner invites an address; the invitee accepts through the mailed link, signed in
// with that address.
import type { RoutePlugin } from '../plugin.ts';
import { KilnError } from '../../../errors.ts';
import { allowsTeam } from '../../../access/authorize.ts';
import { acceptInvite, invitationOf, inviteToTeam, type Invitation } from '../../../teams/invites.ts';
import { invitePage } from '../../../ui/keys.ts';
import { idParam, parse, sendPage, textParam, wantsHtml } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { bodies, codes } from './schemas.ts';
import { TEAMS, developer, operate } from './shared.ts';

/** What accepting answers: the words, and where a browser goes (a team's tree for who may change it). */
function joinedAnswer(joined: Invitation & { already: boolean }) {
  const { team, role } = joined;
  const msg = joined.already
    ? `You were already in ${team.username} (as ${role}).`
    : `Welcome to ${team.username}: you are ${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}.`;
  const to = allowsTeam(role, 'manage') ? `/_/dashboard?team=${encodeURIComponent(team.username)}` : TEAMS;
  return { msg, to };
}

const invites: RoutePlugin = async (app, { services: s }) => {
  app.post(`${TEAMS}/:id/invites`, (req, reply) =>
    operate(s, req, reply, TEAMS, async (actor) => {
      const { role, email } = parse(bodies.invite, req.body, codes);
      const link = (token: string) => `${s.config.baseUrl}/_/invite/${token}`;
      const sent = await inviteToTeam(s, actor.accountId, { teamId: idParam(req, 'id'), email, role }, link);
      return {
        msg: `Invitation sent to ${sent.email}: the link in it adds them to ${sent.team.username} as ${sent.role}.`,
        extra: { invitation: { email: sent.email, role: sent.role, team: sent.team.username } },
      };
    }),
  );

  app.get('/_/invite/:token', async (req, reply) => {
    reply.header('cache-control', 'no-store').header('referrer-policy', 'same-origin');
    const token = textParam(req, 'token');
    const username = req.actor?.username;
    let invitation: Invitation;
    try {
      invitation = await invitationOf(s, token);
    } catch (err) {
      if (!(err instanceof KilnError) || !wantsHtml(req)) throw err;
      return sendPage(reply, invitePage({ token, username, error: err.message }), err.status);
    }
    if (!wantsHtml(req)) return { team: invitation.team.username, role: invitation.role, email: invitation.email };
    return sendPage(reply, invitePage({ token, username, email: req.actor?.email, invitation }));
  });

  app.post('/_/invite/:token', async (req, reply) => {
    const actor = developer(req, true);
    const joined = await acceptInvite(s, textParam(req, 'token'), actor);
    const { msg, to } = joinedAnswer(joined);
    if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, to, msg, 'success'), 302);
    return reply.send({ msg, msgType: 'success', team: joined.team.username, role: joined.role });
  });
};

export default invites;
