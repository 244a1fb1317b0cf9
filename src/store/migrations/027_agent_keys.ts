import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Agent keys (`hcak_`, src/agents/keys.ts): made on the account page for an agent (MCP), each narrowed to one
 *  account (the person's own or a team's), optionally one folder of it, and optionally to reads. Only a SHA-256
 *  of the key is kept, like sync keys. */
export function up027AgentKeys(t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('agent_keys')
      .addColumn('id', t.idType, t.idColumn)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('key_prefix', 'text', (c) => c.notNull())
      .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('scope_account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('folder', 'text')
      // The folder itself: the key follows it when it is renamed or moved, and stops when it is gone.
      .addColumn('folder_id', 'integer', (c) => c.references('nodes.id').onDelete('set null'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('agent_keys_account').on('agent_keys').column('account_id').execute();
  };
}
