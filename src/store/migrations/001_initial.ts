import { sql, type Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

export function up001(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('accounts')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('username', 'text', (c) => c.notNull().unique())
      .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
      .addColumn('has_active_subscription', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('plan_started_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('people')
      .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text')
      .addColumn('account_type', 'text', (c) => c.notNull())
      .addColumn('is_superadmin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('email_confirmed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('signup_app_id', 'integer')
      .execute();
    await db.schema
      .createTable('sessions')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema
      .createTable('nodes')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('parent_id', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_key', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('public'))
      .addColumn('enable_signups', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('share_token', 'text', (c) => c.unique())
      .addColumn('share_enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('source_node_id', 'integer')
      .addColumn('checksum', 'text')
      .addColumn('size', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('content_type', 'text')
      .addColumn('blob_sha256', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('modified_at', 'text', (c) => c.notNull())
      .addColumn('last_synced_at', 'text')
      .addColumn('saved_by_account_id', 'integer')
      .addColumn('saved_by_writer', 'text')
      .execute();
    // Document names are global (an instance named `<app>-1.html` exists because `<app>.html` is taken);
    // folders and uploads are unique within their parent folder of one account.
    await db.schema
      .createIndex('nodes_site_name')
      .on('nodes')
      .column('name_key')
      .unique()
      .where(sql.ref('type'), '=', 'site')
      .execute();
    await db.schema
      .createIndex('nodes_sibling_name')
      .on('nodes')
      .columns(['owner_id', 'parent_id', 'type', 'name_key'])
      .unique()
      .execute();
    await db.schema.createIndex('nodes_owner').on('nodes').columns(['owner_id', 'parent_id']).execute();
    await db.schema
      .createTable('node_contents')
      .addColumn('node_id', 'integer', (c) => c.primaryKey().references('nodes.id').onDelete('cascade'))
      .addColumn('html', t.bytes, (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('versions')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('node_id', 'integer', (c) => c.notNull().references('nodes.id').onDelete('cascade'))
      .addColumn('backup_number', 'integer', (c) => c.notNull())
      .addColumn('is_diff', 'integer', (c) => c.notNull())
      .addColumn('html', t.bytes)
      .addColumn('diff_content', 'text')
      .addColumn('diff_from_id', 'integer')
      .addColumn('snapshot_id', 'integer')
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('saved_by_kind', 'text', (c) => c.notNull())
      .addColumn('saved_by_account_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('versions_node_backup', ['node_id', 'backup_number'])
      .execute();
    await db.schema
      .createTable('sync_keys')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('key_prefix', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .addColumn('last_used_at', 'text')
      .execute();
    await db.schema
      .createTable('team_memberships')
      .addColumn('team_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('person_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('team_memberships_pk', ['team_id', 'person_id'])
      .execute();
    await db.schema
      .createTable('domains')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('domain', 'text', (c) => c.notNull().unique())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('ssl_status', 'text')
      .addColumn('provider_id', 'text')
      .addColumn('dns_instructions', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('email_tokens')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('account_id', 'integer', (c) => c.references('accounts.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema
      .createTable('webhook_events')
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_events_pk', ['provider', 'event_id'])
      .execute();
  };
}
