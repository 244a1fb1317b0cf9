// The messages store: contact messages of an account's pages.
import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';

export async function insertMessage(
  db: Kysely<DB>,
  m: { ownerId: number; page: string; fields: Record<string, string>; score: number; at: string },
): Promise<number> {
  const r = await db
    .insertInto('messages')
    .values({ owner_id: m.ownerId, page: m.page, fields: JSON.stringify(m.fields), score: m.score, created_at: m.at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

export function messagesOf(db: Kysely<DB>, ownerId: number, limit = 500) {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function unreadCount(db: Kysely<DB>, ownerId: number): Promise<number> {
  const r = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .where('read_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Marks the owner's messages read (all of them, or one); returns how many changed. */
export async function markRead(db: Kysely<DB>, ownerId: number, at: string, id?: number): Promise<number> {
  let q = db.updateTable('messages').set({ read_at: at }).where('owner_id', '=', ownerId).where('read_at', 'is', null);
  if (id !== undefined) q = q.where('id', '=', id);
  return Number((await q.executeTakeFirst()).numUpdatedRows);
}

export async function deleteMessage(db: Kysely<DB>, ownerId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom('messages').where('owner_id', '=', ownerId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}
