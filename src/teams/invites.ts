// Team invitations by email. An owner invites an address with a role; the invitee gets a one-time link
// (src/core/one-time-token.ts, 7 days) and joins by opening it while signed in with that
// address (signing up first if they have no account). A used, expired or unknown link answers alike.
import type { Services } from '../services.ts';
import type { TeamRole } from '../store/schema.ts';
import { badRequest, forbidden } from '../errors.ts';
import { newOneTimeToken, presentedTokenHash } from '../core/one-time-token.ts';
import { emailProblem } from '../core/names.ts';
import { DAY } from '../limits.ts';
import { insertInvite, markInviteUsed, pendingInvite } from '../store/invites.ts';
import { TEAM_ROLES, findTeam, teamToChange, type Team, type TeamCtx } from './teams.ts';
import { setMembership, teamRole } from '../store/accounts.ts';
import { inTransaction } from '../store/transaction.ts';

const LIFETIME_MS = 7 * DAY;
const GONE = 'This invitation link is not valid: it was used already, it expired, or it never existed.';

export interface Invitation {
  team: Team;
  email: string;
  role: TeamRole;
}

/** Creates an invitation and mails its link (`link(token)` makes the URL); returns what was sent. */
export async function inviteToTeam(
  s: Services & TeamCtx,
  input: { teamId: number; email: string; role: TeamRole; link: (token: string) => string },
): Promise<Invitation> {
  const { link } = input;
  const team = await teamToChange(s, input.teamId);
  const actorId = s.caller.actor?.accountId ?? null;
  const email = String(input.email ?? '')
    .trim()
    .toLowerCase();
  const problem = emailProblem(email);
  if (problem) throw badRequest(problem, 'invalid');
  if (!TEAM_ROLES.includes(input.role))
    throw badRequest(`Role must be one of ${TEAM_ROLES.join(', ')}.`, 'invalid-role');
  const { token, row } = newOneTimeToken(s.clock.now(), LIFETIME_MS);
  await insertInvite(s.database.db, { ...row, team_id: team.id, email, role: input.role, invited_by: actorId });
  const url = link(token);
  await s.mailer.send({
    to: email,
    subject: `You are invited to the team ${team.username} on Kiln`,
    text: `You are invited to join the team ${team.username} as ${input.role}.\n\nOpen this link to accept (valid for 7 days, once):\n${url}\n\nIf you did not expect this, ignore this message.`,
  });
  return { team, email, role: input.role };
}

async function pending(s: Services, token: string) {
  const hash = presentedTokenHash(token);
  return hash ? pendingInvite(s.database.db, hash, s.clock.now().toISOString()) : undefined;
}

/** What a still-valid link offers; 404 otherwise. */
export async function invitationOf(s: Services, token: string): Promise<Invitation> {
  const row = await pending(s, token);
  const team = row ? await findTeam(s, row.team_id) : undefined;
  if (!row || !team) throw badRequest(GONE, 'invalid-token');
  return { team, email: row.email, role: row.role };
}

/** The signed-in person accepts: they must hold the invited address. The link is used up; a member
 *  already in the team keeps their role. */
export async function acceptInvite(
  s: Services,
  token: string,
  person: { accountId: number; username: string; email: string },
): Promise<Invitation & { already: boolean }> {
  const invitation = await invitationOf(s, token);
  if (person.email.toLowerCase() !== invitation.email)
    throw forbidden(
      `This invitation is for ${invitation.email}; you are signed in as ${person.email}. Sign in with that address to accept it.`,
    );
  const teamId = invitation.team.id;
  const now = s.clock.now().toISOString();
  // The link is used up in the membership's own transaction: of several acceptances one joins, and a
  // membership that could not be written leaves the link unused.
  const current = await inTransaction(s, async (tx) => {
    if (!(await markInviteUsed(tx, presentedTokenHash(token)!, now))) throw badRequest(GONE, 'invalid-token');
    const role = await teamRole(tx, teamId, person.accountId);
    if (!role)
      await setMembership(tx, { teamId, personId: person.accountId, role: invitation.role, now, exists: false });
    return role;
  });
  return { ...invitation, role: current ?? invitation.role, already: current !== undefined };
}
