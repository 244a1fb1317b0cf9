// Whether DATABASE_URL names a PostgreSQL database that can be opened, said in one line a person can act
// on: checked before anything else starts (`kiln serve` with or without workers), since a worker that
// cannot open its database would only be restarted, again and again, by its primary.
import { limits } from '../limits.ts';

/** Where DATABASE_URL points, without its password. */
function where(url: string): { db: string; at: string } {
  try {
    const u = new URL(url);
    return {
      db: decodeURIComponent(u.pathname.slice(1)) || (u.username ? decodeURIComponent(u.username) : 'postgres'),
      at: u.host || 'localhost',
    };
  } catch {
    return { db: '?', at: '?' };
  }
}

/** The one line for a failure to open DATABASE_URL's database. */
export function databaseProblem(err: unknown, url: string): string {
  const { db, at } = where(url);
  const e = err as { code?: string; message?: string };
  switch (e?.code) {
    case '3D000':
      return `DATABASE_URL names database "${db}" on ${at}, which does not exist: create it (createdb -h <host> -U <user> ${db}, or CREATE DATABASE "${db}"; in psql), or set DATABASE_URL to one that exists.`;
    case '28P01':
    case '28000':
      return `DATABASE_URL: PostgreSQL on ${at} refused the user or password (${e.message}).`;
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
      return `DATABASE_URL: cannot reach PostgreSQL on ${at} (${e.code}): is it running, and is the address right?`;
    default:
      return `DATABASE_URL: cannot open database "${db}" on ${at}: ${e?.message ?? String(err)}`;
  }
}

/** DATABASE_URL's database could not be opened. `lasting`: waiting will not help (no such database, a
 *  refused role); otherwise the server may be starting or restarting. */
export class DatabaseUnavailable extends Error {
  readonly lasting: boolean;
  constructor(message: string, lasting: boolean) {
    super(message);
    this.lasting = lasting;
  }
}

const LASTING = new Set(['3D000', '28P01', '28000', 'ENOTFOUND']);

/** Connects once and ends; throws DatabaseUnavailable (its message from databaseProblem) when that fails. */
export async function assertDatabaseReachable(url: string): Promise<void> {
  // pg is loaded by the PostgreSQL configuration only (test/build.lazy-packages).
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: limits.database.connectMs });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    throw new DatabaseUnavailable(databaseProblem(err, url), LASTING.has((err as { code?: string })?.code ?? ''));
  } finally {
    await client.end().catch(() => {});
  }
}
