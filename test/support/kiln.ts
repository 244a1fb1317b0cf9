// Starts a real Kiln on a free port for one test file, on the storage the run selects:
// KILN_TEST_STORAGE=postgres uses a fresh PostgreSQL database (and Redis when KILN_TEST_REDIS_URL is set),
// anything else a fresh SQLite file in a temporary folder.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.ts';
import { startServer, type Running } from '../../src/server.ts';
import type { Clock } from '../../src/clock.ts';
import { Client } from './client.ts';
import { cheapHashesForTests } from '../../src/accounts/passwords.ts';

// The accounts tests make are hashed cheaply (src/accounts/passwords.ts): in this test process only.
cheapHashesForTests();

export const storage = process.env.KILN_TEST_STORAGE === 'postgres' ? 'postgres' : 'sqlite';
const PG_ADMIN_URL = process.env.KILN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestKiln extends Running {
  config: Config;
  /** A client whose requests go to `host` (default: the main app host). */
  client(host?: string): Client;
  /** The document host of a user, e.g. `alice.kiln.localhost:8080`. */
  hostOf(username: string): string;
  stop(): Promise<void>;
}

/** A fresh, empty PostgreSQL database; returns its URL and a function that drops it. */
export async function freshPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `kiln_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  return {
    url,
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function startKiln(opts: { env?: Record<string, string>; clock?: Clock } = {}): Promise<TestKiln> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-test-'));
  const pgdb = storage === 'postgres' ? await freshPostgres() : null;
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(pgdb ? { DATABASE_URL: pgdb.url } : {}),
    ...(pgdb && process.env.KILN_TEST_REDIS_URL ? { REDIS_URL: process.env.KILN_TEST_REDIS_URL } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const running = await startServer(config, opts.clock);
  const port = Number(new URL(running.url).port);
  return {
    ...running,
    config,
    client: (host = config.rootDomain) => new Client(port, host),
    hostOf: (username) => `${username}.${config.rootDomain}`,
    stop: async () => {
      await running.close();
      await pgdb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A clock that runs with real time, moved forward by a test (`advance`) and back (`reset`). */
export function movableClock(): { clock: Clock; advance(ms: number): void; reset(): void } {
  let offsetMs = 0;
  return {
    clock: { now: () => new Date(Date.now() + offsetMs) },
    advance: (ms) => {
      offsetMs += ms;
    },
    reset: () => {
      offsetMs = 0;
    },
  };
}
