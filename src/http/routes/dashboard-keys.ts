// Dashboard: sync keys and teams (signed-in developers, main app). Bodies may be JSON or form-encoded.
//
//   GET  /_/dashboard/keys[?tab=active|inactive]   page (JSON {keys} for programs)
//   POST /_/dashboard/keys                          generate: JSON {key} for programs; browsers get 303 to
//                                                   the page, which shows the key once (a reload makes none);
//                                                   402 payment-required without a plan that includes sync
//   POST /_/dashboard/keys/:id/revoke               revoke (requests with it answer 401 from then on)
//   GET  /_/dashboard/teams                         page (JSON {teams} for programs)
//   POST /_/dashboard/teams                         create {username}: the caller is its owner
//   POST /_/dashboard/teams/:id/members             {username, role}: add a member or change a role (owners)
//   POST /_/dashboard/teams/:id/members/:person/remove
//   POST /_/dashboard/teams/:id/invites             {email, role}: mails a one-time link (owners)
//   GET  /_/invite/:token                           the invitation; POST accepts it (signed in with that email)
//
// Browser form posts come back to the page with msg/msgType; AJAX gets JSON {msg, msgType, ...}.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import type { Actor } from '../../access/actor.ts';
import type { TeamRole } from '../../store/schema.ts';
import { KilnError, badRequest, notFound } from '../../errors.ts';
import { authorizeActor, allowsTeam } from '../../access/authorize.ts';
import { assertSameOrigin } from '../origin.ts';
import { wantsHtml, bodyOf, queryMsg, backWithRefusal, idParam, queryText, sendPage, textParam } from '../io.ts';
import { withMessage } from '../messages.ts';
import { generateSyncKey, listSyncKeys, revokeSyncKey } from '../../sync/keys.ts';
import {
  createTeam,
  membersOf,
  planIncludesSync,
  removeMember,
  setMember,
  teamsOf,
  TEAM_ROLES,
} from '../../teams/teams.ts';
import { invitePage, keysPage, teamsPage } from '../../ui/keys.ts';
import { acceptInvite, invitationOf, inviteToTeam } from '../../teams/invites.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { onlyOn } from '../hosts.ts';

const KEYS = '/_/dashboard/keys';
const NEW_KEY_COOKIE = 'kiln_new_key';
const NEW_KEY_MSG = 'Sync key generated. Copy it now: it is shown only once.';
const TEAMS = '/_/dashboard/teams';

/** A role (default editor; anything else but the three is 400 invalid-role) and who it is for. */
function roleOf(req: FastifyRequest, who: 'username' | 'email'): { role: TeamRole; who: string } {
  const raw = field(req, 'role') || 'editor';
  const role = TEAM_ROLES.find((r) => r === raw);
  if (!role) throw badRequest(`Role must be one of ${TEAM_ROLES.join(', ')}.`, 'invalid-role');
  return { role, who: field(req, who) };
}

function field(req: FastifyRequest, name: string): string {
  const v = bodyOf(req)[name];
  return typeof v === 'string' ? v : '';
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main');
  /** A signed-in developer on the main app (strangers go to the login page, app users get 403). */
  function developer(req: FastifyRequest, write: boolean): Actor {
    if (write) assertSameOrigin(req);
    return authorizeActor({ actor: req.actor }, null, 'manage');
  }

  /** Runs a POST: browsers are sent back to `page` with the outcome, programs get JSON. */
  async function operate(
    req: FastifyRequest,
    reply: FastifyReply,
    back: string,
    op: (actor: Actor) => Promise<{ msg: string; extra?: Record<string, unknown> }>,
  ) {
    let result: { msg: string; extra?: Record<string, unknown> };
    try {
      result = await op(developer(req, true));
    } catch (err) {
      if (wantsHtml(req) && err instanceof KilnError && err.status !== 401 && req.site.kind === 'main') {
        return reply.redirect(withMessage(s.secret, back, err.message, 'error'), 302);
      }
      throw err;
    }
    if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, back, result.msg, 'success'), 302);
    return reply.send({ msg: result.msg, msgType: 'success', ...result.extra });
  }

  // ---------------------------------------------------------------- keys

  app.get(KEYS, async (req, reply) => {
    const actor = developer(req, false);
    const keys = await listSyncKeys(s, actor.accountId);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', keys });
    const tab = queryText(req, 'tab') === 'inactive' ? 'inactive' : 'active';
    // A key generated a moment ago, shown once: the cookie is cleared by this very answer.
    const fresh = newKeyOf(req, keys);
    if (req.cookies[NEW_KEY_COOKIE] !== undefined) reply.clearCookie(NEW_KEY_COOKIE, { path: KEYS });
    return reply.type('text/html; charset=utf-8').send(
      keysPage({
        username: actor.username,
        keys,
        tab,
        newKey: fresh,
        msg: fresh ? { text: NEW_KEY_MSG, type: 'success' } : queryMsg(req),
      }),
    );
  });

  app.post(KEYS, async (req, reply) => {
    let actor: Actor;
    let made: Awaited<ReturnType<typeof generateSyncKey>>;
    try {
      actor = developer(req, true);
      await strictAttempt(s, req, reply, 'sync-key');
      made = await generateSyncKey(s, actor.accountId);
    } catch (err) {
      const back = backWithRefusal(req, reply, err, KEYS);
      if (back) return back;
      throw err;
    }
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req))
      return reply.code(201).send({
        msg: NEW_KEY_MSG,
        msgType: 'success',
        key: made.key,
        id: made.id,
        prefix: made.prefix,
        expiresAt: made.expiresAt,
      });
    // POST-redirect-GET, so a reload never generates a second key. The key cannot travel in the URL
    // (history, logs): it waits in a short-lived httpOnly cookie scoped to the keys page.
    reply.setCookie(NEW_KEY_COOKIE, `${made.id}.${made.key}`, {
      path: KEYS,
      httpOnly: true,
      sameSite: 'strict',
      secure: s.config.secure,
      maxAge: 120,
    });
    return reply.redirect(KEYS, 303);
  });

  /** The key the cookie carries, when it is one of the account's active keys. */
  function newKeyOf(req: FastifyRequest, keys: Awaited<ReturnType<typeof listSyncKeys>>) {
    const raw = req.cookies[NEW_KEY_COOKIE];
    const m = raw ? /^(\d{1,15})\.(hcsk_[0-9a-f]{64})$/.exec(raw) : null;
    if (!m) return undefined;
    const listed = keys.find((k) => k.id === Number(m[1]) && k.state === 'active' && m[2].startsWith(k.prefix));
    return listed ? { key: m[2], prefix: listed.prefix, expiresAt: listed.expiresAt } : undefined;
  }

  app.post(`${KEYS}/:id/revoke`, (req, reply) =>
    operate(req, reply, KEYS, async (actor) => {
      const id = idParam(req, 'id');
      const key = (await listSyncKeys(s, actor.accountId)).find((k) => k.id === id);
      if (!key) throw notFound('No such key.');
      if (key.state !== 'active') return { msg: `The key ${key.prefix}… was already ${key.state}.` };
      await revokeSyncKey(s, actor.accountId, id);
      return { msg: `Revoked the key ${key.prefix}…; tools using it can no longer sync.` };
    }),
  );

  // ---------------------------------------------------------------- teams

  async function teamsView(actor: Actor) {
    const teams = await teamsOf(s, actor.accountId);
    return Promise.all(
      teams.map(async (t) => ({ ...t, members: allowsTeam(t.role, 'members') ? await membersOf(s, t.id) : null })),
    );
  }

  app.get(TEAMS, async (req, reply) => {
    const actor = developer(req, false);
    const teams = await teamsView(actor);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', teams });
    return reply
      .type('text/html; charset=utf-8')
      .send(teamsPage({ username: actor.username, teams, msg: queryMsg(req) }));
  });

  app.post(TEAMS, (req, reply) =>
    operate(req, reply, TEAMS, async (actor) => {
      // A team starts on its creator's plan when that plan includes sync (the creator's subscription
      // covers it until billing says otherwise), else on the free plan.
      const plan = planIncludesSync(actor) ? actor.plan : 'free';
      const team = await createTeam(s, { username: field(req, 'username'), ownerId: actor.accountId, plan });
      return { msg: `Team "${team.username}" created; you are its owner.`, extra: { team } };
    }),
  );

  app.post(`${TEAMS}/:id/members`, (req, reply) =>
    operate(req, reply, TEAMS, async (actor) => {
      const { role, who: username } = roleOf(req, 'username');
      const member = await setMember(s, actor.accountId, { teamId: idParam(req, 'id'), username, role });
      return {
        msg: `${member.username} is now ${role === 'owner' ? 'an' : 'a'} ${role} of the team.`,
        extra: { member },
      };
    }),
  );

  app.post(`${TEAMS}/:id/invites`, (req, reply) =>
    operate(req, reply, TEAMS, async (actor) => {
      const { role, who: email } = roleOf(req, 'email');
      const sent = await inviteToTeam(
        s,
        actor.accountId,
        { teamId: idParam(req, 'id'), email, role },
        (token) => `${s.config.baseUrl}/_/invite/${token}`,
      );
      return {
        msg: `Invitation sent to ${sent.email}: the link in it adds them to ${sent.team.username} as ${sent.role}.`,
        extra: { invitation: { email: sent.email, role: sent.role, team: sent.team.username } },
      };
    }),
  );

  app.get('/_/invite/:token', async (req, reply) => {
    reply.header('cache-control', 'no-store').header('referrer-policy', 'same-origin');
    const token = textParam(req, 'token');
    let invitation: Awaited<ReturnType<typeof invitationOf>>;
    try {
      invitation = await invitationOf(s, token);
    } catch (err) {
      if (!(err instanceof KilnError) || !wantsHtml(req)) throw err;
      return sendPage(reply, invitePage({ token, username: req.actor?.username, error: err.message }), err.status);
    }
    if (!wantsHtml(req)) return { team: invitation.team.username, role: invitation.role, email: invitation.email };
    return sendPage(reply, invitePage({ token, username: req.actor?.username, email: req.actor?.email, invitation }));
  });

  app.post('/_/invite/:token', async (req, reply) => {
    const actor = developer(req, true);
    const joined = await acceptInvite(s, textParam(req, 'token'), actor);
    const msg = joined.already
      ? `You were already in ${joined.team.username} (as ${joined.role}).`
      : `Welcome to ${joined.team.username}: you are ${joined.role === 'owner' ? 'an' : 'a'} ${joined.role}.`;
    const to = allowsTeam(joined.role, 'manage')
      ? `/_/dashboard?team=${encodeURIComponent(joined.team.username)}`
      : TEAMS;
    if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, to, msg, 'success'), 302);
    return reply.send({ msg, msgType: 'success', team: joined.team.username, role: joined.role });
  });

  app.post(`${TEAMS}/:id/members/:person/remove`, (req, reply) =>
    operate(req, reply, TEAMS, async (actor) => {
      await removeMember(s, actor.accountId, idParam(req, 'id'), idParam(req, 'person'));
      return { msg: 'Member removed.' };
    }),
  );
};

export default plugin;
