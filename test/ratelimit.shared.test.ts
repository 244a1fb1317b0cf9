// Rate limits shared by two Kiln processes (`node bin/kiln.js serve` children) on one PostgreSQL and one
// Redis: requests from one address spread over both processes count into the same windows. Runs only
// with KILN_TEST_STORAGE=postgres (which brings Redis).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { storage, freshPostgres } from './support/kiln.ts';
import { spawnKilns, type ChildKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { newPerson } from './support/people.ts';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';

const REDIS_URL = process.env.KILN_TEST_REDIS_URL;
const skip =
  storage === 'postgres' && REDIS_URL
    ? false
    : 'a limiter shared by two processes needs PostgreSQL and Redis: run with KILN_TEST_STORAGE=postgres (bash scripts/test.sh)';

const ROOT = 'kiln.localhost:8080';
let a: ChildKiln;
let b: ChildKiln;
let dropDb: (() => Promise<void>) | undefined;
const dirs: string[] = [];
let existing: { email: string; password: string };

before(async () => {
  if (skip) return;
  const pgdb = await freshPostgres();
  dropDb = pgdb.drop;
  const env = (dir: string) => ({
    DATABASE_URL: pgdb.url,
    REDIS_URL: REDIS_URL!,
    DATA_DIR: dir,
    ROOT_DOMAIN: ROOT,
    LOG_LEVEL: 'error',
  });
  for (let i = 0; i < 3; i++) dirs.push(mkdtempSync(path.join(os.tmpdir(), 'kiln-rl-')));
  const setup = await createServices(loadConfig(env(dirs[2])));
  try {
    const input = newPerson();
    await createPerson(setup, input);
    existing = { email: input.email, password: input.password };
  } finally {
    await closeServices(setup);
  }
  [a, b] = await spawnKilns([env(dirs[0]), env(dirs[1])]);
});

after(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await dropDb?.();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Two clients, one per process, connecting from one address (one visitor behind a load balancer). */
function visitor(): [Client, Client] {
  const onA = new Client(a.port, ROOT);
  const onB = new Client(b.port, ROOT);
  onB.address = onA.address;
  return [onA, onB];
}

/** A failed sign-in (a form submission the general limiter counts; viewing the form does not), each
 *  with its own email so the login limiter stays out of the way. */
const failedLogin = (c: Client) =>
  c.post('/_/login', {
    email: `nobody-${Math.random().toString(36).slice(2)}@example.com`,
    password: 'whatever-it-is',
  });

test('general limiter: 100 submissions spread over two processes exhaust one window; the 101st is refused on either', {
  skip,
}, async () => {
  const [onA, onB] = visitor();
  for (let i = 1; i <= 100; i++) {
    const res = await failedLogin(i % 2 ? onA : onB);
    assert.equal(res.status, 401, `request ${i}`);
    assert.equal(
      res.headers['ratelimit-remaining'],
      String(100 - i),
      `request ${i} counted once, in one shared window`,
    );
  }
  for (const c of [onA, onB]) {
    const res = await failedLogin(c);
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers['retry-after']) > 0);
    assert.equal(res.headers['ratelimit-remaining'], '0');
  }
  // Another address still has its whole window on both.
  const [otherA, otherB] = visitor();
  assert.equal((await failedLogin(otherA)).headers['ratelimit-remaining'], '99');
  assert.equal((await failedLogin(otherB)).headers['ratelimit-remaining'], '98');
});

test('strict limiter: 3 signups on one process and 2 on the other use up the hour; concurrent attempts are counted exactly', {
  skip,
}, async () => {
  const [onA, onB] = visitor();
  const signup = (c: Client) => {
    const p = newPerson();
    return c.post('/_/signup', { email: p.email, username: p.username, password: p.password });
  };
  for (const c of [onA, onA, onA, onB, onB]) assert.equal((await signup(c)).status, 201);
  assert.equal((await signup(onA)).status, 429);
  assert.equal((await signup(onB)).status, 429);

  // Ten simultaneous attempts from a fresh address, five to each process: exactly five get through.
  const [freshA, freshB] = visitor();
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => signup(i % 2 ? freshA : freshB)));
  assert.deepEqual(answers.map((r) => r.status).sort(), [201, 201, 201, 201, 201, 429, 429, 429, 429, 429]);
});

test('login attempts (20 per 15 minutes per address and email) are shared too', { skip }, async () => {
  const [onA, onB] = visitor();
  for (let i = 1; i <= 20; i++) {
    const res = await (i % 2 ? onA : onB).post('/_/login', { email: existing.email, password: `wrong-${i}` });
    assert.equal(res.status, 401, `attempt ${i}`);
  }
  const refused = await onA.post('/_/login', { email: existing.email, password: existing.password });
  assert.equal(refused.status, 429);
  assert.equal((await onB.post('/_/login', { email: existing.email, password: existing.password })).status, 429);
});
