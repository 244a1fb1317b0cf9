// POST /_/save as the hyperclayjs browser library (1.38.0) sends it: the document as a text body,
// Document-URL and Page-URL headers naming the page; every answer JSON {msg, msgType}.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode, deleteNode, renameNode } from '../src/nodes/tree.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const DOC_V1 = '<!doctype html>\n<html><head><title>v1</title></head><body><p>one</p></body></html>\n';
const checksumOf = (s: string | Buffer) => createHash('sha256').update(s).digest('hex').slice(0, 16);

async function ownerWithDocument(name: string, html = DOC_V1) {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const node = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html,
  });
  const host = kiln.hostOf(person.username);
  const doc = main.on(host);
  const url = `http://${host}/${name}`;
  return { person, node, host, doc, url, main };
}

/** The request hyperclayjs 1.38.0 makes (savePageCore.js): text body, Document-URL + Page-URL + Save-Trigger. */
function browserSave(
  c: ReturnType<typeof kiln.client>,
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
) {
  return c.post('/_/save', body, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': `${url}?editmode=true#top`,
      'page-url': url,
      'save-trigger': 'user',
      origin: new URL(url).origin,
      'sec-fetch-site': 'same-origin',
      ...headers,
    },
  });
}

test('the owner saves; the next load serves the exact bytes; etag is the 16-hex checksum', async () => {
  const { doc, url } = await ownerWithDocument('save-basic.html');
  const v2 = '<!DOCTYPE html><html lang="en"><body>  two \u00e9\u2603  </body></html>';
  const res = await browserSave(doc, url, v2);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.msgType, 'success');
  assert.equal(typeof res.json.msg, 'string');
  assert.equal(res.json.etag, checksumOf(v2));
  const page = await doc.get('/save-basic.html');
  assert.equal(page.status, 200);
  assert.equal(page.text, v2);
  assert.equal(page.headers.etag, `"${checksumOf(v2)}"`);
});

test('Page-URL alone names the document (older documents send only it)', async () => {
  const { doc, url } = await ownerWithDocument('save-pageurl.html');
  const v2 = '<html><body>page-url</body></html>';
  const res = await doc.post('/_/save', v2, { headers: { 'content-type': 'text/plain', 'page-url': url } });
  assert.equal(res.status, 200, res.text);
  assert.equal((await doc.get('/save-pageurl.html')).text, v2);
});

test('a save equal to the stored bytes changes nothing and adds no version', async () => {
  const { doc, url, node } = await ownerWithDocument('save-same.html');
  const res = await browserSave(doc, url, DOC_V1);
  assert.equal(res.status, 200);
  assert.equal(res.json.etag, checksumOf(DOC_V1));
  const versions = await kiln.services.database.db
    .selectFrom('versions')
    .select('id')
    .where('node_id', '=', node.id)
    .execute();
  assert.equal(versions.length, 1);
});

test('a JSON body answers 415; a body without a root <html> answers 422; both change nothing', async () => {
  const { doc, url } = await ownerWithDocument('save-bad.html');
  const json = await doc.post('/_/save', { html: '<html></html>' }, { headers: { 'document-url': url } });
  assert.equal(json.status, 415);
  assert.equal(json.json.msgType, 'error');
  const frag = await browserSave(doc, url, '<div>no root</div>');
  assert.equal(frag.status, 422);
  assert.equal(frag.json.msgType, 'error');
  assert.equal((await doc.get('/save-bad.html')).text, DOC_V1);
});

test('a missing Document-URL answers 400; a document that does not exist answers 404', async () => {
  const { doc, url, host } = await ownerWithDocument('save-missing.html');
  const none = await doc.post('/_/save', '<html></html>', { headers: { 'content-type': 'text/plain' } });
  assert.equal(none.status, 400);
  assert.equal(none.json.msgType, 'error');
  const missing = await browserSave(doc, `http://${host}/nope.html`, '<html></html>');
  assert.equal(missing.status, 404);
  void url;
});

test('only the owner may save: a stranger is refused, nobody signed in gets 401; nothing changes', async () => {
  const { url, host } = await ownerWithDocument('save-owner-only.html');
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  // Signed in elsewhere: no session on this host, so the same answer as nobody.
  const res = await browserSave(stranger.on(host), url, '<html>hijack</html>');
  assert.equal(res.status, 401);
  assert.equal(res.json.msgType, 'error');
  const anon = await browserSave(kiln.client(host), url, '<html>hijack</html>');
  assert.equal(anon.status, 401);
  assert.equal(anon.json.msgType, 'error');
  assert.equal((await kiln.client(host).get('/save-owner-only.html')).text, DOC_V1);
});

// A process keeps the document a save found at each path and skips the lookup next time; the save confirms it
// under the row lock (src/save/at-path.ts). Here the document changes between saves behind the save route's
// back, as another Kiln process would change it: each save must still write what is at its path now.
test('a save after its document was renamed, replaced at its path or deleted writes what is at the path now', async () => {
  const { person, node, doc, url, host } = await ownerWithDocument('save-moves.html');
  const served = async (name: string) => (await kiln.client(host).get(`/${name}`)).text;
  assert.equal((await browserSave(doc, url, '<html>two</html>')).status, 200);
  await renameNode(await actingAs(kiln.services, person.id), { nodeId: node.id, name: 'save-moved.html' });
  const other = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'save-moves.html',
    html: DOC_V1,
  });
  const res = await browserSave(doc, url, '<html>three</html>');
  assert.equal(res.status, 200, res.text);
  assert.equal(await served('save-moves.html'), '<html>three</html>');
  assert.equal(await served('save-moved.html'), '<html>two</html>', 'the renamed document keeps its bytes');
  await deleteNode(await actingAs(kiln.services, person.id), { nodeId: other.id });
  const gone = await browserSave(doc, url, '<html>four</html>');
  assert.equal(gone.status, 404, gone.text);
  assert.equal(gone.json.msgType, 'error');
  assert.equal(await served('save-moved.html'), '<html>two</html>');
});

test('cross-origin writes are refused even with the owner’s cookie (cookies are shared across subdomains)', async () => {
  const { doc, url } = await ownerWithDocument('save-csrf.html');
  const other = `http://evil.${kiln.config.rootDomain}`;
  const byOrigin = await browserSave(doc, url, '<html>x</html>', { origin: other, 'sec-fetch-site': 'same-site' });
  assert.equal(byOrigin.status, 403);
  const bySite = await browserSave(doc, url, '<html>x</html>', { 'sec-fetch-site': 'cross-site' });
  assert.equal(bySite.status, 403);
  assert.equal((await doc.get('/save-csrf.html')).text, DOC_V1);
});

test('If-Match that differs answers 412 {code: conflict, etag, changedBy} and changes nothing', async () => {
  const { doc, url } = await ownerWithDocument('save-ifmatch.html');
  const ok = await browserSave(doc, url, '<html>v2</html>', { 'if-match': `"${checksumOf(DOC_V1)}"` });
  assert.equal(ok.status, 200);
  const stale = await browserSave(doc, url, '<html>v3</html>', { 'if-match': `"${checksumOf(DOC_V1)}"` });
  assert.equal(stale.status, 412);
  assert.equal(stale.json.code, 'conflict');
  assert.equal(stale.json.msgType, 'error');
  assert.equal(stale.json.etag, checksumOf('<html>v2</html>'));
  assert.equal(stale.json.changedBy, 'another-tab');
  assert.equal((await doc.get('/save-ifmatch.html')).text, '<html>v2</html>');
});

test('a body over the 5 MB text cap answers 413 JSON', async () => {
  const { doc, url } = await ownerWithDocument('save-big.html');
  const big = `<html>${'x'.repeat(5 * 1024 * 1024 + 10)}</html>`;
  const res = await browserSave(doc, url, big);
  assert.equal(res.status, 413);
  assert.equal(res.json.msgType, 'error');
});

test('a document in a folder is saved through its full path; SPA routes after .html name the same document', async () => {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const folder = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'folder',
    name: 'notes',
  });
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: folder.id,
    type: 'site',
    name: 'save-in-folder.html',
    html: DOC_V1,
  });
  const host = kiln.hostOf(person.username);
  const res = await browserSave(
    main.on(host),
    `http://${host}/notes/save-in-folder.html/some/route`,
    '<html>deep</html>',
  );
  assert.equal(res.status, 200, res.text);
  assert.equal((await main.on(host).get('/notes/save-in-folder.html')).text, '<html>deep</html>');
});

test('GET /_/meta makes hyperclayjs choose /_/sync and describes the document', async () => {
  const { doc, url } = await ownerWithDocument('save-meta.html');
  const res = await doc.get('/_/meta', { headers: { 'document-url': url } });
  assert.equal(res.status, 200);
  assert.equal(res.json.spec, 1);
  assert.deepEqual(res.json.extensions, ['sync', 'upload', 'format', 'conditional', 'data-loss', 'bus', 'mcp']);
  // The host's message bus (#27); this Kiln has no AI engine of its own.
  assert.deepEqual(res.json.bus, {
    subscribe: '/_/bus/subscribe',
    send: '/_/bus/send',
    maxBytes: 10 * 1024 * 1024,
    deliveredCounts: 'process',
    aiEdit: { builtIn: false, engines: [], agent: 'node <a Kiln checkout>/bin/kiln.js ai-edit serve' },
  });
  assert.deepEqual(res.json.dataLoss, {
    events: '/_/data-loss',
    saveTrigger: ['user', 'auto'],
    choices: ['restore', 'revert', 'dismiss'],
    keptDays: 30,
    control: '/_/sync/control',
  });
  assert.equal(res.json.document.writable, true);
  const served = await doc.get(new URL(url).pathname);
  assert.equal(`"${res.json.document.etag}"`, served.headers.etag, 'the etag a conditional save sends');
  assert.equal(res.json.document.upload.allowed, true);
  assert.equal(res.json.document.upload.maxBytes, 10 * 1024 * 1024, "the owner's plan's file size");
  const anon = await kiln.client(new URL(url).host).get('/_/meta', { headers: { 'document-url': url } });
  assert.equal(anon.json.document.writable, false);
  assert.deepEqual(anon.json.document.upload, { allowed: false, maxBytes: 10 * 1024 * 1024 });
});

test('formathtml="true" documents are re-indented on save; the answer’s etag identifies the stored (formatted) bytes', async () => {
  const { doc, url } = await ownerWithDocument('save-format.html');
  const messy =
    '<!doctype html>\n<html formathtml="true"><head><title>t</title></head><body><div><p>a</p>\n\n      <p>b</p></div><script>if (a < b) { x() }</script></body></html>';
  const res = await browserSave(doc, url, messy);
  assert.equal(res.status, 200, res.text);
  const stored = (await doc.get('/save-format.html')).text;
  assert.notEqual(stored, messy);
  assert.match(stored, /\n {2}<head>/);
  assert.match(stored, /<script>if \(a < b\) \{ x\(\) \}<\/script>/);
  assert.equal(res.json.etag, checksumOf(stored));
  // Saving the formatted bytes again changes nothing (formatting is idempotent).
  const again = await browserSave(doc, url, stored);
  assert.equal(again.json.etag, res.json.etag);
});

test('without formathtml="true" the bytes are stored exactly as sent', async () => {
  const { doc, url } = await ownerWithDocument('save-exact.html');
  const messy = '<html formathtml="false"><body><div><p>a</p>\n\n      <p>b</p></div></body></html>\r\n';
  await browserSave(doc, url, messy);
  assert.equal((await doc.get('/save-exact.html')).text, messy);
});
