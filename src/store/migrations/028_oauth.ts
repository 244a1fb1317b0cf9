import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Kiln as an OAuth 2.1 authorization server for MCP clients (src/oauth/).
 *  `oauth_objects`: what the library (oidc-provider) keeps, one row per object by model and id (its storage
 *  adapter: src/oauth/adapter.ts); a token's id is kept only as its SHA-256, never the token. `expires_at`
 *  drives the sweep, `grant_id` revoking everything of a grant.
 *  `oauth_grants`: Kiln's side of a grant, what the person chose on the consent page (the account or team,
 *  a folder, read-only) and what the account page lists ("connected agents"). */
export function up028OAuth(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('oauth_objects')
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('grant_id', 'text')
      .addColumn('uid', 'text')
      .addColumn('consumed_at', 'integer')
      .addColumn('expires_at', 'text')
      .addPrimaryKeyConstraint('oauth_objects_pk', ['model', 'id'])
      .execute();
    await db.schema.createIndex('oauth_objects_grant').on('oauth_objects').column('grant_id').execute();
    await db.schema.createIndex('oauth_objects_uid').on('oauth_objects').columns(['model', 'uid']).execute();
    await db.schema.createIndex('oauth_objects_expiry').on('oauth_objects').column('expires_at').execute();
    await db.schema
      .createTable('oauth_grants')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('grant_id', 'text', (c) => c.notNull().unique())
      .addColumn('person_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_name', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('folder', 'text')
      .addColumn('read_only', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('oauth_grants_person').on('oauth_grants').column('person_id').execute();
  };
}
