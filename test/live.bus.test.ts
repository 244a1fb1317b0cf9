// The event bus itself, both implementations: ids growing per channel, the bounded replay log and its
// completeness, and (Redis, when the run has one) delivery between bus instances exactly once,
// namespaces kept apart, and catching up after the subscriber connection is cut.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { MemoryEventBus } from '../src/events/memory.ts';
import { RedisEventBus, namespaceFor } from '../src/events/redis.ts';
import { replayLog, type EventBus, type KilnEvent } from '../src/events/bus.ts';
import { storage } from './support/kiln.ts';
import { startTcpProxy } from './support/tcp-proxy.ts';
import { until } from './support/wait.ts';

const REDIS_URL = storage === 'postgres' ? process.env.KILN_TEST_REDIS_URL : undefined;
const lane = (html: string): KilnEvent => ({ type: 'lane', lane: 'live', nodeId: 1, html, sender: 's' });
const uniqueNamespace = () => `kiln-test:${process.pid}:${Math.random().toString(36).slice(2)}:`;

/** Collects what a listener hears; `until(n)` waits for n events. */
function collector(bus: EventBus, channel: string) {
  const got: Array<{ id: number; html: string }> = [];
  let wake = () => {};
  const off = bus.subscribe(channel, (e, id) => {
    got.push({ id, html: (e as { html: string }).html });
    wake();
  });
  return {
    got,
    off,
    async until(n: number, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (got.length < n) {
        if (Date.now() > deadline) throw new Error(`heard ${got.length} of ${n} events: ${JSON.stringify(got)}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 50);
        });
      }
    },
  };
}

async function checkIdsAndReplay(bus: EventBus, channel: string) {
  const before = Date.now();
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push(await bus.publish(channel, lane(`e${i}`)));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
  assert.ok(ids[0] >= before * 1000 && Number.isSafeInteger(ids[4]));
  const r = await bus.replay(channel, ids[1]);
  assert.equal(r.complete, true);
  assert.equal(r.lastId, ids[4]);
  assert.deepEqual(
    r.events.map((e) => [e.id, (e.event as { html: string }).html]),
    [
      [ids[2], 'e2'],
      [ids[3], 'e3'],
      [ids[4], 'e4'],
    ],
  );
  const none = await bus.replay(channel, ids[4]);
  assert.deepEqual(none, { events: [], complete: true, lastId: ids[4] });
  // Only the newest events are kept: a replay from before them is incomplete.
  for (let i = 0; i < replayLog.events + 3; i++) await bus.publish(channel, lane(`f${i}`));
  const old = await bus.replay(channel, ids[0]);
  assert.equal(old.complete, false);
  assert.equal(old.events.length, replayLog.events);
  // An event too large to keep breaks the chain: nothing before it can be replayed completely.
  const tail = await bus.publish(channel, lane('g'));
  await bus.publish(channel, lane('x'.repeat(replayLog.maxEventBytes + 10)));
  const afterBig = await bus.replay(channel, tail);
  assert.equal(afterBig.complete, false);
  assert.equal(afterBig.events.length, 0);
  const next = await bus.publish(channel, lane('h'));
  const fromBig = await bus.replay(channel, afterBig.lastId);
  assert.equal(fromBig.complete, true);
  assert.deepEqual(
    fromBig.events.map((e) => e.id),
    [next],
  );
  // An unknown channel: from id 0 nothing is missing; from any other id its log was lost (a restart),
  // so what came after that id is unknown.
  assert.deepEqual(await bus.replay(`${channel}:never`, 0), { events: [], complete: true, lastId: 0 });
  assert.deepEqual(await bus.replay(`${channel}:never`, 5), { events: [], complete: false, lastId: 0 });
}

test('memory bus: ids grow per channel (Date.now()-based), replay keeps the newest events and knows when it is incomplete', async () => {
  const bus = new MemoryEventBus();
  await checkIdsAndReplay(bus, 'doc:1');
  const c = collector(bus, 'doc:2');
  const id = await bus.publish('doc:2', lane('x'));
  assert.deepEqual(c.got, [{ id, html: 'x' }]);
  c.off();
  await bus.publish('doc:2', lane('y'));
  assert.equal(c.got.length, 1);
  // A restarted process (a new bus) still gives larger ids (a restart takes more than a millisecond).
  await new Promise((r) => setTimeout(r, 2));
  const restarted = new MemoryEventBus();
  assert.ok((await restarted.publish('doc:2', lane('z'))) > id);
  await bus.close();
  await restarted.close();
});

test('namespaces come from the database, never its credentials', () => {
  const a = namespaceFor({ databaseUrl: 'postgres://u:one@db.internal:5432/kiln', dataDir: '/x' });
  const b = namespaceFor({ databaseUrl: 'postgres://u:two@db.internal/kiln', dataDir: '/y' });
  const c = namespaceFor({ databaseUrl: 'postgres://u:one@db.internal:5432/other', dataDir: '/x' });
  assert.equal(a, b);
  assert.notEqual(a, c);
  assert.notEqual(namespaceFor({ dataDir: '/a' }), namespaceFor({ dataDir: '/b' }));
});

test('Redis bus: ids and replay like the memory bus', {
  skip: REDIS_URL ? false : 'needs Redis (KILN_TEST_STORAGE=postgres)',
}, async () => {
  const bus = await RedisEventBus.open(REDIS_URL!, uniqueNamespace());
  try {
    await checkIdsAndReplay(bus, 'doc:1');
  } finally {
    await bus.close();
  }
});

test('Redis bus: every subscriber in every process hears each event once, in id order; other namespaces hear nothing', {
  skip: REDIS_URL ? false : 'needs Redis (KILN_TEST_STORAGE=postgres)',
}, async () => {
  const ns = uniqueNamespace();
  const a = await RedisEventBus.open(REDIS_URL!, ns);
  const b = await RedisEventBus.open(REDIS_URL!, ns);
  const elsewhere = await RedisEventBus.open(REDIS_URL!, uniqueNamespace());
  try {
    const onA = collector(a, 'account:7');
    const onB1 = collector(b, 'account:7');
    const onB2 = collector(b, 'account:7');
    const foreign = collector(elsewhere, 'account:7');
    await Promise.all([a.subscribed('account:7'), b.subscribed('account:7'), elsewhere.subscribed('account:7')]);
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).publish('account:7', lane(`m${i}`))),
    );
    for (const c of [onA, onB1, onB2]) {
      await c.until(20);
      assert.equal(c.got.length, 20);
      assert.deepEqual(
        c.got.map((g) => g.id),
        [...ids].sort((x, y) => x - y),
      );
    }
    await elsewhere.publish('account:7', lane('fence'));
    await foreign.until(1);
    assert.deepEqual(
      foreign.got.map((g) => g.html),
      ['fence'],
    );
    // The last listener leaving drops the Redis subscription; events then stay away.
    onB1.off();
    onB2.off();
    await a.publish('account:7', lane('after'));
    await onA.until(21);
    assert.equal(onB1.got.length, 20);
  } finally {
    await Promise.all([a.close(), b.close(), elsewhere.close()]);
  }
});

test('Redis bus: after its subscriber connection is cut, it catches up on what was published meanwhile, each event once', {
  skip: REDIS_URL ? false : 'needs Redis (KILN_TEST_STORAGE=postgres)',
}, async () => {
  const ns = uniqueNamespace();
  const publisher = await RedisEventBus.open(REDIS_URL!, ns);
  const listener = await RedisEventBus.open(REDIS_URL!, ns);
  const admin = new Redis(REDIS_URL!);
  try {
    const c = collector(listener, 'doc:9');
    await listener.subscribed('doc:9');
    await publisher.publish('doc:9', lane('before'));
    await c.until(1);
    const list = String(await admin.client('LIST'));
    const line = list.split('\n').find((l) => l.includes(`name=${listener.connectionNames.sub} `));
    assert.ok(line, 'the subscriber connection is listed');
    const id = /\bid=(\d+)/.exec(line!)![1];
    await admin.client('KILL', 'ID', id);
    const during = [];
    for (let i = 0; i < 5; i++) during.push(await publisher.publish('doc:9', lane(`during${i}`)));
    await c.until(6);
    await publisher.publish('doc:9', lane('after'));
    await c.until(7);
    assert.deepEqual(
      c.got.map((g) => g.html),
      ['before', 'during0', 'during1', 'during2', 'during3', 'during4', 'after'],
    );
    assert.deepEqual(
      c.got.slice(1, 6).map((g) => g.id),
      during,
    );
  } finally {
    admin.disconnect();
    await Promise.all([publisher.close(), listener.close()]);
  }
});

test('Redis bus: a publish whose answer was lost runs once; with Redis away events wait and go out in order', {
  skip: REDIS_URL ? false : 'needs Redis (KILN_TEST_STORAGE=postgres)',
}, async () => {
  const ns = uniqueNamespace();
  const u = new URL(REDIS_URL!);
  const proxy = await startTcpProxy(u.hostname, Number(u.port || 6379));
  const publisher = await RedisEventBus.open(`redis://127.0.0.1:${proxy.port}`, ns);
  const listener = await RedisEventBus.open(REDIS_URL!, ns);
  try {
    const c = collector(listener, 'doc:7');
    await listener.subscribed('doc:7');
    await publisher.publish('doc:7', lane('first'));
    await c.until(1);
    // The script runs on Redis and the connection dies before its answer arrives: the event is
    // published again once Redis is reachable, and the retry finds the first run in the log.
    proxy.deafen();
    const lost = publisher.publish('doc:7', lane('answer lost'));
    await c.until(2);
    proxy.cut();
    proxy.hear();
    // The publisher finds its connection gone and puts the event back in its outbox, to be sent again.
    await until(() => publisher.waiting === 1, { what: 'the publish whose answer was lost to wait for a retry' });
    proxy.restore();
    const lostId = await lost;
    assert.equal(lostId, c.got[1].id, 'the retry answers with the id of the run whose answer was lost');
    // Redis away: publishes resolve once it is back, in order.
    proxy.cut();
    await until(() => !publisher.flowing(), { what: 'the publisher to see Redis gone' });
    let settled = 0;
    const waiting = ['w1', 'w2', 'w3'].map((html) => publisher.publish('doc:7', lane(html)).finally(() => settled++));
    assert.equal(publisher.waiting, 3);
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, 0, 'nothing is published, nor refused, while Redis is away');
    proxy.restore();
    const ids = await Promise.all(waiting);
    await c.until(5);
    // One more, once those are heard: anything heard twice would come before it (one channel, id order).
    await publisher.publish('doc:7', lane('last'));
    await c.until(6);
    assert.deepEqual(
      c.got.map((g) => g.html),
      ['first', 'answer lost', 'w1', 'w2', 'w3', 'last'],
    );
    assert.deepEqual(
      c.got.slice(2, 5).map((g) => g.id),
      ids,
    );
  } finally {
    await Promise.all([publisher.close(), listener.close()]);
    await proxy.close();
  }
});
