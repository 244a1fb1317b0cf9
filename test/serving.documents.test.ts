// Serving documents on their hosts: exact bytes, strong ETag, 304, HEAD, `/` and the root fallback,
// the cookies page script reads, traversal refusals, the main app's catch-all, custom domains.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import type { Client, Res } from './support/client.ts';
import { checksum } from '../src/core/checksum.ts';
import { saveDocument } from '../src/save/pipeline.ts';

let kiln: TestKiln;
let alice: { id: number; username: string };
let main: Client; // alice's browser on the main app
let host: Client; // the same browser on alice's document host
let anon: Client; // a stranger, not signed in
const INDEX = '<!DOCTYPE html>\n<html><head><title>Alice</title></head><body>root ✓</body></html>\n';
const APP = '<!doctype html><html><body><script>document.title=location.pathname</script>app</body></html>';
let appId = 0;

before(async () => {
  kiln = await startKiln();
  main = kiln.client();
  alice = await signedIn(kiln, main);
  host = main.on(kiln.hostOf(alice.username));
  anon = kiln.client(kiln.hostOf(alice.username));
  // Document names are unique across the whole instance: only alice has index.html here.
  for (const [name, html] of [
    ['index.html', INDEX],
    ['app.html', APP],
    ['docs/guide.html', '<html>guide</html>'],
  ]) {
    const res = await main.post('/_/dashboard/nodes', { type: 'site', name, html });
    assert.equal(res.status, 201, res.text);
    if (name === 'app.html') appId = res.json.node.id;
  }
});
after(() => kiln.stop());

const cookie = (res: Res, name: string) => res.setCookies.find((c) => c.startsWith(`${name}=`));

test('GET serves the stored bytes exactly, text/html; charset=utf-8, with the checksum as a strong ETag', async () => {
  const res = await anon.get('/app.html');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, Buffer.from(APP));
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(res.headers.etag, `"${checksum(Buffer.from(APP))}"`);
  assert.match(res.headers.etag!, /^"[0-9a-f]{16}"$/);
  assert.equal(res.headers['content-length'], String(Buffer.byteLength(APP)));
  // Names match case-insensitively, like their uniqueness.
  assert.deepEqual((await anon.get('/APP.html')).body, Buffer.from(APP));
});

test('If-None-Match with the ETag answers 304 without a body; another tag gets the document', async () => {
  const first = await anon.get('/app.html');
  const etag = first.headers.etag!;
  for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
    const res = await anon.get('/app.html', { headers: { 'if-none-match': inm } });
    assert.equal(res.status, 304, inm);
    assert.equal(res.body.length, 0);
    assert.equal(res.headers.etag, etag);
  }
  const miss = await anon.get('/app.html', { headers: { 'if-none-match': '"0000000000000000"' } });
  assert.equal(miss.status, 200);
  assert.deepEqual(miss.body, Buffer.from(APP));
});

test('HEAD answers with the same headers and no body', async () => {
  const get = await anon.get('/app.html');
  const head = await anon.request('HEAD', '/app.html');
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  for (const h of ['content-type', 'etag', 'content-length']) assert.equal(head.headers[h], get.headers[h], h);
  const headRoot = await anon.request('HEAD', '/');
  assert.equal(headRoot.status, 200);
  assert.equal(headRoot.headers.etag, `"${checksum(Buffer.from(INDEX))}"`);
});

test('`/` serves index.html; folders and unknown paths render the root document with 200; a path through a document serves it', async () => {
  const root = await anon.get('/');
  assert.equal(root.status, 200);
  assert.equal(root.text, INDEX);
  for (const path of ['/docs', '/docs/', '/no/such/page', '/missing.html', '/docs/missing.html', '/deep/route?x=1']) {
    const res = await anon.get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.text, INDEX, path);
  }
  assert.equal((await anon.get('/docs/guide.html')).text, '<html>guide</html>');
  // A single-page app's own routes below a document get that document (what the save route resolves too).
  assert.equal((await anon.get('/app.html/settings/profile')).text, APP);
});

test('an account’s own 404.html answers missing paths with status 404 (every account may have one); its owner sees a notice with "Create this document"', async () => {
  const c = kiln.client();
  const carol = await signedIn(kiln, c);
  const carolHost = kiln.hostOf(carol.username);
  const visitor = kiln.client(carolHost);
  const owner = c.on(carolHost);
  const NOT_FOUND = '<!doctype html><html><body><h1>Lost?</h1></body></html>';
  assert.equal((await c.post('/_/dashboard/nodes', { type: 'site', name: 'index.html', html: INDEX })).status, 201);
  // The spec's fallback stays the default: the root document, 200, so page script can route.
  assert.equal((await visitor.get('/no/such/page')).status, 200);
  // The owner opening that address in a browser: a notice (404), never the editable root page.
  const navigate = { headers: { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate' } };
  const notice = await owner.page('/notes/todo.html', navigate);
  assert.equal(notice.status, 404);
  assert.match(notice.text, /Nothing is at <code>\/notes\/todo\.html<\/code>/);
  assert.match(notice.text, /dashboard\?new=notes%2Ftodo\.html/);
  assert.match(notice.text, /Make a <code>404\.html<\/code>/);
  assert.doesNotMatch(notice.text, /root ✓/);
  // A script of the owner's page (not a page load) still gets the root document, as any visitor.
  assert.equal((await owner.get('/no/such/page')).text, INDEX);

  // With a 404.html (alice has none; bob may have one too: the name is unique per account only).
  const made = await c.post('/_/dashboard/nodes', { type: 'site', name: '404.html', html: NOT_FOUND });
  assert.equal(made.status, 201, made.text);
  const b = kiln.client();
  await signedIn(kiln, b);
  assert.equal((await b.post('/_/dashboard/nodes', { type: 'site', name: '404.html', html: NOT_FOUND })).status, 201);
  for (const path of ['/no/such/page', '/missing.html', '/docs/']) {
    const res = await visitor.get(path);
    assert.equal(res.status, 404, path);
    assert.equal(res.text, NOT_FOUND, path);
  }
  // No 304 for a missing address, whatever the browser kept.
  const again = await visitor.get('/missing.html', {
    headers: { 'if-none-match': `"${checksum(Buffer.from(NOT_FOUND))}"` },
  });
  assert.equal(again.status, 404);
  assert.equal((await visitor.get('/')).text, INDEX, '`/` is still the home page');
  assert.equal((await visitor.get('/404.html')).status, 200, 'the page itself, asked for by name');
  assert.match(
    (await owner.page('/gone', navigate)).text,
    /Visitors get your <code>404\.html<\/code> here, with status 404/,
  );
  const dashboard = await c.page('/_/dashboard');
  assert.match(dashboard.text, /answer with your <code>404\.html<\/code> \(status 404\)/);
});

test('an account without index.html: `/` and unknown paths answer 404', async () => {
  const c = kiln.client();
  const bob = await signedIn(kiln, c);
  await c.post('/_/dashboard/nodes', { type: 'site', name: 'bob-only.html', html: '<html>bob</html>' });
  const bobHost = kiln.client(kiln.hostOf(bob.username));
  assert.equal((await bobHost.get('/')).status, 404);
  assert.equal((await bobHost.get('/anything')).status, 404);
  const html404 = await bobHost.page('/anything');
  assert.equal(html404.status, 404);
  assert.match(html404.headers['content-type'] ?? '', /text\/html/);
  assert.equal((await bobHost.get('/bob-only.html')).text, '<html>bob</html>');
  // Another account's document is not reachable through this host.
  assert.equal((await bobHost.get('/app.html')).status, 404);
});

test('cookies: the owner gets isAdminOfCurrentResource=true (script-readable, host-only) and currentResource', async () => {
  const res = await host.get('/app.html');
  const admin = cookie(res, 'isAdminOfCurrentResource');
  assert.ok(admin, res.setCookies.join('\n'));
  assert.match(admin!, /^isAdminOfCurrentResource=true;/);
  assert.doesNotMatch(admin!, /HttpOnly/i);
  assert.doesNotMatch(admin!, /Domain=/i);
  assert.match(admin!, /Path=\//);
  assert.equal(
    JSON.parse(decodeURIComponent(host.jar.get('isAdminOfCurrentResource', kiln.hostOf(alice.username))!)),
    true,
  );
  const resource = cookie(res, 'currentResource');
  assert.match(resource!, /^currentResource=app;/);
  assert.doesNotMatch(resource!, /HttpOnly/i);
  assert.match(cookie(await host.get('/'), 'currentResource')!, /^currentResource=index;/);
  // A 304 keeps them current too.
  const again = await host.get('/docs/guide.html', {
    headers: { 'if-none-match': (await host.get('/docs/guide.html')).headers.etag! },
  });
  assert.equal(again.status, 304);
});

test("the owner's toolbar goes just before the last </body>, in any case, or at the end; the bytes around it stay", async () => {
  for (const [name, html, before] of [
    ['tb-upper.html', '<HTML><Body>caf\u00e9 <p>x</p></BODY></HTML>\n', '<HTML><Body>caf\u00e9 <p>x</p>'],
    ['tb-two.html', '<html><body>a</body><!-- </body> --></body>tail', '<html><body>a</body><!-- </body> -->'],
    ['tb-none.html', '<p>no body close <b>here</b></p>', '<p>no body close <b>here</b></p>'],
    ['tb-start.html', '</body>rest', ''],
  ]) {
    const created = await main.post('/_/dashboard/nodes', { type: 'site', name, html });
    assert.equal(created.status, 201, created.text);
    const page = await host.get(`/${name}`, { headers: { 'sec-fetch-dest': 'document' } });
    assert.equal(page.status, 200);
    const text = page.body.toString('utf8');
    const tag = text.match(
      /<script src="\/_\/assets\/toolbar\.js\?[^"]*" data-kiln-toolbar data-etag="[0-9a-f]{16}" no-save save-remove><\/script>/,
    );
    assert.ok(tag, `${name}: the owner gets the toolbar`);
    assert.equal(text.slice(0, tag.index), before, `${name}: what comes before the tag`);
    assert.equal(
      text.slice(0, tag.index) + text.slice(tag.index! + tag[0].length),
      html,
      `${name}: the rest is the stored page`,
    );
    assert.equal((await anon.get(`/${name}`)).body.toString('utf8'), html, `${name}: a visitor gets the stored bytes`);
    // The page goes out in pieces (never joined into a copy): its length is still announced, HEAD too.
    assert.equal(page.headers['content-length'], String(page.body.length), `${name}: Content-Length`);
    const head = await host.request('HEAD', `/${name}`, { headers: { 'sec-fetch-dest': 'document' } });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], String(page.body.length), `${name}: HEAD's Content-Length`);
    assert.equal(head.headers.etag, page.headers.etag);
    assert.equal(head.body.length, 0);
  }
});

test('cookies: a stranger or a visitor gets no admin cookie, and a stale one is removed (never set to false)', async () => {
  const visitor = kiln.client(kiln.hostOf(alice.username));
  const res = await visitor.get('/app.html');
  assert.equal(cookie(res, 'isAdminOfCurrentResource'), undefined);
  assert.match(cookie(res, 'currentResource')!, /^currentResource=app;/);
  // Already current: not sent again.
  assert.equal(cookie(await visitor.get('/app.html'), 'currentResource'), undefined);
  const stale = await anon.get('/app.html', { headers: { cookie: 'isAdminOfCurrentResource=true' } });
  const cleared = cookie(stale, 'isAdminOfCurrentResource');
  assert.ok(cleared);
  assert.match(cleared!, /Expires=Thu, 01 Jan 1970|Max-Age=0/i);
  assert.doesNotMatch(cleared!, /=false/);
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  const theirs = await stranger.on(kiln.hostOf(alice.username)).get('/app.html');
  assert.equal(theirs.status, 200);
  assert.equal(cookie(theirs, 'isAdminOfCurrentResource'), undefined);
});

test('a save changes the served bytes and ETag at once (no stale cache)', async () => {
  const before = await anon.get('/app.html');
  const next = Buffer.from('<html><body>second version</body></html>');
  await saveDocument(kiln.services, {
    nodeId: appId,
    bytes: next,
    by: { kind: 'browser', accountId: alice.id, writer: null },
  });
  const after = await anon.get('/app.html', { headers: { 'if-none-match': before.headers.etag! } });
  assert.equal(after.status, 200);
  assert.deepEqual(after.body, next);
  assert.equal(after.headers.etag, `"${checksum(next)}"`);
  await saveDocument(kiln.services, {
    nodeId: appId,
    bytes: Buffer.from(APP),
    by: { kind: 'browser', accountId: alice.id, writer: null },
  });
  assert.deepEqual((await anon.get('/app.html')).body, Buffer.from(APP));
});

test('path traversal of any kind answers 400: "..", encoded dots and slashes, backslashes, NUL, bad escapes', async () => {
  for (const path of [
    '/../index.html',
    '/docs/../app.html',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/docs/%2E%2E%2Fapp.html',
    '/a%5cb.html',
    '/a\\b',
    '/x%00.html',
    '/%E0%A4%A',
    '/./app.html',
  ]) {
    const res = await anon.get(path);
    assert.equal(res.status, 400, path);
    assert.equal(res.json.msgType, 'error');
  }
});

test('`/_/…` paths no route took answer 404 on a document host, not the root document', async () => {
  const res = await anon.get('/_/no-such-route');
  assert.equal(res.status, 404);
  assert.equal(res.json.msgType, 'error');
});

test('main app: GET / is the home page; other unknown paths are 404', async () => {
  const home = await kiln.client().page('/');
  assert.equal(home.status, 200);
  assert.match(home.headers['content-type'] ?? '', /text\/html/);
  const signedInHome = await main.page('/');
  assert.equal(signedInHome.status, 302);
  assert.equal(signedInHome.headers.location, '/_/dashboard');
  const missing = await kiln.client().get('/app.html');
  assert.equal(missing.status, 404);
  assert.deepEqual(Object.keys(missing.json).sort(), ['code', 'msg', 'msgType']);
});

test("an active custom domain serves its account's documents; a pending one is an unknown host", async () => {
  const { db } = kiln.services.database;
  const now = new Date().toISOString();
  await db
    .insertInto('domains')
    .values({
      account_id: alice.id,
      domain: 'alice-docs.example',
      status: 'active',
      ssl_status: null,
      provider_id: null,
      dns_instructions: '',
      created_at: now,
    })
    .execute();
  await db
    .insertInto('domains')
    .values({
      account_id: alice.id,
      domain: 'pending.example',
      status: 'pending',
      ssl_status: null,
      provider_id: null,
      dns_instructions: '',
      created_at: now,
    })
    .execute();
  const res = await kiln.client('alice-docs.example').get('/app.html');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, Buffer.from(APP));
  assert.equal((await kiln.client('alice-docs.example').get('/')).text, INDEX);
  assert.equal((await kiln.client('pending.example').get('/app.html')).status, 404);
});
