// The hot path (src/http/hot-path.ts): a public document's answer to a cookie-less visitor is kept and
// replayed from memory before the framework runs. It must answer exactly as the documents route does
// (status, headers, body; HEAD, 304, the `currentResource` cookie), be used (the metrics count its
// answers), and stop at once when the document changes: saved, made private, renamed, deleted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import type { Client, Res } from './support/client.ts';
import { saveDocument } from '../src/save/pipeline.ts';
import { hotAnswers } from './support/metrics.ts';
import { until } from './support/wait.ts';

let kiln: TestKiln;
let main: Client; // the owner's browser on the main app
let owner: Client; // the same browser on the owner's document host
let docHost: string;
const PAGE = '<!DOCTYPE html>\n<html><head><title>Hot</title></head><body><p>first</p></body></html>\n';
let pageId = 0;

before(async () => {
  kiln = await startKiln();
  main = kiln.client();
  const alice = await signedIn(kiln, main);
  docHost = kiln.hostOf(alice.username);
  const res = await main.post('/_/dashboard/nodes', { type: 'site', name: 'hot-page.html', html: PAGE });
  assert.equal(res.status, 201, res.text);
  pageId = res.json.node.id;
  owner = await main.enter(docHost);
});
after(() => kiln.stop());

/** A new visitor: no cookies at all. */
const visitor = () => kiln.client(docHost);

/** Answers served by the hot path so far (this process's metrics, read from loopback). */
const fromMemory = () => hotAnswers(kiln.client());

/** What a client sees of an answer, without the Date header. */
const seen = (r: Res) => ({
  status: r.status,
  headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'date')),
  body: r.body.toString('utf8'),
});

test('a visitor without cookies gets, from memory, exactly what the route answered: 200, HEAD, 304, and no Set-Cookie once the cookie is known', async () => {
  // The account's first request starts watching its changes; answers are kept once that watch is live
  // (with Redis, when the subscription is confirmed: on a busy machine, some requests later).
  await until(
    async () => {
      const n = await fromMemory();
      await visitor().get('/hot-page.html');
      return (await fromMemory()) > n;
    },
    { what: 'an answer kept in memory' },
  );
  const first = visitor();
  assert.equal((await first.get('/hot-page.html')).status, 200);
  // The route's answer, forced past the hot path by a cookie it does not know.
  const routed = await visitor().request('GET', '/hot-page.html', { headers: { cookie: 'unrelated=1' } });
  assert.equal(routed.status, 200);
  assert.equal(routed.body.toString(), PAGE);
  const before = await fromMemory();

  const again = await visitor().get('/hot-page.html');
  assert.deepEqual(seen(again), seen(routed));
  assert.equal(await fromMemory(), before + 1, 'the second answer came from the hot path');

  // The route's own answers for the same requests, forced past the hot path by a cookie it does not know.
  const routedOnly = (opts: { method?: string; headers?: Record<string, string> } = {}) =>
    visitor().request(opts.method ?? 'GET', '/hot-page.html', {
      headers: { cookie: 'unrelated=1', ...opts.headers },
    });
  const etag = routed.headers.etag!;
  const cases: Array<[string, { method?: string; headers?: Record<string, string> }]> = [
    ['HEAD', { method: 'HEAD' }],
    ['304', { headers: { 'if-none-match': etag } }],
    ['weak 304', { headers: { 'if-none-match': `W/${etag}` } }],
    ['another tag', { headers: { 'if-none-match': '"0000000000000000"' } }],
  ];
  for (const [name, opts] of cases) {
    const expected = await routedOnly(opts);
    const n = await fromMemory();
    const hot = await visitor().request(opts.method ?? 'GET', '/hot-page.html', { headers: opts.headers });
    assert.equal(await fromMemory(), n + 1, `${name}: from the hot path`);
    assert.deepEqual(seen(hot), seen(expected), name);
  }

  // The first visitor now holds `currentResource=hot-page`: the same answer without Set-Cookie, as the route.
  const known = await first.get('/hot-page.html');
  assert.equal(known.status, 200);
  assert.equal(known.headers['set-cookie'], undefined);
  assert.equal(known.body.toString(), PAGE);
});

test('a save is served at once: the next visitor gets the new bytes and ETag', async () => {
  await visitor().get('/hot-page.html');
  const v2 = PAGE.replace('first', 'second');
  const saved = await owner.post('/_/save', v2, {
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${docHost}/hot-page.html` },
  });
  assert.equal(saved.status, 200, saved.text);
  const res = await visitor().get('/hot-page.html');
  assert.equal(res.body.toString(), v2);
  assert.equal(res.headers.etag, `"${saved.json.etag}"`);
  // And kept again afterwards. With Redis the save's own event comes back a moment later and drops what
  // was kept meanwhile (harmless: the next visitor gets the route's answer), so this waits for a hit.
  await until(
    async () => {
      const n = await fromMemory();
      assert.equal((await visitor().get('/hot-page.html')).body.toString(), v2);
      return (await fromMemory()) === n + 1;
    },
    { what: 'the new page kept and answered from memory' },
  );
});

test('made private: visitors get 404 at once, the owner still the page; public again: served again', async () => {
  await visitor().get('/hot-page.html');
  await visitor().get('/hot-page.html');
  const priv = await main.post(`/_/dashboard/nodes/${pageId}/visibility`, { visibility: 'private' });
  assert.ok(priv.status < 300, priv.text);
  assert.equal((await visitor().get('/hot-page.html')).status, 404);
  assert.equal((await visitor().request('HEAD', '/hot-page.html')).status, 404);
  assert.equal((await owner.get('/hot-page.html')).status, 200);
  const pub = await main.post(`/_/dashboard/nodes/${pageId}/visibility`, { visibility: 'public' });
  assert.ok(pub.status < 300, pub.text);
  assert.equal((await visitor().get('/hot-page.html')).status, 200);
});

test('the owner, signed in, never gets a kept answer: the page comes with the edit cookie', async () => {
  await visitor().get('/hot-page.html');
  const res = await owner.get('/hot-page.html');
  assert.equal(res.status, 200);
  assert.ok(res.setCookies.some((c) => c.startsWith('isAdminOfCurrentResource=true')));
});

test('paths below a document (single-page routes) are answered by the route, never kept', async () => {
  await visitor().get('/hot-page.html/some/route');
  const n = await fromMemory();
  const res = await visitor().get('/hot-page.html/some/route');
  assert.equal(res.status, 200);
  assert.equal(await fromMemory(), n);
});

test('renamed, then deleted: the old address stops serving the kept page at once', async () => {
  const created = await main.post('/_/dashboard/nodes', { type: 'site', name: 'hot-moving.html', html: PAGE });
  assert.equal(created.status, 201, created.text);
  const id = created.json.node.id;
  await visitor().get('/hot-moving.html');
  assert.equal((await visitor().get('/hot-moving.html')).status, 200);
  const renamed = await main.post(`/_/dashboard/nodes/${id}/rename`, { name: 'hot-moved.html' });
  assert.ok(renamed.status < 300, renamed.text);
  const old = await visitor().get('/hot-moving.html');
  assert.equal(old.status, 302, 'the old address leads to the new one');
  assert.equal(old.headers.location, '/hot-moved.html');
  await visitor().get('/hot-moved.html');
  assert.equal((await visitor().get('/hot-moved.html')).status, 200);
  const deleted = await main.post(`/_/dashboard/nodes/${id}/delete`, {});
  assert.ok(deleted.status < 300, deleted.text);
  assert.equal((await visitor().get('/hot-moved.html')).status, 404);
});

test('data API answers (?data= and /_/api) come from memory after the first, with X-Cache HIT and Age, whoever asks; a save or going private changes them at once', async () => {
  const html = (title: string) =>
    `<!doctype html><html><head><title>${title}</title><script type="application/json" data-rules-name="api" data-rules-version="1">{"t": "title"}</script></head><body><h1>${title}</h1></body></html>`;
  const created = await main.post('/_/dashboard/nodes', { type: 'site', name: 'hot-data.html', html: html('one') });
  assert.equal(created.status, 201, created.text);
  const id = created.json.node.id;
  const urls = [`/hot-data.html?data=${encodeURIComponent('{t: title, h: h1}')}`, '/_/api/hot-data.html'];
  await visitor().get(urls[0]); // starts the account's watch if nothing did yet
  for (const url of urls) {
    const routed = await visitor().get(url);
    assert.equal(routed.status, 200, routed.text);
    const n = await fromMemory();
    // The owner's own browser, cookies and all: data answers depend on none.
    const hot = await owner.get(url);
    assert.equal(await fromMemory(), n + 1, `${url}: from memory`);
    assert.equal(hot.headers['x-cache'], 'HIT');
    assert.match(hot.headers.age ?? '', /^\d+$/);
    const without = (r: Res) => {
      const { headers, ...rest } = seen(r);
      const { 'x-cache': _x, age: _a, ...kept } = headers;
      return { ...rest, headers: kept };
    };
    assert.deepEqual(without(hot), without(routed), url);
    const notModified = await visitor().get(url, { headers: { 'if-none-match': routed.headers.etag! } });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body.length, 0);
    assert.equal(notModified.headers.etag, routed.headers.etag);
  }
  const saved = await owner.post('/_/save', html('two'), {
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${docHost}/hot-data.html` },
  });
  assert.equal(saved.status, 200, saved.text);
  const after = await visitor().get(urls[0]);
  assert.equal(after.headers['x-cache'], 'MISS');
  assert.deepEqual(after.json, { t: 'two', h: 'two' });
  assert.deepEqual((await visitor().get(urls[1])).json, { t: 'two' });
  await visitor().get(urls[1]);
  const priv = await main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility: 'private' });
  assert.ok(priv.status < 300, priv.text);
  for (const url of urls) assert.equal((await visitor().get(url)).status, 404, url);
});

test('in the process that saved, the next visitor never gets the kept answer of before the save, even before the event comes back from the bus', async () => {
  const created = await main.post('/_/dashboard/nodes', { type: 'site', name: 'hot-quick.html', html: PAGE });
  assert.equal(created.status, 201, created.text);
  const id = created.json.node.id;
  for (let i = 0; i < 20; i++) {
    await visitor().get('/hot-quick.html');
    await visitor().get('/hot-quick.html'); // kept (or served from memory)
    const html = PAGE.replace('first', `quick ${i}`);
    await saveDocument(kiln.services, {
      nodeId: id,
      bytes: Buffer.from(html),
      by: { kind: 'browser', accountId: null, writer: null },
    });
    assert.equal((await visitor().get('/hot-quick.html')).body.toString(), html, `save ${i}`);
  }
});
