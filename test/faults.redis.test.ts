// Redis goes away (every connection cut, new ones refused): saves, sign-ins and page loads carry on
// without waiting on it (the bus and the rate-limit counters fail soft), and the process stays up.
// Events published meanwhile wait in the bus's outbox; when Redis returns, every open stream (opened
// before or during the outage) gets them, once each, in order. A sign-out during the outage still ends
// its streams in this process at once. Nothing here is held to a time: "without waiting" is shown by
// what Kiln's Redis clients did (a call that failed at once, not one that ran out its time limit) and
// by answers that came while their events still waited for Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn, actingAs } from './support/people.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey, revokeSyncKey } from '../src/sync/keys.ts';
import { SseClient } from './support/sse.ts';
import { until, within } from './support/wait.ts';
import type { RedisEventBus } from '../src/events/redis.ts';
import type { SoftRedis } from '../src/redis/soft-client.ts';
import type { Redis } from 'ioredis';
import { loadConfig } from '../src/config.ts';
import { closeServices, createServices } from '../src/server.ts';
import { channels } from '../src/events/bus.ts';

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

/** The bus (with its outbox) and Kiln's Redis connections, as this process sees them. */
const bus = () => kiln.services.events as RedisEventBus;
const limiterRedis = () => (kiln.services.limiters as unknown as { client: SoftRedis }).client;
const subscriber = () => (kiln.services.events as unknown as { sub: Redis }).sub;

/** Cuts Redis off and waits until every connection of Kiln's knows it (the publisher, the subscriber and the
 *  rate-limit counters' client): from then on a call fails at once instead of being sent. */
async function cutRedis() {
  proxy.cut();
  await until(() => !bus().flowing() && subscriber().status !== 'ready' && limiterRedis().redis.status !== 'ready', {
    what: "Kiln's Redis connections to see Redis gone",
  });
}

/** Records how each call of the rate-limit counters' Redis client ended: `answered` (Redis answered, or the
 *  call failed at once) or `timed out` (it waited out the client's time limit, then let the request through). */
function watchLimiterCalls() {
  const client = limiterRedis();
  const original = client.call;
  const outcomes: string[] = [];
  client.call = async <T>(p: Promise<T>) => {
    let settled = false;
    p.then(
      () => (settled = true),
      () => (settled = true),
    );
    const result = await original.call(client, p);
    outcomes.push(settled ? 'answered' : 'timed out');
    return result as T | undefined;
  };
  return { outcomes, stop: () => (client.call = original) };
}

test('with Redis gone, saves and sign-ins answer at once and succeed; the process stays up', {
  skip,
  timeout: 60_000,
}, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'r.html',
    html: doc(0),
  });
  const owner = main.on(host);
  const input = newPerson();
  await createPerson(kiln.services, input);

  await cutRedis();
  const calls = watchLimiterCalls();
  try {
    for (let i = 1; i <= 5; i++) {
      const waiting = bus().waiting;
      const res = await within(
        owner.post('/_/save', doc(i), {
          headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/r.html` },
        }),
        20_000,
        `save ${i} with Redis away`,
      );
      assert.equal(res.status, 200, res.text);
      // Before, each save waited out the bus's 2 s command timeout. Now it is answered while its events
      // still wait in the bus's outbox: it never waited for them to go out.
      assert.ok(bus().waiting > waiting, `save ${i} answered, its events waiting for Redis (${bus().waiting})`);
    }
    assert.equal((await kiln.client(host).get('/r.html')).text, doc(5));
    const login = await within(
      kiln.client().post('/_/login', { email: input.email, password: input.password }),
      20_000,
      'sign-in with Redis away',
    );
    assert.equal(login.status, 200, login.text);
    // The sign-in's rate-limit counters were asked, and each call failed at once (Redis known to be away):
    // none waited out the client's time limit.
    assert.ok(calls.outcomes.length > 0, 'the rate-limit counters were consulted');
    assert.deepEqual(
      calls.outcomes.filter((o) => o !== 'answered'),
      [],
      `calls to Redis: ${calls.outcomes.join(', ')}`,
    );
  } finally {
    calls.stop();
  }
  const ready = await kiln.client().get('/_/ready');
  assert.equal(ready.status, 503);
  assert.equal(ready.json.checks.redis, 'unavailable');

  proxy.restore();
  await until(async () => (await kiln.client().get('/_/ready')).status === 200, {
    what: 'ready again once Redis is back',
  });
});

test('events saved while Redis is away reach every open stream once it returns, once each, in order', {
  skip,
  timeout: 60_000,
}, async (t) => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'personal' });
  const host = kiln.hostOf(me.username);
  const node = await createNode(await actingAs(kiln.services, me.id), {
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
    await cutRedis();
    // The stream's subscription cannot be confirmed while Redis is away (Kiln would wait for that up to 5 s,
    // then close the stream): its 200 while Redis is still cut shows it opened without waiting for Redis.
    const during = await within(open(), 20_000, 'a stream opening with Redis away');
    streams.push(during);
    assert.equal(during.status, 200, 'a stream opens while Redis is away');
    const waiting = bus().waiting;
    const save = (i: number) =>
      owner.post('/_/save', doc(i), {
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/o.html` },
      });
    for (let i = 1; i <= 10; i++) {
      const res = await save(i);
      assert.equal(res.status, 200, res.text);
    }
    // Every save's events wait in the outbox: nothing went out, so nothing can arrive while Redis is away.
    assert.ok(bus().waiting >= waiting + 10, `${bus().waiting - waiting} events waiting for 10 saves`);
    assert.equal(saves(before).length, 0, 'nothing arrives while Redis is away');
    proxy.restore();
    const back = Date.now();
    // The server's promise is a few seconds (its reconnect delay is 1 s); the test only gives up after 30.
    for (const stream of streams) {
      while (!saves(stream).some((f) => f.json.content === doc(10)))
        await stream.next({ timeoutMs: Math.max(1, 30_000 - (Date.now() - back)) });
    }
    t.diagnostic(`every stream caught up ${Date.now() - back} ms after Redis returned`);
    // One more save, once all caught up: each stream gets it after anything still on its way (events come in
    // id order), so a save delivered twice would show before it.
    assert.equal((await save(11)).status, 200);
    for (const stream of streams) {
      while (!saves(stream).some((f) => f.json.content === doc(11))) await stream.next({ timeoutMs: 30_000 });
    }
    for (const stream of streams) {
      const got = saves(stream);
      assert.deepEqual(
        got.map((f) => f.json.content),
        Array.from({ length: 11 }, (_, i) => doc(i + 1)),
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
    await cutRedis();
    const waiting = bus().waiting;
    await revokeSyncKey(kiln.services, me.id, id);
    // The revocation's event waits in the outbox, and the key's own expiry is far off: only this process
    // closing the stream itself can end it while Redis is still away.
    assert.ok(bus().waiting > waiting, 'the revocation waits for Redis');
    await stream.end(20_000);
    assert.ok(!bus().flowing(), 'Redis still away when the stream ended');
  } finally {
    stream.close();
    proxy.restore();
  }
});

test('a process that closes while Redis comes back sends the events still waiting before it ends', {
  skip,
  timeout: 30_000,
}, async () => {
  // A Kiln of its own: this one is closed by the test.
  const u = new URL(REDIS!);
  const ownProxy = await startTcpProxy(u.hostname, Number(u.port || 6379));
  const own = await startKiln({ env: { REDIS_URL: `redis://127.0.0.1:${ownProxy.port}` } });
  let reader: Awaited<ReturnType<typeof createServices>> | undefined;
  try {
    const ownBus = own.services.events as RedisEventBus;
    await until(() => ownBus.flowing(), { what: 'the bus to connect' });
    const person = await createPerson(own.services, newPerson());
    ownProxy.cut();
    await until(() => !ownBus.flowing(), { what: 'the bus to see Redis gone' });
    // Saved while Redis is away: its event waits in the outbox.
    await createNode(await actingAs(own.services, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name: 'last-words.html',
      html: doc(1),
    });
    assert.ok(ownBus.waiting > 0, 'the event waits for Redis');
    // Redis returns and the process ends at once (a deploy, a restart): the event still goes out.
    ownProxy.restore();
    await own.services.events.close();
    assert.equal(ownBus.waiting, 0);
    // Another process of the same deployment reads it from the account's replay log.
    reader = await createServices(
      loadConfig({
        DATA_DIR: own.config.dataDir,
        DATABASE_URL: own.config.databaseUrl!,
        REDIS_URL: REDIS!,
        ROOT_DOMAIN: own.config.rootDomain,
        LOG_LEVEL: 'silent',
      }),
    );
    const readerBus = reader.events;
    // Its publisher reads the log, and sends nothing before it is connected.
    await until(() => readerBus.flowing(), { what: "the second process's bus to connect" });
    const kept = await readerBus.replay(channels.account(person.id), 0);
    assert.ok(
      kept.events.some((e) => e.event.type === 'node-saved'),
      JSON.stringify(kept.events.map((e) => e.event.type)),
    );
  } finally {
    if (reader) await closeServices(reader);
    await own.stop();
    await ownProxy.close();
  }
});
