// Every way PostgreSQL says "not now" answers 503 storage-unavailable with Retry-After (#26.1), never 500, for
// a browser save and a sync write alike, and Kiln serves again by itself once it passes: the database
// refusing new connections (ALLOW_CONNECTIONS false: 55000), too many connections (a role's limit:
// 53300), a read-only database where a primary was expected (a standby or recovery: 25006, reads still
// answer), connections that time out (a link that passes nothing), and connections dropped.
// Kiln connects as a role of its own (owner of its database), as an operator would run it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startKiln, storage, freshPostgres, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import type { Client } from './support/client.ts';
import { until } from './support/wait.ts';

const skip = storage !== 'postgres' && "these are PostgreSQL's refusals (SQLite is in the process)";
let kiln: TestKiln;
let proxy: TcpProxy;
let db: { url: string; drop(): Promise<void> };
let admin: pg.Client;
let dbName: string;
const role = `kiln_r_${process.pid}_${randomBytes(3).toString('hex')}`;

before(async () => {
  if (skip) return;
  db = await freshPostgres();
  const u = new URL(db.url);
  dbName = u.pathname.slice(1);
  // The administrator works from another database (the one Kiln's database was made from).
  admin = new pg.Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
  admin.on('error', () => {});
  await admin.connect();
  await admin.query(`CREATE ROLE ${role} LOGIN`);
  await admin.query(`ALTER DATABASE ${dbName} OWNER TO ${role}`);
  const inDb = new pg.Client({ connectionString: db.url });
  await inDb.connect();
  await inDb.query(`ALTER SCHEMA public OWNER TO ${role}`);
  await inDb.end();
  proxy = await startTcpProxy(u.hostname, Number(u.port || 5432));
  u.host = `127.0.0.1:${proxy.port}`;
  u.username = role;
  kiln = await startKiln({ env: { DATABASE_URL: u.toString() } });
});
after(async () => {
  if (skip) return;
  await kiln?.stop();
  await proxy?.close();
  await db?.drop();
  await admin?.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
  await admin?.end();
});

const doc = (n: number) => `<!DOCTYPE html><html><body><p>save ${n}</p></body></html>`;

/** Ends Kiln's open connections to its database: the next query needs a new one. */
async function endKilnConnections() {
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]);
}

async function owner() {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.hostOf(me.username);
  const name = `refused-${me.username}.html`;
  const node = await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc(0),
  });
  const { key } = await createSyncKey(kiln.services, me.id);
  const save = (c: Client, n: number) =>
    c.post('/_/save', doc(n), {
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/${name}` },
    });
  const syncWrite = (n: number) =>
    kiln.client().request('PUT', `/_/sync/nodes/${node.id}/content`, {
      headers: { 'x-api-key': key },
      body: { content: doc(n) },
    });
  return { page: main.on(host), host, name, save, syncWrite };
}

/** Both writers meet the condition: 503 storage-unavailable with Retry-After (retried while connections
 *  Kiln already held end), then both work again once `lift` ends it. */
async function refusedThenBack(
  start: () => Promise<void>,
  lift: () => Promise<void>,
  during: (o: Awaited<ReturnType<typeof owner>>) => Promise<void> = async () => {
    assert.equal((await kiln.client().get('/_/ready')).status, 503, '/_/ready says so');
  },
) {
  const o = await owner();
  assert.equal((await o.save(o.page, 1)).status, 200);
  await start();
  // Whatever fails below, the condition is lifted: the tests after this one need the database back.
  try {
    await meetCondition(o, during);
  } finally {
    await lift();
  }
  await until(async () => (await o.save(o.page, 4)).status === 200, { what: 'saves again', every: 100 });
  assert.equal((await o.syncWrite(5)).status, 200);
}

async function meetCondition(
  o: Awaited<ReturnType<typeof owner>>,
  during: (o: Awaited<ReturnType<typeof owner>>) => Promise<void>,
) {
  await endKilnConnections();
  const refused = await until(
    async () => {
      const r = await o.save(o.page, 2);
      assert.notEqual(r.status, 500, r.text);
      return r.status === 503 && r;
    },
    { what: 'a save to meet the refusal' },
  );
  assert.equal(refused.json.code, 'storage-unavailable');
  assert.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After');
  const sync = await o.syncWrite(3);
  assert.equal(sync.status, 503, sync.text);
  assert.equal(sync.json.code, 'storage-unavailable');
  assert.ok(Number(sync.headers['retry-after']) > 0);
  await during(o);
}

test('the database refuses new connections (ALLOW_CONNECTIONS false): 503, then back', { skip }, async () => {
  await refusedThenBack(
    () => admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`).then(() => {}),
    () => admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`).then(() => {}),
  );
});

test("too many connections (the role's limit reached): 503, then back", { skip }, async () => {
  await refusedThenBack(
    () => admin.query(`ALTER ROLE ${role} CONNECTION LIMIT 0`).then(() => {}),
    () => admin.query(`ALTER ROLE ${role} CONNECTION LIMIT -1`).then(() => {}),
  );
});

test('a read-only database (a standby where the primary was): writes 503, documents still served', {
  skip,
}, async () => {
  await refusedThenBack(
    () => admin.query(`ALTER DATABASE ${dbName} SET default_transaction_read_only = on`).then(() => {}),
    async () => {
      await admin.query(`ALTER DATABASE ${dbName} RESET default_transaction_read_only`);
      await endKilnConnections();
    },
    async (o) => {
      // Reading still works: the page is served, to a visitor and to its owner. (A read may meet a connection
      // that endKilnConnections is still terminating, 503 like any dropped one; the next is served.)
      await until(async () => (await kiln.client(o.host).get(`/${o.name}`)).status === 200, {
        what: 'the page served to a visitor',
      });
      await until(async () => (await o.page.get(`/${o.name}`)).status === 200, {
        what: 'the page served to its owner',
      });
    },
  );
});

test('connections that time out (a link that passes nothing) and dropped ones: 503, then back', {
  skip,
  timeout: 60_000,
}, async () => {
  await refusedThenBack(
    async () => {
      proxy.cut();
      proxy.restore();
      proxy.deafen();
    },
    async () => {
      proxy.hear();
      proxy.cut();
      proxy.restore();
    },
  );
  await refusedThenBack(
    async () => proxy.cut(),
    async () => proxy.restore(),
  );
});
