// Teams: the page, creating one, and its members (owners add, change and remove them).
import type { RoutePlugin } from '../plugin.ts';
import type { Services } from '../../../services.ts';
import type { Actor } from '../../../access/actor.ts';
import { allowsTeam } from '../../../access/authorize.ts';
import { createTeam, membersOf, planIncludesSync, removeMember, setMember, teamsOf } from '../../../teams/teams.ts';
import { teamsPage } from '../../../ui/keys.ts';
import { idParam, parse, queryMsg, wantsHtml } from '../../io.ts';
import { bodies, codes } from './schemas.ts';
import { TEAMS, developer, operate } from './shared.ts';

/** The actor's teams, with the members of those they may see them of. */
async function teamsView(s: Services, actor: Actor) {
  const teams = await teamsOf(s, actor.accountId);
  return Promise.all(
    teams.map(async (t) => ({ ...t, members: allowsTeam(t.role, 'members') ? await membersOf(s, t.id) : null })),
  );
}

const teamPages: RoutePlugin = async (app, { services: s }) => {
  app.get(TEAMS, async (req, reply) => {
    const actor = developer(req, false);
    const teams = await teamsView(s, actor);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', teams });
    return reply
      .type('text/html; charset=utf-8')
      .send(teamsPage({ username: actor.username, teams, msg: queryMsg(req) }));
  });

  app.post(TEAMS, (req, reply) =>
    operate(s, req, reply, TEAMS, async (actor) => {
      const { username } = parse(bodies.team, req.body);
      // A team starts on its creator's plan when that plan includes sync (the creator's subscription
      // covers it until billing says otherwise), else on the free plan.
      const plan = planIncludesSync(actor) ? actor.plan : 'free';
      const team = await createTeam(s, { username, ownerId: actor.accountId, plan });
      return { msg: `Team "${team.username}" created; you are its owner.`, extra: { team } };
    }),
  );

  app.post(`${TEAMS}/:id/members`, (req, reply) =>
    operate(s, req, reply, TEAMS, async (actor) => {
      const { role, username } = parse(bodies.member, req.body, codes);
      const member = await setMember(s, actor.accountId, { teamId: idParam(req, 'id'), username, role });
      const msg = `${member.username} is now ${role === 'owner' ? 'an' : 'a'} ${role} of the team.`;
      return { msg, extra: { member } };
    }),
  );

  app.post(`${TEAMS}/:id/members/:person/remove`, (req, reply) =>
    operate(s, req, reply, TEAMS, async (actor) => {
      await removeMember(s, actor.accountId, idParam(req, 'id'), idParam(req, 'person'));
      return { msg: 'Member removed.' };
    }),
  );
};

export default teamPages;
