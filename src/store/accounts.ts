// Account lookups shared by several use cases, each taking an executor (the database, or the
// transaction a write runs in).
import type { Kysely } from 'kysely';
import type { DB, TeamRole } from './schema.ts';

/** A person's role in a team, or undefined when they are not a member. */
export async function teamRole(db: Kysely<DB>, teamId: number, personId: number): Promise<TeamRole | undefined> {
  const row = await db
    .selectFrom('team_memberships')
    .select('role')
    .where('team_id', '=', teamId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return row?.role;
}
