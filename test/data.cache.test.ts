// The data API's result cache through HTTP, with time under the test's control (an injected clock):
// answers cached up to 5 minutes per document and query (X-Cache / Age show it), a save invalidates at once,
// ETag tied to the checksum and the query with 304 on If-None-Match, load-dependent failures kept briefly.
// On the PostgreSQL run the cache lives in Redis (REDIS_URL): an entry is readable from another process.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import type { Res } from './support/client.ts';
import type { Clock } from '../src/clock.ts';
import { limits } from '../src/limits.ts';
import { RedisDataCache } from '../src/data/cache.ts';
import { dataCacheKey, rulesId, TOO_EXPENSIVE_TTL_MS } from '../src/data/read.ts';
import { namespaceFor } from '../src/events/redis.ts';
import { checksum } from '../src/core/checksum.ts';
import {
  addDocument,
  apiTag,
  assertDataAnswer,
  assertFailure,
  browserSave,
  dataUrl,
  owner,
  type Owner,
} from './data.support.ts';

let kiln: TestKiln;
let alice: Owner;
// Time stands still unless a test moves it.
const start = Date.now();
let offset = 0;
const clock: Clock = { now: () => new Date(start + offset) };
const advance = (ms: number) => (offset += ms);
const SECOND = 1000;

const page = (price: string) =>
  `<!doctype html><html><head>${apiTag({ price: '#price', name: 'h1' })}</head><body><h1>Pen</h1><p id="price">${price}</p></body></html>`;

before(async () => {
  kiln = await startKiln({ clock });
  alice = await owner(kiln);
});
after(() => kiln.stop());

const cacheOf = (res: Res) => ({ cache: res.headers['x-cache'], age: Number(res.headers.age) });

test('an answer is cached up to 5 minutes per document and query (X-Cache, Age), then computed again', async () => {
  await addDocument(kiln, alice, 'expiry.html', page('1.00'));
  for (const url of ['/_/api/expiry.html', dataUrl('/expiry.html', { n: 'h1' })]) {
    const first = await alice.anonymous.get(url);
    assertDataAnswer(first, 200);
    assert.deepEqual(cacheOf(first), { cache: 'MISS', age: 0 }, url);
    const again = await alice.anonymous.get(url);
    assert.deepEqual(cacheOf(again), { cache: 'HIT', age: 0 }, url);
    assert.equal(again.text, first.text);
    assert.equal(again.headers.etag, first.headers.etag);

    advance(4 * 60 * SECOND);
    assert.deepEqual(cacheOf(await alice.anonymous.get(url)), { cache: 'HIT', age: 240 }, url);
    advance(limits.dataCacheMs - 4 * 60 * SECOND - 1);
    assert.deepEqual(cacheOf(await alice.anonymous.get(url)), { cache: 'HIT', age: 299 }, url);
    advance(1);
    const expired = await alice.anonymous.get(url);
    assert.deepEqual(cacheOf(expired), { cache: 'MISS', age: 0 }, `${url} after 5 minutes`);
    assert.equal(expired.text, first.text);
    assert.deepEqual(cacheOf(await alice.anonymous.get(url)), { cache: 'HIT', age: 0 }, url);
  }
});

test('each query has its own entry; the same query on another document too', async () => {
  await addDocument(kiln, alice, 'queries.html', page('2.00'));
  await addDocument(kiln, alice, 'queries-twin.html', page('2.50'));
  assert.equal(cacheOf(await alice.anonymous.get(dataUrl('/queries.html', { a: 'h1' }))).cache, 'MISS');
  assert.equal(cacheOf(await alice.anonymous.get(dataUrl('/queries.html', { b: 'h1' }))).cache, 'MISS');
  assert.equal(cacheOf(await alice.anonymous.get(dataUrl('/queries.html', { a: 'h1' }))).cache, 'HIT');
  const twin = await alice.anonymous.get(dataUrl('/queries-twin.html', { p: '#price' }));
  assert.equal(cacheOf(twin).cache, 'MISS');
  assert.deepEqual(twin.json, { p: '2.50' });
});

test('a save invalidates at once: the next request reads the new HTML, with a new ETag', async () => {
  await addDocument(kiln, alice, 'saved.html', page('3.00'));
  const q = dataUrl('/saved.html', { p: '#price' });
  const apiBefore = await alice.anonymous.get('/_/api/saved.html');
  const queryBefore = await alice.anonymous.get(q);
  assert.equal(cacheOf(await alice.anonymous.get('/_/api/saved.html')).cache, 'HIT');
  assert.equal(cacheOf(await alice.anonymous.get(q)).cache, 'HIT');
  assert.deepEqual(queryBefore.json, { p: '3.00' });

  const saved = await browserSave(alice, 'saved.html', page('4.00'));
  assert.equal(saved.status, 200, saved.text);

  // No time passes: the cached answers are not used any more.
  const apiAfter = await alice.anonymous.get('/_/api/saved.html');
  assertDataAnswer(apiAfter, 200);
  assert.deepEqual(apiAfter.json, { price: '4.00', name: 'Pen' });
  assert.equal(cacheOf(apiAfter).cache, 'MISS');
  assert.notEqual(apiAfter.headers.etag, apiBefore.headers.etag);
  const queryAfter = await alice.anonymous.get(q);
  assert.deepEqual(queryAfter.json, { p: '4.00' });
  assert.notEqual(queryAfter.headers.etag, queryBefore.headers.etag);
  // The ETag names the document checksum the page route sends.
  const pageEtag = String((await alice.anonymous.get('/saved.html')).headers.etag).replace(/"/g, '');
  assert.equal(pageEtag, checksum(page('4.00')));
  assert.ok(String(queryAfter.headers.etag).startsWith(`"${pageEtag}-`));

  // Saving the old bytes back gives the old answer and the old ETag again.
  assert.equal((await browserSave(alice, 'saved.html', page('3.00'))).status, 200);
  const back = await alice.anonymous.get(q);
  assert.deepEqual(back.json, { p: '3.00' });
  assert.equal(back.headers.etag, queryBefore.headers.etag);
});

test('a save that adds the api tag turns the cached 400 into the answer at once', async () => {
  await addDocument(kiln, alice, 'tagless.html', '<html><body><h1>Later</h1></body></html>');
  assertFailure(await alice.anonymous.get('/_/api/tagless.html'), 400, 'no-rules-tag', 'No api rules tag');
  const cached = await alice.anonymous.get('/_/api/tagless.html');
  assertFailure(cached, 400, 'no-rules-tag');
  assert.equal(cacheOf(cached).cache, 'HIT');
  assert.equal(
    (
      await browserSave(
        alice,
        'tagless.html',
        `<html><head>${apiTag({ h: 'h1' })}</head><body><h1>Later</h1></body></html>`,
      )
    ).status,
    200,
  );
  const res = await alice.anonymous.get('/_/api/tagless.html');
  assertDataAnswer(res, 200);
  assert.deepEqual(res.json, { h: 'Later' });
});

test('conditional GET: a matching If-None-Match answers 304 (CORS too); a stale one gets the new answer', async () => {
  await addDocument(kiln, alice, 'conditional.html', page('5.00'));
  for (const url of ['/_/api/conditional.html', dataUrl('/conditional.html', { p: '#price' })]) {
    const first = await alice.anonymous.get(url);
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[0-9a-f]{16}-[0-9a-f]{16}"$/);
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await alice.anonymous.get(url, {
        headers: { 'if-none-match': inm, origin: 'https://elsewhere.example' },
      });
      assertDataAnswer(res, 304);
      assert.equal(res.body.length, 0);
      assert.equal(res.headers.etag, etag);
    }
    const other = await alice.anonymous.get(url, {
      headers: { 'if-none-match': '"0000000000000000-0000000000000000"' },
    });
    assertDataAnswer(other, 200);
    assert.equal(other.text, first.text);
  }
  // Two queries on one document have different ETags: one's ETag does not answer 304 for the other.
  const a = await alice.anonymous.get(dataUrl('/conditional.html', { a: 'h1' }));
  const b = await alice.anonymous.get(dataUrl('/conditional.html', { b: 'h1' }), {
    headers: { 'if-none-match': String(a.headers.etag) },
  });
  assertDataAnswer(b, 200);
  assert.notEqual(b.headers.etag, a.headers.etag);

  const url = dataUrl('/conditional.html', { p: '#price' });
  const old = String((await alice.anonymous.get(url)).headers.etag);
  assert.equal((await browserSave(alice, 'conditional.html', page('6.00'))).status, 200);
  const fresh = await alice.anonymous.get(url, { headers: { 'if-none-match': old } });
  assertDataAnswer(fresh, 200);
  assert.deepEqual(fresh.json, { p: '6.00' });
  assert.equal(
    (await alice.anonymous.get(url, { headers: { 'if-none-match': String(fresh.headers.etag) } })).status,
    304,
  );
});

test('a private document answers 404 even with a matching ETag from when it was public', async () => {
  const node = await addDocument(kiln, alice, 'turns-private.html', page('7.00'));
  const first = await alice.anonymous.get('/_/api/turns-private.html');
  assertDataAnswer(first, 200);
  const { setVisibility } = await import('../src/nodes/tree.ts');
  const { actingAs } = await import('./support/people.ts');
  await setVisibility(await actingAs(kiln.services, alice.id), { nodeId: node.id, visibility: 'private' });
  const res = await alice.anonymous.get('/_/api/turns-private.html', {
    headers: { 'if-none-match': String(first.headers.etag) },
  });
  assertFailure(res, 404, 'not-found');
  assertFailure(await alice.anonymous.get('/_/api/turns-private.html'), 404, 'not-found');
});

test('deterministic failures are cached like answers; a too-expensive one only briefly (it depends on load)', async () => {
  const nested = '<div><p>x</p>'.repeat(2000) + '</div>'.repeat(2000);
  await addDocument(kiln, alice, 'expensive.html', `<html><body>${nested}</body></html>`);
  const hostile = dataUrl('/expensive.html', { a: '*:has(*) *:has(*)[]' });
  const syntax = dataUrl('/expensive.html', '{a: ');
  const first = await alice.anonymous.get(hostile);
  assertFailure(first, 400, 'too-expensive', /too expensive/i);
  assert.equal(cacheOf(first).cache, 'MISS');
  assertFailure(await alice.anonymous.get(syntax), 400, 'rules-syntax');
  assert.equal(
    cacheOf(await alice.anonymous.get(hostile)).cache,
    'HIT',
    'kept briefly: a repeated hostile query costs nothing',
  );

  advance(TOO_EXPENSIVE_TTL_MS);
  const later = await alice.anonymous.get(hostile);
  assertFailure(later, 400, 'too-expensive');
  assert.equal(cacheOf(later).cache, 'MISS', 'not kept for the full 5 minutes');
  const syntaxLater = await alice.anonymous.get(syntax);
  assertFailure(syntaxLater, 400, 'rules-syntax');
  assert.deepEqual(cacheOf(syntaxLater), { cache: 'HIT', age: TOO_EXPENSIVE_TTL_MS / SECOND });
});

test('with REDIS_URL the cache lives in Redis: another process reads the entry', async (t) => {
  if (!kiln.config.redisUrl) {
    t.skip(`no REDIS_URL on this run (${storage}: the in-process cache)`);
    return;
  }
  await addDocument(kiln, alice, 'shared.html', page('8.00'));
  const res = await alice.anonymous.get('/_/api/shared.html');
  assert.equal(cacheOf(res).cache, 'MISS');
  const sum = String(res.headers.etag).slice(1, 17);
  // A second cache on the same Redis and namespace, as another Kiln process on this deployment has.
  const other = await RedisDataCache.open(kiln.config.redisUrl, namespaceFor(kiln.config));
  try {
    let entry: Awaited<ReturnType<typeof other.get>> | undefined;
    for (let i = 0; i < 50 && !entry; i++) {
      entry = await other.get(dataCacheKey(sum, rulesId({ kind: 'api' })), clock.now().getTime());
      if (!entry) await new Promise((r) => setTimeout(r, 20)); // the store is written after the answer is sent
    }
    assert.ok(entry, 'entry in Redis');
    assert.equal(entry.status, 200);
    assert.equal(entry.body, res.text);
    // And past 5 minutes on the deployment's clock it is not used, whatever Redis still holds.
    assert.equal(
      await other.get(dataCacheKey(sum, rulesId({ kind: 'api' })), clock.now().getTime() + limits.dataCacheMs),
      undefined,
    );
  } finally {
    await other.close();
  }
});
