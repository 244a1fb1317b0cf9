// Redis goes away: no request waits for it. The routes whose answer used to wait for an event's publish answer
// while Redis is still away: the bus and the live relay (live-only messages, which nothing replays) with 503
// `bus-unavailable` and Retry-After; the control lane and the data-loss panel from the local publish (their events
// wait in the bus's outbox, in order, and go out when Redis returns). "While Redis is still away" is the
// requirement: each answer is awaited with Redis cut, under a generous deadline that only turns a hang into a
// failure (before, each waited until Redis came back).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { sessionsFor, signedIn, storeSessions, actingAs } from './support/people.ts';
import { keyHolder } from './support/sync-client.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { SseClient } from './support/sse.ts';
import { until, within } from './support/wait.ts';
import type { RedisEventBus } from '../src/events/redis.ts';
import type { Redis } from 'ioredis';

const REDIS = process.env.KILN_TEST_REDIS_URL;
const skip = (storage !== 'postgres' || !REDIS) && 'Redis is used by the PostgreSQL + Redis run only';
/** Far beyond any answer that does not wait for Redis; Redis stays away longer than this. */
const DEADLINE_MS = 20_000;
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

const bus = () => kiln.services.events as RedisEventBus;
const subscriber = () => (kiln.services.events as unknown as { sub: Redis }).sub;

/** Cuts Redis off and waits until the bus's connections know it. */
async function cutRedis() {
  proxy.cut();
  await until(() => !bus().flowing() && subscriber().status !== 'ready', {
    what: "Kiln's Redis connections to see Redis gone",
  });
}

/** Brings Redis back and waits until the bus has sent what waited. */
async function restoreRedis() {
  proxy.restore();
  await until(() => bus().flowing(), { what: 'the bus to flow again' });
}

/** An answer that came while Redis was still away. */
async function whileAway<T>(p: Promise<T>, what: string): Promise<T> {
  const res = await within(p, DEADLINE_MS, what);
  assert.ok(!bus().flowing(), `${what}: answered while Redis was still away`);
  return res;
}

/** An owner signed in on their host, with a document, and the headers their page sends. */
async function ownerWithPage(name: string) {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: '<!DOCTYPE html><html><body><p>x</p></body></html>',
  });
  const headers = { origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'page-url': `http://${host}/${name}` };
  return { owner: main.on(host), host, headers };
}

/** A 503 `bus-unavailable`, with when to try again. */
function assertBusUnavailable(res: { status: number; text: string; json: any; headers: Record<string, any> }) {
  assert.equal(res.status, 503, res.text);
  assert.equal(res.json.code, 'bus-unavailable');
  assert.match(res.headers['retry-after'] ?? '', /^\d+$/);
}

test('a bus send during an outage is refused at once: 503 bus-unavailable with Retry-After', {
  skip,
  timeout: 60_000,
}, async () => {
  const { owner, headers } = await ownerWithPage('bus.html');
  const send = () =>
    owner.post(
      '/_/bus/send',
      { channel: 'ai-edit', type: 'ai-edit/request', v: 1, sender: 'page-a1', payload: { id: 'r1' } },
      { headers },
    );
  assert.equal((await send()).status, 200, 'the bus works with Redis there');
  await cutRedis();
  try {
    const res = await whileAway(send(), 'a bus send with Redis away');
    assertBusUnavailable(res);
    assert.match(res.json.error, /Redis is unreachable/, 'the page shows `error`');
  } finally {
    await restoreRedis();
  }
  assert.equal((await send()).status, 200, 'sent again once Redis is back');
});

test('a live relay (an editor snapshot) during an outage is refused at once: 503 bus-unavailable with Retry-After', {
  skip,
  timeout: 60_000,
}, async () => {
  const { owner, host, headers } = await ownerWithPage('relay.html');
  const relay = () =>
    owner.post(
      '/_/sync',
      { snapshot: '<!DOCTYPE html><html><body><p>typing</p></body></html>', sender: 'tab-1' },
      { headers: { ...headers, 'document-url': `http://${host}/relay.html` } },
    );
  assert.equal((await relay()).status, 200, 'relayed with Redis there');
  await cutRedis();
  try {
    assertBusUnavailable(await whileAway(relay(), 'a live relay with Redis away'));
  } finally {
    await restoreRedis();
  }
  assert.equal((await relay()).status, 200, 'relayed again once Redis is back');
});

test('a control message during an outage is answered at once and reaches the other devices once Redis returns', {
  skip,
  timeout: 60_000,
}, async () => {
  const { person, api, port } = await keyHolder(kiln);
  const other = await createSyncKey(kiln.services, person.id);
  const device = await SseClient.open({
    port,
    host: kiln.config.rootDomain,
    path: '/_/sync/stream',
    headers: { 'x-api-key': other.key },
  });
  try {
    assert.equal(device.status, 200);
    await cutRedis();
    const waiting = bus().waiting;
    try {
      const res = await whileAway(
        api.control({ type: 'future/thing', v: 1, payload: { n: 1 } }),
        'a control message with Redis away',
      );
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { ok: true, applied: false });
      assert.ok(bus().waiting > waiting, 'its envelope waits in the outbox');
    } finally {
      proxy.restore();
    }
    const frame = await device.next({ skipTypes: ['sync-ready'], timeoutMs: 30_000 });
    assert.equal(frame.json.type, 'control');
    assert.deepEqual(frame.json.envelope, { type: 'future/thing', v: 1, payload: { n: 1 } });
  } finally {
    device.close();
    await restoreRedis();
  }
});

const RULES =
  '<script type="application/json" data-rules-name="api" data-rules-version="1">{"items": ".item[]"}</script>';
const list = (items: string[]) =>
  `<!doctype html><html><head>${RULES}</head><body><ul>${items
    .map((i) => `<html><li class="item">${i}</li></html>`)
    .join('')}</ul></body></html>`;

test('the data-loss panel during an outage: a clobber saved meanwhile shows at once in its GET, and dismissing it answers', {
  skip,
  timeout: 60_000,
}, async () => {
  const { person } = await keyHolder(kiln);
  const main = kiln.client();
  storeSessions(
    main.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, person.id, person.username),
  );
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'panel.html',
    html: list(['milk', 'eggs', 'bread']),
  });
  const host = kiln.hostOf(person.username);
  const doc = main.on(host);
  const url = `http://${host}/panel.html`;
  const pending = () => doc.get(`/_/data-loss?file=${encodeURIComponent(url)}`, { headers: { 'page-url': url } });
  const first = await pending();
  assert.equal(first.status, 200, first.text);
  assert.equal(first.json.event, null, 'opening the page starts protecting it');

  await cutRedis();
  try {
    // A page script empties the list (a background save): the guard raises an event and publishes its note.
    const saved = await whileAway(
      doc.post('/_/save', list([]), {
        headers: {
          'content-type': 'text/plain;charset=UTF-8',
          'document-url': url,
          'page-url': url,
          'save-trigger': 'auto',
          origin: `http://${host}`,
        },
      }),
      'the clobbering save',
    );
    assert.equal(saved.status, 200, saved.text);
    const panel = await whileAway(pending(), "the panel's GET after the clobber");
    assert.equal(panel.status, 200, panel.text);
    assert.ok(panel.json.event, 'the event is there');
    const dismissed = await whileAway(
      doc.post(
        `/_/data-loss/${encodeURIComponent(panel.json.event.id)}`,
        { choice: 'dismiss', file: url },
        { headers: { 'page-url': url, origin: `http://${host}` } },
      ),
      "the panel's dismissal",
    );
    assert.equal(dismissed.status, 200, dismissed.text);
    assert.deepEqual(dismissed.json, { ok: true, choice: 'dismiss', status: 'dismissed' });
    const after = await whileAway(pending(), "the panel's GET after the dismissal");
    assert.equal(after.json.event, null);
  } finally {
    await restoreRedis();
  }
});
