import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Team invitations by email: a one-time link (kept as a SHA-256 hash) that adds whoever opens it,
 *  signed in with that email, to the team with the role chosen by the owner who sent it. */
export function up006TeamInvites(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('team_invites')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('team_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('invited_by', 'integer', (c) => c.references('accounts.id').onDelete('set null'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('team_invites_team').on('team_invites').column('team_id').execute();
  };
}
