// Agent keys: `hcak_` + 64 hex (32 random bytes), made on the account page ("Connect an agent") for one agent,
// shown once; only a SHA-256 hash is kept. Each is narrowed below what its person may (the caller's `Scope`,
// src/access/caller.ts): one account (the person's own, or one team they belong to), optionally one folder of
// it, optionally reads only; and it expires (7, 30, 90 or 365 days; 90 unless chosen). It acts as its person on
// the doors that take keys (src/http/auth.ts): `ctx.nodes` keeps it inside its scope, and the access table
// judges the person, so a key never does more than its person could (a team viewer's key never writes the
// team's files). Revoked, expired, its person suspended, or (a team's key) its person no longer a member: it is
// refused on its next call.
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import type { Scope } from '../access/caller.ts';
import type { Database } from '../store/db.ts';
import type { TeamRole } from '../store/schema.ts';
import { personRow, teamRole } from '../store/accounts.ts';
import { activeAgentKeyCount, agentKeyByHash, agentKeysOf, insertAgentKey } from '../store/agent-keys.ts';
import { revokeKeyRow, touchKeyRow } from '../store/key-rows.ts';
import { randomHex, type Clock } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { KilnError, badRequest, forbidden, notFound, unauthorized } from '../errors.ts';
import { limits, DAY, MINUTE } from '../limits.ts';
import { actorOfPerson } from '../accounts/actors.ts';
import { signedIn } from '../nodes/manage.ts';
import { childPathOf } from '../nodes/find.ts';
import { teamsOf } from '../teams/teams.ts';
import { grants, revokeGrants } from '../events/revocations.ts';
import { assertMcpOn, mcpClosedFor } from './gate.ts';
import { connectLines } from './connect.ts';

export const AGENT_KEY_PREFIX = 'hcak_';
const KEY_SHAPE = /^hcak_[0-9a-f]{64}$/;

/** True when the credential is an agent key by its prefix (its shape and worth are `resolveAgentKey`'s). */
export const isAgentKey = (key: string) => key.startsWith(AGENT_KEY_PREFIX);

export type AgentKeyState = 'active' | 'expired' | 'revoked';

export interface AgentKeyInfo {
  id: number;
  name: string;
  /** The first 12 characters (`hcak_` + 7 hex): how the page names a key beside its name. */
  prefix: string;
  readOnly: boolean;
  /** The account it reaches. */
  account: { id: number; username: string; kind: 'personal' | 'team' };
  /** Only at or below this folder of that account (where it is now); null: all of it. */
  folder: string | null;
  /** Its folder was deleted (or left the account): the key reaches nothing any more. */
  folderGone: boolean;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  state: AgentKeyState;
}

/** The accounts the signed-in person may make a key for: their own, then each team they belong to (with
 *  their role there: a viewer's key reads only, whatever it says). */
export async function agentKeyAccounts(ctx: Ctx) {
  const me = keyMaker(ctx);
  const own = { id: me.accountId, username: me.username, kind: 'personal' as const, role: 'owner' as TeamRole };
  const teams = (await teamsOf(ctx, me.accountId)).map((t) => ({
    id: t.id,
    username: t.username,
    kind: 'team' as const,
    role: t.role,
  }));
  return [own, ...teams];
}

/** The person making or changing keys: signed in (a session: no key makes keys, not even a wider one). */
function keyMaker(ctx: Ctx): Actor {
  const me = signedIn(ctx, 'manage');
  if (ctx.caller.via !== 'session')
    throw forbidden('Agent keys are made and revoked on the account page, signed in.', 'key-scope');
  return me;
}

/** `notes/2026/` → `notes/2026`; empty → null. */
function folderInput(folder: string | undefined): string | null {
  const trimmed = (folder ?? '').trim().replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? null : trimmed;
}

/** Makes a key; the raw key is answered once and never stored. */
export async function createAgentKey(
  ctx: Ctx,
  input: { name: string; readOnly: boolean; accountId: number; folder?: string; days: number },
): Promise<{ key: string; info: AgentKeyInfo }> {
  const me = keyMaker(ctx);
  assertMcpOn(ctx);
  const name = input.name.trim();
  if (!name) throw badRequest('Give the key a name: the agent or machine it is for ("laptop", "Cursor").', 'invalid');
  if (name.length > limits.agentKeys.nameLength)
    throw badRequest(`A key's name is at most ${limits.agentKeys.nameLength} characters.`, 'too-long');
  const days = limits.agentKeys.lifetimesDays.find((d) => d === input.days);
  if (!days)
    throw badRequest(`A key lasts ${limits.agentKeys.lifetimesDays.join(', ')} days; choose one of these.`, 'invalid');
  const account = (await agentKeyAccounts(ctx)).find((a) => a.id === input.accountId);
  if (!account) throw notFound('No such team, or you are not a member of it.');
  let folder = folderInput(input.folder);
  let folderId: number | null = null;
  if (folder !== null) {
    // Only a folder the person sees (the table), as it is spelled in the tree.
    const node = await ctx.nodes.open({ ownerId: account.id, path: folder }, 'view', 'folder').catch((err) => {
      if (err instanceof KilnError && err.status === 404)
        throw badRequest(`There is no folder "${folder}" in ${account.username}.`, 'invalid');
      throw err;
    });
    folder = childPathOf(node);
    folderId = node.id;
  }
  const { db } = ctx.database;
  const now = ctx.clock.now();
  if ((await activeAgentKeyCount(db, me.accountId, now.toISOString())) >= limits.agentKeys.perPerson)
    throw forbidden(
      `You have ${limits.agentKeys.perPerson} active agent keys, the most one person may hold: revoke one you no longer use first.`,
      'quota-exceeded',
    );
  const key = AGENT_KEY_PREFIX + randomHex(32);
  const row = {
    account_id: me.accountId,
    name,
    key_hash: sha256(key),
    key_prefix: key.slice(0, 12),
    read_only: input.readOnly ? (1 as const) : (0 as const),
    scope_account_id: account.id,
    folder,
    folder_id: folderId,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + days * DAY).toISOString(),
    last_used_at: null,
    revoked_at: null,
  };
  const id = await insertAgentKey(db, row);
  const info = (await listAgentKeys(ctx)).find((k) => k.id === id);
  if (!info) throw new Error(`agent key ${id} is not listed after it was made`);
  return { key, info };
}

type KeyRow = Awaited<ReturnType<typeof agentKeysOf>>[number];

/** Where a key's folder is now (it follows renames and moves); `gone` when it was deleted or left the account. */
function folderNow(
  r: Pick<KeyRow, 'folder' | 'folder_path' | 'folder_name' | 'folder_owner' | 'folder_trashed_at'> & {
    scope_account_id: number;
  },
): { folder: string | null; gone: boolean } {
  if (r.folder === null) return { folder: null, gone: false };
  if (r.folder_name === null || r.folder_path === null || r.folder_trashed_at !== null)
    return { folder: r.folder, gone: true };
  if (r.folder_owner !== null && r.folder_owner !== r.scope_account_id) return { folder: r.folder, gone: true };
  return { folder: childPathOf({ path: r.folder_path, name: r.folder_name }), gone: false };
}

function infoOf(r: Omit<KeyRow, 'scope_kind'> & { scope_kind: string }, now: Date): AgentKeyInfo {
  const at = now.toISOString();
  const { folder, gone } = folderNow(r);
  return {
    id: r.id,
    name: r.name,
    prefix: r.key_prefix,
    readOnly: r.read_only === 1,
    account: {
      id: r.scope_account_id,
      username: r.scope_username,
      kind: r.scope_kind === 'team' ? 'team' : 'personal',
    },
    folder,
    folderGone: gone,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
    state: r.revoked_at !== null ? 'revoked' : r.expires_at <= at ? 'expired' : 'active',
  };
}

/** The signed-in person's keys, newest first (never a key itself). */
export async function listAgentKeys(ctx: Ctx): Promise<AgentKeyInfo[]> {
  const me = keyMaker(ctx);
  const now = ctx.clock.now();
  return (await agentKeysOf(ctx.database.db, me.accountId)).map((r) => infoOf(r, now));
}

/** Revokes one of the person's keys: its next call is refused (401 `revoked-key`). `revoked` is false when it
 *  was revoked or expired already; 404 when it is not theirs. */
export async function revokeAgentKey(
  ctx: Ctx,
  input: { id: number },
): Promise<{ key: AgentKeyInfo; revoked: boolean }> {
  const me = keyMaker(ctx);
  const key = (await listAgentKeys(ctx)).find((k) => k.id === input.id);
  if (!key) throw notFound('No such key.');
  if (key.state !== 'active') return { key, revoked: false };
  const revoked = await revokeKeyRow(
    ctx.database.db,
    'agent_keys',
    me.accountId,
    key.id,
    ctx.clock.now().toISOString(),
  );
  // Anything held open on it ends too (an MCP answer streaming progress).
  if (revoked) await revokeGrants(ctx, [grants.agentKey(key.id)]);
  return { key: { ...key, state: revoked ? 'revoked' : key.state }, revoked };
}

// ------------------------------------------------------------------ resolving a key a request carries

/** What an agent key resolves into: its person (the actor, writer `akey:<id>`, `grantName` the key's name), the
 *  scope it narrows them to, and (a team's key) their role in that team, looked up now. */
export interface ResolvedAgentKey {
  actor: Actor;
  scope: Scope;
  team: { id: number; role: TeamRole } | null;
}

/** The key behind a credential, or its refusal: 401 `invalid-key` (malformed, unknown), `revoked-key`
 *  (revoked; a team's key whose person left the team), `expired-key`; 403 `account-suspended`. */
export async function resolveAgentKey(
  s: { database: Pick<Database, 'db'>; clock: Clock },
  key: string,
): Promise<ResolvedAgentKey> {
  const { db } = s.database;
  if (!KEY_SHAPE.test(key)) throw unauthorized('That agent key is not valid.', 'invalid-key');
  const row = await agentKeyByHash(db, sha256(key));
  if (!row) throw unauthorized('That agent key is not valid.', 'invalid-key');
  if (row.revoked_at !== null) throw unauthorized('That agent key was revoked.', 'revoked-key');
  const now = s.clock.now();
  if (row.expires_at <= now.toISOString())
    throw unauthorized('That agent key has expired; make a new one on your account page.', 'expired-key');
  const person = await personRow(db, { id: row.account_id });
  if (person?.suspended_at)
    throw forbidden('This account is suspended; its agent keys do not work.', 'account-suspended');
  const actor = person && actorOfPerson(person, `akey:${row.id}`);
  if (!actor) throw unauthorized('That agent key is not valid.', 'invalid-key');
  actor.grantName = row.name;
  let team: ResolvedAgentKey['team'] = null;
  if (row.scope_account_id !== row.account_id) {
    // A team's key works while its person is a member: asked on every call, so leaving ends it at once.
    const role = await teamRole(db, row.scope_account_id, row.account_id);
    if (!role)
      throw unauthorized(
        `This agent key was made for the team "${row.scope_username}", and you are no longer a member of it.`,
        'revoked-key',
      );
    team = { id: row.scope_account_id, role };
  }
  const { folder, gone } = folderNow(row);
  if (gone) throw unauthorized(`The folder this agent key was made for ("${row.folder}") is gone.`, 'revoked-key');
  // "Last used" for the account page, written at most once a minute per key (not a write per call).
  if (row.last_used_at === null || Date.parse(row.last_used_at) < now.getTime() - MINUTE)
    void touchKeyRow(db, 'agent_keys', row.id, now.toISOString()).catch(() => {});
  return { actor, scope: { accountId: row.scope_account_id, folder, readOnly: row.read_only === 1 }, team };
}

/** The agent key the caller came with (for naming an agent's writes: "Claude Code via laptop key"), or null
 *  (a session, a sync key, nobody). */
export function agentGrantOf(ctx: Pick<Ctx, 'caller'>): { id: string; name: string } | null {
  const actor = ctx.caller.actor;
  if (ctx.caller.via !== 'key' || !actor?.writer.startsWith('akey:')) return null;
  return { id: actor.writer, name: actor.grantName ?? actor.writer };
}

/** The account page's "Connect an agent": the person's keys, the accounts a key may reach, the lifetimes to
 *  choose from, and why no key can be made now (agents off for this Kiln or the plan), or null. */
export async function agentsPanel(ctx: Ctx) {
  const keys = await listAgentKeys(ctx);
  const accounts = await agentKeyAccounts(ctx);
  const { lifetimesDays, defaultDays } = limits.agentKeys;
  return { keys, accounts, lifetimesDays, defaultDays, closed: mcpClosedFor(ctx) };
}

/** The key a browser was handed a moment ago (its id and the key, from the page's cookie), when it is still
 *  one of the person's active keys: the page shows it once, with the lines to connect an agent. */
export function freshAgentKey(keys: AgentKeyInfo[], id: number, key: string, baseUrl: string) {
  const listed = keys.find((k) => k.id === id && k.state === 'active' && key.startsWith(k.prefix));
  return listed && KEY_SHAPE.test(key) ? { key, info: listed, connect: connectLines(baseUrl, key) } : undefined;
}
