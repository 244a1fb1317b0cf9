// Teams: the page, creating one, and its members (owners add, change and remove them).
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { createTeam, planIncludesSync, removeMember, setMember, teamsView } from '../../../teams/teams.ts';
import { teamsPage } from '../../../ui/keys.ts';
import { queryMsg, wantsHtml } from '../../io.ts';
import { nodeParams } from '../dashboard/shared.ts';
import { bodies } from './schemas.ts';
import { TEAMS, developer, operate } from './shared.ts';

/** A team's id, and a member's (`person`): a malformed one is no such one (404). */
const memberParams = nodeParams.extend({ person: nodeParams.shape.id });

const teamPages: RoutePlugin = async (app, { services: s }) => {
  app.get(TEAMS, async (req, reply) => {
    const me = developer(req, false);
    const teams = await teamsView(req.ctx);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', teams });
    return reply.type('text/html; charset=utf-8').send(teamsPage({ username: me.username, teams, msg: queryMsg(req) }));
  });

  app.post(TEAMS, { schema: { body: bodies.team }, attachValidation: true }, (req, reply) =>
    operate(req, reply, TEAMS, async (_ctx, me) => {
      // A team starts on its creator's plan when that plan includes sync (the creator's subscription
      // covers it until billing says otherwise), else on the free plan.
      const plan = planIncludesSync(me) ? me.plan : 'free';
      const team = await createTeam(s, { username: req.body.username, ownerId: me.accountId, plan });
      return { msg: `Team "${team.username}" created; you are its owner.`, extra: { team } };
    }),
  );

  app.post(
    `${TEAMS}/:id/members`,
    { schema: { params: nodeParams, body: bodies.member }, attachValidation: true },
    (req, reply) =>
      operate(req, reply, TEAMS, async (ctx) => {
        const { role, username } = req.body;
        const member = await setMember(ctx, { teamId: req.params.id, username, role });
        const msg = `${member.username} is now ${role === 'owner' ? 'an' : 'a'} ${role} of the team.`;
        return { msg, extra: { member } };
      }),
  );

  app.post(
    `${TEAMS}/:id/members/:person/remove`,
    { schema: { params: memberParams, body: z.unknown() }, attachValidation: true },
    (req, reply) =>
      operate(req, reply, TEAMS, async (ctx) => {
        await removeMember(ctx, { teamId: req.params.id, personId: req.params.person });
        return { msg: 'Member removed.' };
      }),
  );
};

export default teamPages;
