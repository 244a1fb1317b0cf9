// The names MCP clients gave in their handshakes, by credential writer (src/mcp/agent.ts).
import type { Executor } from './schema.ts';

/** Keeps the name a client gave with this credential (the latest wins). */
export async function saveAgentClient(db: Executor, writer: string, name: string, at: string): Promise<void> {
  await db
    .insertInto('agent_clients')
    .values({ writer, name, named_at: at })
    .onConflict((oc) => oc.column('writer').doUpdateSet({ name, named_at: at }))
    .execute();
}

/** The name a client gave with this credential, and when, or undefined. */
export function agentClientOf(db: Executor, writer: string) {
  return db.selectFrom('agent_clients').select(['name', 'named_at']).where('writer', '=', writer).executeTakeFirst();
}
