// PostgreSQL goes away under load (every connection cut, new ones refused) and comes back: Kiln stays
// up, answers writes 503 storage-unavailable with Retry-After (never 200 for what did not commit, never
// 500), /_/ready says 503 while /_/health stays 200, and it serves again by itself once the database
// is back, with every acknowledged save present. While it is away, public documents this process
// served lately still answer (to visitors and to their signed-in owner alike); private ones never do.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, freshPostgres, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { createNode } from '../src/nodes/tree.ts';
import type { Client } from './support/client.ts';
import { until } from './support/wait.ts';

const skip = storage !== 'postgres' && 'the database outage is a PostgreSQL one (SQLite is in the process)';
let kiln: TestKiln;
let proxy: TcpProxy;
let db: { url: string; drop(): Promise<void> };

before(async () => {
  if (skip) return;
  db = await freshPostgres();
  const u = new URL(db.url);
  proxy = await startTcpProxy(u.hostname, Number(u.port || 5432));
  u.host = `127.0.0.1:${proxy.port}`;
  kiln = await startKiln({ env: { DATABASE_URL: u.toString() } });
});
after(async () => {
  if (skip) return;
  await kiln?.stop();
  await proxy?.close();
  await db?.drop();
});

const doc = (n: number) => `<!DOCTYPE html><html><body><p>save ${n}</p></body></html>`;

function save(c: Client, host: string, name: string, n: number) {
  return c.post('/_/save', doc(n), {
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/${name}` },
  });
}

test('a database outage under a save loop: 503s while it lasts, the process stays up, serving resumes by itself', {
  skip,
  timeout: 120_000,
}, async (t) => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  const name = 'outage.html';
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc(0),
  });
  const owner = main.on(host);

  let n = 0;
  let lastAcknowledged = 0;
  const statuses = new Map<number, number>();
  let running = true;
  // A failure leaves the database reachable for the tests after this one.
  t.after(() => {
    running = false;
    proxy.restore();
  });
  const loop = (async () => {
    while (running) {
      const i = ++n;
      const res = await save(owner, host, name, i).catch(() => null);
      const status = res?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 200) lastAcknowledged = Math.max(lastAcknowledged, i);
      if (status === 503) {
        // A save whose COMMIT was on its way when the link dropped cannot be read back while the database
        // is away: 'outcome-unknown' is then the true answer (#26.2); any other refusal is 'storage-unavailable'.
        assert.ok(['storage-unavailable', 'outcome-unknown'].includes(res!.json.code), res!.text);
        assert.ok(Number(res!.headers['retry-after']) > 0);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  // (A failed check in the loop ends the waits below at once.)
  let loopError: unknown = null;
  loop.catch((err) => (loopError = err));
  const loopSees = (cond: () => boolean) => () => {
    if (loopError) throw loopError;
    return cond();
  };

  await until(
    loopSees(() => lastAcknowledged >= 3),
    { what: 'saves acknowledged before the outage' },
  );
  assert.equal((await kiln.client().get('/_/ready')).status, 200);
  proxy.cut();
  // The loop's saves meet the outage, and the readiness check says so.
  await until(
    loopSees(() => (statuses.get(503) ?? 0) > 0),
    { what: 'a save of the loop to meet the outage' },
  );
  const ready = await until(
    async () => {
      const r = await kiln.client().get('/_/ready');
      return r.status === 503 && r;
    },
    { what: '/_/ready to answer 503' },
  );
  assert.equal(ready.json.checks.database, 'unavailable');
  assert.equal((await kiln.client().get('/_/health')).status, 200, 'the process is alive');
  const during = await save(owner, host, name, 999_999);
  assert.equal(during.status, 503, during.text);
  assert.equal(during.json.code, 'storage-unavailable');

  proxy.restore();
  const back = Date.now();
  await until(async () => (await kiln.client().get('/_/ready')).status === 200, {
    what: 'ready again once the database is back',
    every: 100,
  });
  // The issue asks for 2 s; measured (not asserted: a loaded CI machine is slower) and reported.
  t.diagnostic(`ready again ${Date.now() - back} ms after the database returned`);
  // And the loop's saves are acknowledged again.
  const recovered = n;
  await until(
    loopSees(() => lastAcknowledged > recovered),
    { what: 'a save acknowledged after the database returned' },
  );
  running = false;
  await loop;

  assert.ok((statuses.get(503) ?? 0) > 0, `some saves met the outage: ${JSON.stringify([...statuses])}`);
  assert.equal(statuses.get(500) ?? 0, 0, `never a 500: ${JSON.stringify([...statuses])}`);
  assert.ok(lastAcknowledged > 0);
  // The newest acknowledged save is what is served (nothing acknowledged was lost).
  const served = (await kiln.client(host).get(`/${name}`)).text;
  const servedN = Number(/save (\d+)/.exec(served)?.[1]);
  assert.ok(servedN >= lastAcknowledged, `served save ${servedN}, last acknowledged ${lastAcknowledged}`);
  assert.notEqual(servedN, 999_999, 'the save refused during the outage was not written');
});

test('while the database is away, public documents served lately still answer; private and unseen ones answer 503', {
  skip,
  timeout: 60_000,
}, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  const pub = '<!DOCTYPE html><html><body><p>public</p></body></html>';
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'index.html',
    html: pub,
  });
  const secret = await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'secret.html',
    html: '<p>secret</p>',
  });
  await kiln.services.database.db
    .updateTable('nodes')
    .set({ visibility: 'private' })
    .where('id', '=', secret.id)
    .execute();
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'unseen.html',
    html: '<p>unseen</p>',
  });
  const owner = await main.enter(host);
  const visitor = kiln.client(host);
  assert.equal((await visitor.get('/')).text, pub);
  assert.equal((await owner.get('/secret.html')).status, 200);
  // Past the host cache's 5 s (HOST_CACHE_MS): the host too must come from what was seen. A wait on purpose: that
  // cache keeps real time (src/server.ts gives it no clock a test could move).
  await new Promise((r) => setTimeout(r, 5_100));

  proxy.cut();
  try {
    await until(async () => (await kiln.client().get('/_/ready')).status === 503, {
      what: 'Kiln to see the database gone',
    });
    const seen = await visitor.get('/');
    assert.equal(seen.status, 200, seen.text);
    assert.equal(seen.text, pub);
    const asOwner = await owner.get('/');
    assert.equal(asOwner.status, 200, 'the owner (whose session cannot be checked) reads it as a visitor');
    assert.equal(asOwner.text, pub);
    const priv = await owner.get('/secret.html');
    assert.equal(priv.status, 503, 'a private document is never served from memory');
    assert.doesNotMatch(priv.text, /secret<\/p>/);
    const unseen = await visitor.get('/unseen.html');
    assert.equal(unseen.status, 503);
    assert.equal(unseen.json.code, 'storage-unavailable');
  } finally {
    proxy.restore();
  }
  let back = false;
  for (let i = 0; i < 100 && !back; i++) {
    back = (await visitor.get('/unseen.html')).status === 200;
    if (!back) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(back, 'serving from the database again once it is back');
});

test("a save whose COMMIT answer is lost is answered truthfully: done when it took, 'outcome-unknown' when that cannot be read", {
  skip,
  timeout: 60_000,
}, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  const name = 'lost-commit.html';
  const node = await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc(0),
  });
  const owner = main.on(host);
  const versions = async () =>
    (await kiln.services.database.db.selectFrom('versions').select('id').where('node_id', '=', node.id).execute())
      .length;
  const before = await versions();

  // The COMMIT reaches the database; its answer is lost. Kiln reads back that the save took: 200.
  proxy.loseNextCommitAnswer();
  const took = await save(owner, host, name, 1);
  assert.equal(took.status, 200, took.text);
  assert.equal((await kiln.client(host).get(`/${name}`)).text, doc(1));
  assert.equal(await versions(), before + 1, 'one version: no retry wrote a duplicate');

  // Lost, and the database stays away: the answer says the outcome is unknown (not "nothing changed").
  proxy.loseNextCommitAnswer({ thenCut: true });
  const unknown = await save(owner, host, name, 2);
  assert.equal(unknown.status, 503, unknown.text);
  assert.equal(unknown.json.code, 'outcome-unknown');
  assert.ok(Number(unknown.headers['retry-after']) > 0);
  proxy.restore();
  // Reading it again shows it took; saving the same again changes nothing (no duplicate version).
  await until(async () => (await kiln.client().get('/_/ready')).status === 200, { what: 'the database back' });
  assert.equal((await kiln.client(host).get(`/${name}`)).text, doc(2));
  assert.equal((await save(owner, host, name, 2)).status, 200);
  assert.equal(await versions(), before + 2);
});
