// How Kiln's statements travel on a PostgreSQL connection. Each statement is a network round trip, and a
// round trip costs both processes CPU (a wake-up, a read and a write each) beyond the statement's own work:
// - Queries are prepared by name, once per connection, and then only bound (Kysely sends every query
//   unnamed, which PostgreSQL parses and plans on every call).
// - The connection is pipelined (pg's `pipeline` mode): a BEGIN or SAVEPOINT, whose answer nobody reads, is
//   written at once and its answer read with the next statement's, so it rides that statement's round trip.
//   Its error, if any, is the next statement's error.
import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/** Statements sent since the pool opened: `awaited` each cost a round trip of their own; `pipelined` rode the
 *  next one's. */
export interface StatementCounts {
  awaited: number;
  pipelined: number;
}

/** How many statements one PostgreSQL connection keeps prepared. */
const PREPARED_PER_CONNECTION = 200;

/** The statements worth preparing: queries and changes of rows, not transaction control or the migrations' DDL
 *  (run once, they would take the room of the statements sent all day). */
const QUERY = /^\s*(select|insert|update|delete|with)\b/i;

/** Statements that return nothing a caller reads, and are always followed by another on the same connection
 *  (Kysely ends every transaction with COMMIT or ROLLBACK; a savepoint is followed by work or its rollback). */
const PIPELINED = /^(begin|start transaction|savepoint)\b/i;

/** What a pipelined statement answers at once (Kysely reads `rows`, and `command` and `rowCount` for changes). */
const NOTHING = { command: 'PIPELINED', rowCount: null, rows: [] };

/** What each PostgreSQL connection has prepared. */
const prepared = new WeakMap<object, { names: Map<string, string>; renamed: number; inTransaction: boolean }>();

/** Kysely's pool over pg's (created with `pipeline: true`). A prepared `select *` fails once another process's
 *  migration adds a column ("cached plan must not change result type"): the statement is then prepared afresh
 *  under a new name, and sent again when no transaction was open (in one, the transaction is lost already). */
export function postgresPool(pool: pg.Pool, counts: StatementCounts): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      const state = prepared.get(client) ?? { names: new Map<string, string>(), renamed: 0, inTransaction: false };
      prepared.set(client, state);
      const nameOf = (sql: string) => {
        let name = state.names.get(sql);
        if (name === undefined && state.names.size < PREPARED_PER_CONNECTION && QUERY.test(sql)) {
          name = `k${state.renamed}_${createHash('sha256').update(sql).digest('base64url').slice(0, 22)}`;
          state.names.set(sql, name);
        }
        return name;
      };
      const run = async (sql: string, values: unknown[]) => {
        const open = state.inTransaction;
        if (/^(commit|end|rollback)\b(?!\s+to\b)/i.test(sql)) state.inTransaction = false;
        try {
          return await client.query({ text: sql, values, name: nameOf(sql) });
        } catch (err) {
          if ((err as { code?: string }).code !== '0A000' || !/cached plan/.test((err as Error).message)) throw err;
          state.renamed++;
          state.names.clear();
          if (open) throw err;
          return client.query({ text: sql, values, name: nameOf(sql) });
        }
      };
      /** The answers of pipelined statements not read yet. */
      let unread: Promise<unknown> | undefined;
      const send = async (sql: string, values: unknown[]) => {
        if (PIPELINED.test(sql)) {
          if (!/^savepoint/i.test(sql)) state.inTransaction = true;
          const answer = client.query(sql);
          answer.catch(() => {});
          unread = unread ? Promise.all([unread, answer]) : answer;
          counts.pipelined++;
          return NOTHING;
        }
        const before = unread;
        unread = undefined;
        counts.awaited++;
        const answer = run(sql, values);
        if (before) {
          // The pipelined statement's error comes first: it is why this one failed too.
          answer.catch(() => {});
          await before;
        }
        return answer;
      };
      return {
        query: ((sql: string, values: unknown[]) =>
          typeof sql === 'string' ? send(sql, values) : client.query(sql)) as unknown as PostgresPoolClient['query'],
        // A connection handed back with an answer unread is in a state nobody knows: it is closed, not reused.
        release: () => client.release(unread ? new Error('released with a pipelined statement unread') : undefined),
      };
    },
    end: () => pool.end(),
  };
}
