// The activity store: one row per change of an account's tree, written where the change events are
// published (src/events/publish.ts), read for the dashboard and GET /_/activity, swept after 90 days.
import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';
import { agentKeyWriter } from './agent-keys.ts';
import { oauthWriterRow } from './oauth.ts';

export interface ActivityRow {
  ownerId: number;
  at: string;
  kind: string;
  nodeId: number | null;
  nodeType: string | null;
  path: string;
  oldPath?: string | null;
  writer: string | null;
  client?: string | null;
  detail?: string | null;
}

export async function recordActivity(db: Kysely<DB>, r: ActivityRow): Promise<void> {
  await db.insertInto('activity').values(activityValues(r)).execute();
}

/** The activity row of a line. */
export function activityValues(r: ActivityRow) {
  return {
    owner_id: r.ownerId,
    at: r.at,
    kind: r.kind,
    node_id: r.nodeId,
    node_type: r.nodeType,
    path: r.path,
    old_path: r.oldPath ?? null,
    writer: r.writer,
    client: r.client ?? null,
    detail: r.detail ?? null,
  };
}

/** The newest activity of an owner. */
export function activityOf(db: Kysely<DB>, ownerId: number, limit: number) {
  return db
    .selectFrom('activity')
    .select(['at', 'kind', 'node_type', 'path', 'old_path', 'writer', 'client', 'detail'])
    .where('owner_id', '=', ownerId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Who a writer id names: the account and, for a key, its prefix; for an OAuth grant, the client's name. */
export async function writerOf(
  db: Kysely<DB>,
  writer: string,
): Promise<{
  username: string;
  keyPrefix?: string;
  keyName?: string;
  admin?: boolean;
  appUser?: boolean;
  agent?: string;
} | null> {
  // An agent writes as its credential's writer (`agent:akey:12`): the person behind that.
  if (writer.startsWith('agent:')) return writerOf(db, writer.slice(6));
  const [kind, rawId] = writer.split(':');
  const id = Number(rawId);
  if (!Number.isSafeInteger(id)) return null;
  if (kind === 'session') {
    const r = await db
      .selectFrom('sessions')
      .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
      .leftJoin('people', 'people.account_id', 'accounts.id')
      .select(['accounts.username', 'people.account_type'])
      .where('sessions.id', '=', id)
      .executeTakeFirst();
    return r ? { username: r.username, appUser: r.account_type === 'app_user' } : null;
  }
  if (kind === 'admin') {
    const r = await db.selectFrom('accounts').select('username').where('id', '=', id).executeTakeFirst();
    return r ? { username: r.username, admin: true } : null;
  }
  if (kind === 'akey') {
    const r = await agentKeyWriter(db, id);
    return r ? { username: r.username, keyPrefix: r.key_prefix, keyName: r.name } : null;
  }
  if (kind === 'key') {
    const r = await db
      .selectFrom('sync_keys')
      .innerJoin('accounts', 'accounts.id', 'sync_keys.account_id')
      .select(['accounts.username', 'sync_keys.key_prefix'])
      .where('sync_keys.id', '=', id)
      .executeTakeFirst();
    return r ? { username: r.username, keyPrefix: r.key_prefix } : null;
  }
  if (kind === 'oauth') {
    const r = await oauthWriterRow(db, id);
    return r ? { username: r.username, agent: r.client_name } : null;
  }
  return null;
}

export async function sweepActivity(db: Kysely<DB>, before: string): Promise<void> {
  await db.deleteFrom('activity').where('at', '<', before).execute();
}
