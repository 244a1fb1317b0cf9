// Redis goes away (every connection cut, new ones refused): saves, sign-ins and page loads carry on
// without waiting on it (the bus and the rate-limit counters fail soft), and the process stays up.
// Events published meanwhile wait in the bus's outbox; when Redis returns, every open stream (opened
// before or during the outage) gets them within 5 s, once each, in order. A sign-out during the
// outage still ends its streams in this process at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn } from './support/people.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey, revokeSyncKey } from '../src/sync/keys.ts';
import { SseClient } from './support/sse.ts';

const REDIS = process.env.KILN_TEST_REDIS_URL;
const skip = (storage !== 'postgres' || !REDIS) && 'Redis is used by the PostgreSQL + Redis run only';
let kiln: TestKiln;
let proxy: TcpProxy;

before(async () => {
  if (skip) return;
  const u = new URL(REDIS!);
  proxy = await startTcpProxy(u.hostname, Number(u.port || 6379));
  kiln = await startKiln({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
});
after(async () => {
  if (skip) return;
  await kiln?.stop();
  await proxy?.close();
});

const doc = (n: number) => `<!DOCTYPE html><html><body><p>save ${n}</p></body></html>`;

test('with Redis gone, saves and sign-ins answer at once and succeed; the process stays up', {
  skip,
  timeout: 60_000,
}, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  await createNode(kiln.services, me.id, { ownerId: me.id, parentId: 0, type: 'site', name: 'r.html', html: doc(0) });
  const owner = main.on(host);
  const input = newPerson();
  await createPerson(kiln.services, input);

  proxy.cut();
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 1; i <= 5; i++) {
    const started = Date.now();
    const res = await owner.post('/_/save', doc(i), {
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/r.html` },
    });
    assert.equal(res.status, 200, res.text);
    // Before: each save waited out the bus's 2 s command timeout. A generous bound, far below that.
    assert.ok(Date.now() - started < 1_500, `save ${i} took ${Date.now() - started} ms`);
  }
  assert.equal((await kiln.client(host).get('/r.html')).text, doc(5));
  const started = Date.now();
  const login = await kiln.client().post('/_/login', { email: input.email, password: input.password });
  assert.equal(login.status, 200, login.text);
  assert.ok(Date.now() - started < 1_500, `sign-in took ${Date.now() - started} ms`);
  const ready = await kiln.client().get('/_/ready');
  assert.equal(ready.status, 503);
  assert.equal(ready.json.checks.redis, 'unavailable');

  proxy.restore();
  let back = false;
  for (let i = 0; i < 100 && !back; i++) {
    back = (await kiln.client().get('/_/ready')).status === 200;
    if (!back) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(back, 'ready again once Redis is back');
});

test('events saved while Redis is away reach every open stream within 5 s of its return, once each, in order', {
  skip,
  timeout: 60_000,
}, async (t) => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'personal' });
  const host = kiln.hostOf(me.username);
  const node = await createNode(kiln.services, me.id, {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'o.html',
    html: doc(0),
  });
  const { key } = await createSyncKey(kiln.services, me.id);
  const port = Number(new URL(kiln.url).port);
  const open = () =>
    SseClient.open({ port, host: kiln.config.rootDomain, path: '/_/sync/stream', headers: { 'x-api-key': key } });
  const saves = (stream: SseClient) =>
    stream.frames.filter(
      (f) => f.json?.type === 'node-saved' && f.json.nodeId === node.id && f.json.content !== doc(0),
    );
  const before = await open();
  const owner = main.on(host);
  const streams = [before];
  try {
    assert.equal(before.status, 200);
    proxy.cut();
    await new Promise((r) => setTimeout(r, 300));
    const opened = Date.now();
    const during = await open();
    streams.push(during);
    assert.equal(during.status, 200, 'a stream opens while Redis is away');
    assert.ok(Date.now() - opened < 2_000, `opening took ${Date.now() - opened} ms`);
    for (let i = 1; i <= 10; i++) {
      const res = await owner.post('/_/save', doc(i), {
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/o.html` },
      });
      assert.equal(res.status, 200, res.text);
    }
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(saves(before).length, 0, 'nothing arrives while Redis is away');
    proxy.restore();
    const back = Date.now();
    for (const stream of streams) {
      while (!saves(stream).some((f) => f.json.content === doc(10)))
        await stream.next({ timeoutMs: 5_000 - (Date.now() - back) });
    }
    const took = Date.now() - back;
    assert.ok(took < 5_000, `caught up ${took} ms after Redis returned`);
    t.diagnostic(`every stream caught up ${took} ms after Redis returned`);
    await new Promise((r) => setTimeout(r, 500));
    for (const stream of streams) {
      const got = saves(stream);
      assert.deepEqual(
        got.map((f) => f.json.content),
        Array.from({ length: 10 }, (_, i) => doc(i + 1)),
        'each save once, in order',
      );
      const ids = got.map((f) => Number(f.id));
      assert.ok(
        ids.every((id, i) => i === 0 || id > ids[i - 1]),
        'ids grow',
      );
    }
  } finally {
    for (const s of streams) s.close();
  }
});

test('revoking a sync key while Redis is away ends its open streams at once', { skip, timeout: 30_000 }, async () => {
  const me = await signedIn(kiln, kiln.client(), { plan: 'personal' });
  const { key, id } = await createSyncKey(kiln.services, me.id);
  const port = Number(new URL(kiln.url).port);
  const stream = await SseClient.open({
    port,
    host: kiln.config.rootDomain,
    path: '/_/sync/stream',
    headers: { 'x-api-key': key },
  });
  try {
    assert.equal(stream.status, 200);
    proxy.cut();
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    await revokeSyncKey(kiln.services, me.id, id);
    for (let i = 0; i < 40 && !stream.ended; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(stream.ended, 'the stream ended');
    assert.ok(Date.now() - started < 2_000, `ended after ${Date.now() - started} ms`);
  } finally {
    stream.close();
    proxy.restore();
  }
});
