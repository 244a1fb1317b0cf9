import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** The name an MCP client gave in its handshake, by the credential it came with (`akey:7`, `key:3`, `oauth:2`):
 *  a 2025-protocol client names itself only in `initialize`, and behind a balancer its later calls reach other
 *  processes, which name its writes from here (src/mcp/agent.ts). */
export function up029AgentClients(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema
      .createTable('agent_clients')
      .addColumn('writer', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('named_at', 'text', (c) => c.notNull())
      .execute();
  };
}
