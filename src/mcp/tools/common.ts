// What the MCP tools share: how a tool names a document (an account the caller reaches, and a path in its
// tree), how it describes a node to a model, and the schema pieces for both. Every node comes through
// `ctx.nodes.open` (the access table, narrowed by the credential's scope): nothing here decides access.
import { z } from 'zod';
import type { Ctx } from '../../context.ts';
import type { NodeRow, TeamRole } from '../../store/schema.ts';
import { KilnError, notFound, unauthorized } from '../../errors.ts';
import { teamsOf } from '../../teams/teams.ts';
import { documentHostUrl, nodeUrlPath } from '../../core/urls.ts';
import { childPathOf } from '../../nodes/find.ts';
import { listVersions } from '../../save/history.ts';
import type { Action } from '../../access/table.ts';
import type { NodeType } from '../../store/schema.ts';

/** An account the caller reaches: its own, or a team it is a member of. */
export interface Reached {
  id: number;
  username: string;
  kind: 'personal' | 'team';
  /** The caller's role there (`owner` of its own). */
  role: TeamRole;
}

/** The person an agent acts for (401 when nobody: the door lets no such call through). */
export function actorOf(ctx: Pick<Ctx, 'caller'>) {
  const actor = ctx.caller.actor;
  if (!actor) throw unauthorized('Send a key: Authorization: Bearer <key>.', 'missing-key');
  return actor;
}

/** The accounts the caller reaches, its own first (a credential scoped to one account: only that one). */
export async function reachedAccounts(ctx: Pick<Ctx, 'caller' | 'database'>): Promise<Reached[]> {
  const actor = actorOf(ctx);
  const own: Reached = { id: actor.accountId, username: actor.username, kind: 'personal', role: 'owner' };
  const teams = (await teamsOf(ctx, actor.accountId)).map(
    (t): Reached => ({ id: t.id, username: t.username, kind: 'team', role: t.role }),
  );
  const only = ctx.caller.scope?.accountId ?? null;
  return [own, ...teams].filter((a) => only === null || a.id === only);
}

/** The account a tool's `account` names (a username; none: the credential's account, else the caller's own),
 *  or 404 for one the caller does not reach (another person's, a team it is not in). */
export async function accountNamed(ctx: Pick<Ctx, 'caller' | 'database'>, name?: string): Promise<Reached> {
  const actor = actorOf(ctx);
  const wanted = name?.trim().toLowerCase();
  const only = ctx.caller.scope?.accountId ?? null;
  // The caller's own account needs no look-up of its teams (most calls name no account).
  if ((!wanted || wanted === actor.username) && (only === null || only === actor.accountId))
    return { id: actor.accountId, username: actor.username, kind: 'personal', role: 'owner' };
  const reached = await reachedAccounts(ctx);
  const found = wanted ? reached.find((a) => a.username === wanted) : reached[0];
  if (!found) throw notFound(`No account "${name}" that this key reaches: list_documents names them.`);
  return found;
}

/** The node at `path` of the account, opened for `action` through the access table (404 for one that is not
 *  there or not the caller's to see). */
export async function nodeAt(
  ctx: Ctx,
  input: { account?: string; path: string },
  action: Action,
  type?: NodeType,
): Promise<{ node: NodeRow; account: Reached }> {
  const account = await accountNamed(ctx, input.account);
  const path = cleanPath(input.path);
  const node = await ctx.nodes.open({ ownerId: account.id, path }, action, type);
  return { node, account };
}

/** A path as a model may write it: no leading or trailing slash. */
export const cleanPath = (path: string) => path.trim().replace(/^\/+|\/+$/g, '');

export const fullPathOf = (node: Pick<NodeRow, 'path' | 'name'>) => childPathOf(node);

const KIND = { site: 'document', folder: 'folder', upload: 'file' } as const;

/** A node as the tools describe it. */
export function describe(ctx: Pick<Ctx, 'config'>, node: NodeRow, account: { username: string }) {
  const url = node.type === 'folder' ? null : documentHostUrl(ctx.config, account.username) + nodeUrlPath(node);
  return {
    account: account.username,
    path: fullPathOf(node),
    kind: KIND[node.type],
    size: node.size,
    updated: node.modified_at,
    etag: node.checksum,
    visibility: node.visibility,
    url,
  };
}

// ------------------------------------------------------------------ schema pieces

export const accountField = z
  .string()
  .max(64)
  .optional()
  .describe('Username of the account (your own by default; a team you belong to by its name).');

export const pathField = (example: string) =>
  z.string().min(1).max(1024).describe(`Path of the file in the account's tree, e.g. "${example}".`);

export const etagField = z
  .string()
  .max(64)
  .describe('The etag you read the document at (read_document or list_documents answer it).');

export const nodeShape = z.object({
  account: z.string(),
  path: z.string(),
  kind: z.enum(['document', 'folder', 'file']),
  size: z.number(),
  updated: z.string(),
  etag: z.string().nullable(),
  visibility: z.enum(['public', 'private']),
  url: z.string().nullable().describe('Where the document or file is served (null for a folder).'),
});

// ------------------------------------------------------------------ refusals

/** A stale etag's refusal (412 `conflict`) also says who made the current version and when, as the versions
 *  list names them ("alice (browser)", "Claude Code via sync key hcsk_… (alice)"). */
export async function whoChanged<T>(ctx: Pick<Ctx, 'database'>, nodeId: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof KilnError) || err.code !== 'conflict') throw err;
    const [newest] = await listVersions(ctx.database.db, nodeId).catch(() => []);
    if (!newest) throw err;
    const source = newest.savedByAgent ?? newest.savedBy;
    const who = newest.savedByUsername ? `${newest.savedByUsername} (${source})` : source;
    throw new KilnError(
      412,
      `${err.message} The current version was saved by ${who} at ${newest.createdAt}: read the document again and redo your change on it.`,
      'conflict',
      { ...err.extra, changedBy: who, changedAt: newest.createdAt, version: newest.id },
    );
  }
}
