// GET {document_host}/<document_path>?data=<rules>: the same extraction with rules from the query, through HTTP.
// The lenient syntax, page-style paths, documents with and without a tag, every failure status, private =
// missing, CORS and preflight, and the plain page still served without `data`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { addDocument, apiTag, assertDataAnswer, assertFailure, dataUrl, owner, type Owner } from './data.support.ts';

let kiln: TestKiln;
let alice: Owner;

const SHOP = `<!doctype html>
<html lang="fr">
<head><title>Shop</title>${apiTag({ fromTag: 'title' })}</head>
<body>
  <h1>Shop <small>open</small></h1>
  <nav><a href="/a">A</a><a href="/b">B</a><a href="mailto:x@y.org">Mail</a></nav>
  <ul>
    <li class="item" data-id="1"><b>One</b><i>1.00</i></li>
    <li class="item" data-id="2"><b>Two</b><i>2.00</i></li>
    <li class="item" data-id="3"><b>Three</b><i>3.00</i></li>
  </ul>
  <form><input name="q" value="pens"><input type="checkbox" name="all"></form>
</body>
</html>`;

before(async () => {
  kiln = await startKiln();
  alice = await owner(kiln);
  await addDocument(kiln, alice, 'shop.html', SHOP);
  await addDocument(kiln, alice, 'index.html', '<html><body><h1>Root page</h1></body></html>');
  await addDocument(
    kiln,
    alice,
    'blog/posts/first.html',
    '<html><body><article><h2>First post</h2><p>Body</p></article></body></html>',
  );
  await addDocument(kiln, alice, 'hidden.html', '<html><body><h1>Hidden</h1></body></html>', { private: true });
});
after(() => kiln.stop());

test('strict JSON rules: text, attribute, list, list of shaped objects, nested objects, DOM properties', async () => {
  const rules = {
    title: 'h1',
    lang: 'html@lang',
    second: 'nav a:nth-of-type(2)@href',
    links: 'nav a[]',
    items: ['li.item', { id: '@data-id', name: 'b', price: 'i', text: '@textContent' }],
    form: { q: 'input[name=q]@value', all: 'input[name=all]@checked', html: 'form input:first-child@outerHTML' },
    missing: 'table td',
  };
  const res = await alice.anonymous.get(dataUrl('/shop.html', rules));
  assertDataAnswer(res, 200);
  assert.deepEqual(res.json, {
    title: 'Shop open',
    lang: 'fr',
    second: '/b',
    links: ['A', 'B', 'Mail'],
    items: [
      { id: '1', name: 'One', price: '1.00', text: 'One1.00' },
      { id: '2', name: 'Two', price: '2.00', text: 'Two2.00' },
      { id: '3', name: 'Three', price: '3.00', text: 'Three3.00' },
    ],
    form: { q: 'pens', all: 'false', html: '<input name="q" value="pens">' },
    missing: null,
  });
});

test('lenient syntax: unquoted keys, single quotes, trailing commas, selectors with colons, brackets and @', async () => {
  const rules = `{title: h1 small, 'first': 'li.item:first-child b', third: li:nth-of-type(3) b, mail: a[href^='mailto:']@href, ids: li[data-id]@data-id, names: li.item b[],}`;
  const res = await alice.anonymous.get(dataUrl('/shop.html', rules));
  assertDataAnswer(res, 200);
  assert.deepEqual(res.json, {
    title: 'open',
    first: 'One',
    third: 'Three',
    mail: 'mailto:x@y.org',
    ids: '1',
    names: ['One', 'Two', 'Three'],
  });
});

test('the query is URL-decoded as forms are: "+" is a space', async () => {
  const res = await alice.anonymous.get('/shop.html?data={t:nav+a:last-child}');
  assertDataAnswer(res, 200);
  assert.deepEqual(res.json, { t: 'Mail' });
});

test('works on documents without a rules tag, and uses the query (not the tag) on documents with one', async () => {
  const noTag = await alice.anonymous.get(dataUrl('/blog/posts/first.html', { h: 'article h2', p: 'article p' }));
  assertDataAnswer(noTag, 200);
  assert.deepEqual(noTag.json, { h: 'First post', p: 'Body' });
  const withTag = await alice.anonymous.get(dataUrl('/shop.html', { only: 'title' }));
  assert.deepEqual(withTag.json, { only: 'Shop' });
});

test('page paths: / is index.html, a path through a document reads that document; unknown paths and folders are 404', async () => {
  assert.deepEqual((await alice.anonymous.get(dataUrl('/', { h: 'h1' }))).json, { h: 'Root page' });
  assert.deepEqual((await alice.anonymous.get(dataUrl('/shop.html/spa/route', { h: 'h1 small' }))).json, { h: 'open' });
  const missing = await alice.anonymous.get(dataUrl('/nope.html', { h: 'h1' }));
  assertFailure(missing, 404, 'not-found');
  // The page route renders index.html for these; the data API does not read the fallback.
  for (const path of ['/blog', '/blog/posts', '/some/client/route']) {
    const res = await alice.anonymous.get(dataUrl(path, { h: 'h1' }));
    assertFailure(res, 404, 'not-found');
    assert.equal(res.text, missing.text, path);
    assert.equal((await alice.anonymous.get(path)).status, 200, `${path} still renders the root page`);
  }
});

test("a private document answers the missing document's 404, to everyone, the owner included", async () => {
  const missing = await alice.anonymous.get(dataUrl('/nope.html', { h: 'h1' }));
  for (const res of [
    await alice.anonymous.get(dataUrl('/hidden.html', { h: 'h1' })),
    await alice.signedIn.get(dataUrl('/hidden.html', { h: 'h1' })),
  ]) {
    assertFailure(res, 404, 'not-found');
    assert.equal(res.text, missing.text);
  }
  assert.equal((await alice.signedIn.get('/hidden.html')).status, 200, 'the owner still opens the page');
});

test('bad rules: 400 with the reason (syntax, selector, depth); never 500', async () => {
  assertFailure(await alice.anonymous.get(dataUrl('/shop.html', '{title: "h1"')), 400, 'rules-syntax', /syntax/i);
  assertFailure(
    await alice.anonymous.get(dataUrl('/shop.html', '{"a": "p:nth-childx(2)"}')),
    400,
    'selector',
    /nth-childx/,
  );
  assertFailure(await alice.anonymous.get(dataUrl('/shop.html', '{"a": "li:::b"}')), 400, 'selector');
  let deep = '"h1"';
  for (let i = 0; i < 25; i++) deep = `{"d": ${deep}}`;
  assertFailure(await alice.anonymous.get(dataUrl('/shop.html', deep)), 400, 'rules-depth', /depth/i);
  for (const rules of [
    '[',
    ']',
    '{',
    '@',
    '[]',
    '"',
    "{a: '}",
    '{a: [b, {c: ]}',
    '{"a": "@"}',
    '{"a": "[x"}',
    'null',
    '42',
    '{"a": ["li", 7]}',
  ]) {
    const res = await alice.anonymous.get(dataUrl('/shop.html', rules));
    assert.ok(res.status === 200 || res.status === 400, `${rules}: ${res.status} ${res.text}`);
    assert.equal(res.headers['access-control-allow-origin'], '*');
  }
});

test('an empty or repeated data parameter is a 400; an unrelated query still serves the page', async () => {
  assertFailure(await alice.anonymous.get('/shop.html?data='), 400, 'rules-missing', 'Missing data parameter');
  assertFailure(await alice.anonymous.get('/shop.html?data'), 400, 'rules-missing', 'Missing data parameter');
  assertFailure(await alice.anonymous.get('/shop.html?data=h1&data=h2'), 400, 'rules-syntax');
  for (const path of ['/shop.html', '/shop.html?database=1', '/shop.html?x=data']) {
    const page = await alice.anonymous.get(path);
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.text, SHOP);
  }
});

test('query length is bounded: 4,096 characters answer, 4,097 answer 413', async () => {
  const pad = (n: number) => {
    const base = '{"t":"h1"';
    const rest = n - base.length - 1;
    return `${base}${' '.repeat(rest)}}`;
  };
  assert.equal(pad(4096).length, 4096);
  assertDataAnswer(await alice.anonymous.get(dataUrl('/shop.html', pad(4096))), 200);
  assertFailure(await alice.anonymous.get(dataUrl('/shop.html', pad(4097))), 413, 'too-large', /4096/);
  // Even for a document that does not exist (nothing is looked up for a query this long).
  assertFailure(await alice.anonymous.get(dataUrl('/nope.html', pad(5000))), 413, 'too-large');
});

test('CORS on ?data= answers and failures; preflight on a document URL with data answers 204, without data 404', async () => {
  const origin = { origin: 'https://elsewhere.example' };
  assertDataAnswer(await alice.anonymous.get(dataUrl('/shop.html', { h: 'h1' }), { headers: origin }), 200);
  assertFailure(await alice.anonymous.get(dataUrl('/shop.html', '{h:'), { headers: origin }), 400, 'rules-syntax');
  assertFailure(await alice.anonymous.get(dataUrl('/hidden.html', { h: 'h1' }), { headers: origin }), 404, 'not-found');
  const pre = await alice.anonymous.request('OPTIONS', dataUrl('/shop.html', { h: 'h1' }), {
    headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], '*');
  assert.match(String(pre.headers['access-control-allow-methods']), /\bGET\b/);
  assert.equal(pre.headers['access-control-allow-headers'], 'if-none-match');
  const plain = await alice.anonymous.request('OPTIONS', '/shop.html', {
    headers: { ...origin, 'access-control-request-method': 'GET' },
  });
  assert.equal(plain.status, 404);
  assert.equal(plain.headers['access-control-allow-origin'], undefined);
});

test('the main host has no ?data= API: its home page is unaffected', async () => {
  const res = await kiln.client().get(dataUrl('/', { h: 'h1' }));
  assert.notEqual(res.headers['access-control-allow-origin'], '*');
});
