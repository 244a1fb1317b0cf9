// GET {document_host}/_/api/<document_path>: the JSON a document's `api` rules tag defines, through HTTP.
// The grammar forms (a few of each; the engine has its own unit tests), folders and the root document,
// every failure status with its body, private = missing, CORS and preflight.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { addDocument, apiTag, assertDataAnswer, assertFailure, owner, type Owner } from './data.support.ts';

let kiln: TestKiln;
let alice: Owner;
let bob: Owner;

const CATALOG_RULES = {
  title: 'h1',
  lang: 'html@lang',
  rootClass: '@class',
  link: 'nav a:nth-of-type(2)@href',
  mail: 'a[href="mailto:me@example.org"]@href',
  links: 'nav a[]',
  missing: '.does-not-exist',
  missingAttr: 'h1@data-nothing',
  missingList: '.nothing[]',
  products: ['li.product', { id: '@data-id', name: '.name', price: '.price', tags: '.tag[]', badge: '.badge' }],
  stats: { total: '#stats .total', currency: '#stats@data-currency', nested: { deeper: '#stats .total@textContent' } },
  props: {
    text: '#intro@textContent',
    inner: '#intro@innerHTML',
    outer: '#intro em@outerHTML',
    value: 'input[name=q]@value',
    checked: 'input[name=ok]@checked',
  },
  scripts: 'script[]',
};

const CATALOG = `<!doctype html>
<html lang="en" class="root-class">
<head><title>Catalog</title>${apiTag(CATALOG_RULES)}</head>
<body>
  <h1>  The catalog  </h1>
  <nav><a href="/one">One</a><a href="/two">Two</a><a href="mailto:me@example.org">Mail</a></nav>
  <p id="intro">Hello <em>there</em></p>
  <input name="q" value="kiln"><input type="checkbox" name="ok" checked>
  <ul>
    <li class="product" data-id="p1"><span class="name">Pen</span><span class="price">1.50</span><span class="tag">a</span><span class="tag">b</span></li>
    <li class="product" data-id="p2"><span class="name">Ink</span><span class="price">3.00</span><b class="badge">new</b></li>
  </ul>
  <div id="stats" data-currency="EUR"><span class="total">2</span></div>
  <script>console.log('app')</script>
</body>
</html>`;

before(async () => {
  kiln = await startKiln();
  alice = await owner(kiln);
  bob = await owner(kiln);
  await addDocument(kiln, alice, 'catalog.html', CATALOG);
  await addDocument(
    kiln,
    alice,
    'index.html',
    `<html><head>${apiTag({ page: 'h1' })}</head><body><h1>Home</h1></body></html>`,
  );
  await addDocument(
    kiln,
    alice,
    'shop/2024/report.html',
    `<html><head>${apiTag({ heading: 'h2' })}</head><body><h2>Deep</h2></body></html>`,
  );
  await addDocument(kiln, alice, 'no-tag.html', '<html><body><h1>Nothing to see</h1></body></html>');
  await addDocument(
    kiln,
    alice,
    'other-tag.html',
    `<html><head><script type="application/json" data-rules-name="form" data-rules-version="1">{"a":"h1"}</script></head><body><h1>x</h1></body></html>`,
  );
  await addDocument(
    kiln,
    alice,
    'bad-json.html',
    `<html><head>${apiTag('{"title": "h1",, }}')}</head><body><h1>x</h1></body></html>`,
  );
  await addDocument(
    kiln,
    alice,
    'lenient-tag.html',
    `<html><head>${apiTag("{title: 'h1', items: li[],}")}</head><body><h1>x</h1><li>1</li><li>2</li></body></html>`,
  );
  await addDocument(
    kiln,
    alice,
    'version-2.html',
    `<html><head>${apiTag({ title: 'h1' }, '2')}</head><body><h1>x</h1></body></html>`,
  );
  await addDocument(
    kiln,
    alice,
    'no-version.html',
    `<html><head><script type="application/json" data-rules-name="api">{"t":"h1"}</script></head><body><h1>x</h1></body></html>`,
  );
  await addDocument(
    kiln,
    alice,
    'bad-selector.html',
    `<html><head>${apiTag({ title: 'p:nth-childx(2)' })}</head><body><p>x</p></body></html>`,
  );
  let deep: unknown = 'h1';
  for (let i = 0; i < 22; i++) deep = { d: deep };
  await addDocument(kiln, alice, 'too-deep.html', `<html><head>${apiTag(deep)}</head><body><h1>x</h1></body></html>`);
  const hugeRules = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`key${i}`, `.c${i} span`]));
  await addDocument(kiln, alice, 'huge-tag.html', `<html><head>${apiTag(hugeRules)}</head><body></body></html>`);
  await addDocument(
    kiln,
    alice,
    'secret.html',
    `<html><head>${apiTag({ title: 'h1' })}</head><body><h1>Secret</h1></body></html>`,
    { private: true },
  );
  await addDocument(
    kiln,
    bob,
    'bobs.html',
    `<html><head>${apiTag({ title: 'h1' })}</head><body><h1>Bob</h1></body></html>`,
  );
});
after(() => kiln.stop());

test('the api tag defines the JSON: every grammar form, nulls for missing elements, rules tags never match', async () => {
  const res = await alice.anonymous.get('/_/api/catalog.html');
  assertDataAnswer(res, 200);
  assert.deepEqual(res.json, {
    title: 'The catalog',
    lang: 'en',
    rootClass: null,
    link: '/two',
    mail: 'mailto:me@example.org',
    links: ['One', 'Two', 'Mail'],
    missing: null,
    missingAttr: null,
    missingList: [],
    products: [
      { id: 'p1', name: 'Pen', price: '1.50', tags: ['a', 'b'], badge: null },
      { id: 'p2', name: 'Ink', price: '3.00', tags: [], badge: 'new' },
    ],
    stats: { total: '2', currency: 'EUR', nested: { deeper: '2' } },
    props: {
      text: 'Hello there',
      inner: 'Hello <em>there</em>',
      outer: '<em>there</em>',
      value: 'kiln',
      checked: 'true',
    },
    scripts: ["console.log('app')"],
  });
  // Keys come in rule order.
  assert.deepEqual(Object.keys(res.json), Object.keys(CATALOG_RULES));
  assert.match(String(res.headers.etag), /^"[0-9a-f]{16}-[0-9a-f]{16}"$/);
});

test('HEAD answers the same status and headers without a body', async () => {
  const res = await alice.anonymous.request('HEAD', '/_/api/catalog.html');
  assert.equal(res.status, 200);
  assert.equal(res.body.length, 0);
  assert.equal(res.headers['access-control-allow-origin'], '*');
  assert.match(String(res.headers.etag), /^"/);
});

test('/_/api and /_/api/ mean index.html; folders are part of the path; names are case-insensitive', async () => {
  for (const path of ['/_/api', '/_/api/', '/_/api/index.html']) {
    const res = await alice.anonymous.get(path);
    assertDataAnswer(res, 200);
    assert.deepEqual(res.json, { page: 'Home' }, path);
  }
  const deep = await alice.anonymous.get('/_/api/shop/2024/report.html');
  assertDataAnswer(deep, 200);
  assert.deepEqual(deep.json, { heading: 'Deep' });
  assert.deepEqual((await alice.anonymous.get('/_/api/Shop/2024/Report.html')).json, { heading: 'Deep' });
  assert.deepEqual((await alice.anonymous.get('/_/api/shop%2F2024/report.html')).json, { heading: 'Deep' });
});

test('the tag body is read leniently, like ?data=', async () => {
  const res = await alice.anonymous.get('/_/api/lenient-tag.html');
  assertDataAnswer(res, 200);
  assert.deepEqual(res.json, { title: 'x', items: ['1', '2'] });
});

test('no api rules tag: 400 with error "No api rules tag" (a tag with another name does not count)', async () => {
  for (const path of ['/_/api/no-tag.html', '/_/api/other-tag.html']) {
    const res = await alice.anonymous.get(path);
    assertFailure(res, 400, 'no-rules-tag', 'No api rules tag');
  }
});

test('an invalid tag: 400 whose error says which (syntax, version, selector, depth); 413 for a tag too large', async () => {
  assertFailure(await alice.anonymous.get('/_/api/bad-json.html'), 400, 'rules-syntax', /syntax|JSON/i);
  assertFailure(await alice.anonymous.get('/_/api/version-2.html'), 400, 'rules-version', /version.*"2"/i);
  assertFailure(await alice.anonymous.get('/_/api/no-version.html'), 400, 'rules-version', /version/i);
  assertFailure(await alice.anonymous.get('/_/api/bad-selector.html'), 400, 'selector', /nth-childx/);
  assertFailure(await alice.anonymous.get('/_/api/too-deep.html'), 400, 'rules-depth', /depth/i);
  assertFailure(await alice.anonymous.get('/_/api/huge-tag.html'), 413, 'too-large', /too large/i);
});

test('a private document and a missing one answer the same 404, to everyone, the owner included', async () => {
  const missing = await alice.anonymous.get('/_/api/nothing-here.html');
  const privateDoc = await alice.anonymous.get('/_/api/secret.html');
  const ownerAsks = await alice.signedIn.get('/_/api/secret.html');
  const otherAccount = await alice.anonymous.get('/_/api/bobs.html');
  for (const res of [missing, privateDoc, ownerAsks, otherAccount]) {
    assertFailure(res, 404, 'not-found');
    assert.equal(res.text, missing.text);
    assert.equal(res.headers['cache-control'], missing.headers['cache-control']);
  }
  // The owner still sees the page itself (the data API is the public face only).
  assert.equal((await alice.signedIn.get('/secret.html')).status, 200);
  // A folder, a path through a document, and an upload-like path are not documents either.
  for (const path of ['/_/api/shop', '/_/api/shop/2024', '/_/api/catalog.html/more', '/_/api/shop/2024/nothing.html']) {
    const res = await alice.anonymous.get(path);
    assertFailure(res, 404, 'not-found');
    assert.equal(res.text, missing.text, path);
  }
});

test('the same document on its own host only; the main host has no data API', async () => {
  assert.deepEqual((await bob.anonymous.get('/_/api/bobs.html')).json, { title: 'Bob' });
  const main = await kiln.client().get('/_/api/catalog.html');
  assertFailure(main, 404, 'not-found');
});

test('answers are JSON even for a browser asking for HTML; traversal is refused with 400', async () => {
  const res = await alice.anonymous.page('/_/api/no-tag.html');
  assertFailure(res, 400, 'no-rules-tag', 'No api rules tag');
  const ok = await alice.anonymous.page('/_/api/catalog.html');
  assertDataAnswer(ok, 200);
  const traversal = await alice.anonymous.get('/_/api/shop/%2e%2e/catalog.html');
  assertFailure(traversal, 400, 'invalid-path');
});

test('CORS: any origin reads answers and failures; preflight answers 204 with the methods and asked headers', async () => {
  const origin = { origin: 'https://elsewhere.example' };
  const ok = await alice.anonymous.get('/_/api/catalog.html', { headers: origin });
  assertDataAnswer(ok, 200);
  assert.match(String(ok.headers['access-control-expose-headers']), /ETag/i);
  assertFailure(await alice.anonymous.get('/_/api/no-tag.html', { headers: origin }), 400, 'no-rules-tag');
  assertFailure(await alice.anonymous.get('/_/api/secret.html', { headers: origin }), 404, 'not-found');

  for (const path of ['/_/api/catalog.html', '/_/api', '/_/api/shop/2024/report.html']) {
    const pre = await alice.anonymous.request('OPTIONS', path, {
      headers: {
        ...origin,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'if-none-match, x-requested-with',
      },
    });
    assert.equal(pre.status, 204, path);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.match(String(pre.headers['access-control-allow-methods']), /\bGET\b/);
    assert.equal(pre.headers['access-control-allow-headers'], 'if-none-match, x-requested-with');
    assert.equal(pre.headers['access-control-allow-credentials'], undefined);
    assert.ok(Number(pre.headers['access-control-max-age']) > 0);
  }
});

test('there is no write route under /_/api', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    const res = await alice.signedIn.request(method, '/_/api/catalog.html');
    assert.equal(res.status, 404, `${method}: ${res.text}`);
  }
  assert.equal((await alice.anonymous.get('/_/api/catalog.html')).json.title, 'The catalog');
});
