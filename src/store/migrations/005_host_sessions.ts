import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Host-scoped sessions (the main app's cookie no longer covers document hosts):
 *  - `sessions.host`: null for a main-app session (a "login"), else the one document host (custom
 *    domain or `<username>.<root>`) the session was minted for; `sessions.login_id`: the login a host
 *    session belongs to, so that signing out ends them all.
 *  - `session_grants`: single-use, short-lived tokens that carry a login to one document host.
 *  - `instance_settings`: values shared by every process (the instance secret that signs messages). */
export function up005HostSessions(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('sessions').addColumn('host', 'text').execute();
    await db.schema.alterTable('sessions').addColumn('login_id', 'integer').execute();
    await db.schema.createIndex('sessions_login').on('sessions').column('login_id').execute();
    await db.schema
      .createTable('session_grants')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('login_id', 'integer', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema
      .createTable('instance_settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  };
}
