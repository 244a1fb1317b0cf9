// Uploads (hyperclayjs JSON shape and multipart), the code editor, and the utility stylesheet.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { answerBeforeBody } from './support/big-body.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

async function setup(over: Parameters<typeof signedIn>[2] = {}) {
  const main = kiln.client();
  const person = await signedIn(kiln, main, over);
  const page = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: `up-${person.username}.html`,
    html: '<html><body>page</body></html>',
  });
  const host = kiln.hostOf(person.username);
  return { person, page, host, doc: main.on(host), main, pageUrl: `http://${host}/${page.name}` };
}

test('hyperclayjs upload: JSON {fileName, fileBody} + Page-URL answers exactly 200 {msg, msgType, urls}; the file is served', async () => {
  const { doc, pageUrl, host } = await setup();
  const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 255]);
  const res = await doc.post(
    '/_/upload',
    { fileName: 'pic.png', fileBody: bytes.toString('base64') },
    { headers: { 'page-url': pageUrl } },
  );
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.msgType, 'success');
  assert.equal(typeof res.json.msg, 'string');
  assert.deepEqual(res.json.urls, [`http://${host}/pic.png`]);
  const served = await kiln.client(host).get('/pic.png');
  assert.equal(served.status, 200);
  assert.deepEqual(served.body, bytes);
  assert.equal(served.headers['content-type'], 'image/png');
  // A second upload of the same name does not overwrite: it gets a numbered name.
  const again = await doc.post(
    '/_/upload',
    { fileName: 'pic.png', fileBody: 'AAAA' },
    { headers: { 'page-url': pageUrl } },
  );
  assert.deepEqual(again.json.urls, [`http://${host}/pic-1.png`]);
});

test('multipart upload (field "file") stores the exact bytes and answers {urls, uploads}; active content never runs as the host origin; HTML documents are refused (415 unsupported-type)', async () => {
  const { doc, pageUrl, host, main } = await setup();
  const multipart = (name: string, content: string, type: string) => {
    const boundary = `----kilntest${Date.now()}`;
    return {
      body: Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n${content}\r\n--${boundary}--\r\n`,
      ),
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'page-url': pageUrl },
    };
  };
  const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>';
  const up = multipart('evil.svg', svg, 'image/svg+xml');
  const res = await doc.post('/_/upload', up.body, { headers: up.headers });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(
    res.json.urls,
    [res.json.uploads[0].url],
    'hyperclayjs reads urls; the conformance page reads uploads',
  );
  assert.equal(res.json.uploads[0].name, 'evil.svg');
  const served = await kiln.client(host).get('/evil.svg');
  assert.equal(served.status, 200);
  assert.equal(served.text, svg);
  assert.match(String(served.headers['content-security-policy']), /sandbox/);
  assert.equal(served.headers['x-content-type-options'], 'nosniff');

  // A document is not an upload: refused, nothing stored (made on the dashboard, by sync or /_/save).
  for (const name of ['evil.html', 'page.htm', 'app.htmlclay', 'DEEP/../x.HTML']) {
    const html = multipart(name, '<html><script>alert(1)</script></html>', 'text/html');
    const refused = await doc.post('/_/upload', html.body, { headers: html.headers });
    assert.equal(refused.status, 415, name);
    assert.equal(refused.json.code, 'unsupported-type');
  }
  const names = (await main.get('/_/dashboard/nodes', { headers: { accept: 'application/json' } })).json.nodes.map(
    (n: { name: string }) => n.name,
  );
  assert.equal(names.filter((n: string) => /\.(html?|htmlclay)$/i.test(n)).length, 1, 'only the page itself');
  const json = await doc.post(
    '/_/upload',
    { fileName: 'again.html', fileBody: Buffer.from('<html></html>').toString('base64') },
    { headers: { 'page-url': pageUrl } },
  );
  assert.equal(json.status, 415);
});

test('upload refusals: nobody signed in 401, someone signed in elsewhere 401 (no session here), a bad name 400, over the plan size 413', async () => {
  const { doc, pageUrl, host } = await setup();
  const anon = await kiln
    .client(host)
    .post('/_/upload', { fileName: 'a.txt', fileBody: 'aGk=' }, { headers: { 'page-url': pageUrl } });
  assert.equal(anon.status, 401);
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  const other = await stranger
    .on(host)
    .post('/_/upload', { fileName: 'a.txt', fileBody: 'aGk=' }, { headers: { 'page-url': pageUrl } });
  assert.equal(other.status, 401);
  const bad = await doc.post(
    '/_/upload',
    { fileName: '../../etc/passwd', fileBody: 'aGk=' },
    { headers: { 'page-url': pageUrl } },
  );
  assert.equal(bad.status, 400);
  const big = Buffer.alloc(10 * 1024 * 1024 + 1, 7).toString('base64');
  const tooBig = await doc.post(
    '/_/upload',
    { fileName: 'big.bin', fileBody: big },
    { headers: { 'page-url': pageUrl } },
  );
  assert.equal(tooBig.status, 413);
  assert.equal(tooBig.json.msgType, 'error');
  assert.match(tooBig.json.msg, /10 MB.*free/);
});

test('a Maker plan uploads past the free limit', async () => {
  const { doc, pageUrl } = await setup({ plan: 'maker' });
  const big = Buffer.alloc(12 * 1024 * 1024, 7).toString('base64');
  const res = await doc.post('/_/upload', { fileName: 'big.bin', fileBody: big }, { headers: { 'page-url': pageUrl } });
  assert.equal(res.status, 200, res.text);
});

test('code editor: the owner gets CodeMirror served by Kiln; nobody signed in goes to login; an app user gets 403', async () => {
  const { doc, host, page } = await setup();
  const res = await doc.page(`/_/edit?path=${page.name}`);
  assert.equal(res.status, 200);
  assert.match(res.text, /src="\/_\/assets\/editor\.js"/);
  assert.match(res.text, /id="kiln-editor-data"/);
  const js = await doc.get('/_/assets/editor.js');
  assert.equal(js.status, 200);
  assert.match(String(js.headers['content-type']), /javascript/);
  assert.ok(js.body.length > 10_000);
  const anon = await kiln.client(host).page(`/_/edit?path=${page.name}`);
  assert.equal(anon.status, 302);
  assert.match(String(anon.headers.location), /^\/_\/login\?/);
  // An app user, on their own host, with a document of their own: never the code editor.
  const appUser = kiln.client();
  const au = await signedIn(kiln, appUser, { accountType: 'app_user' });
  await createNode(await actingAs(kiln.services, au.id), {
    ownerId: au.id,
    parentId: 0,
    type: 'site',
    name: `mine-${au.username}.html`,
    html: '<html></html>',
  });
  const refused = await appUser.on(kiln.hostOf(au.username)).get(`/_/edit?path=mine-${au.username}.html`);
  assert.equal(refused.status, 403);
});

test('text uploads open in the editor at /_/edit/uploads/<username>/<path> and save through /_/save', async () => {
  const { doc, pageUrl, main, person } = await setup();
  await doc.post(
    '/_/upload',
    { fileName: 'notes.md', fileBody: Buffer.from('# hi').toString('base64') },
    { headers: { 'page-url': pageUrl } },
  );
  const editor = await main.page(`/_/edit/uploads/${person.username}/notes.md`);
  assert.equal(editor.status, 200, editor.text);
  assert.match(editor.text, /# hi/);
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  assert.equal((await stranger.get(`/_/edit/uploads/${person.username}/notes.md`)).status, 403);
  const docUrl = `http://${kiln.config.rootDomain}/_/edit/uploads/${person.username}/notes.md`;
  const saved = await main.post('/_/save', '# changed', {
    headers: { 'content-type': 'text/plain', 'document-url': docUrl },
  });
  assert.equal(saved.status, 200, saved.text);
  assert.equal((await kiln.client(kiln.hostOf(person.username)).get('/notes.md')).text, '# changed');
});

test('the upload editor asks the access table: nobody signed in signs in first (401), app users may not edit code (403)', async () => {
  const { person } = await setup();
  const editorPath = (username: string) => `/_/edit/uploads/${username}/notes.md`;
  const save = (c: ReturnType<typeof kiln.client>, username: string) =>
    c.post('/_/save', '# changed', {
      headers: {
        'content-type': 'text/plain',
        'document-url': `http://${kiln.config.rootDomain}${editorPath(username)}`,
      },
    });
  const anon = kiln.client();
  const refused = await anon.get(editorPath(person.username));
  assert.equal(refused.status, 401);
  assert.equal(refused.json.code, 'login-required');
  const page = await anon.page(editorPath(person.username));
  assert.equal(page.status, 302, 'a browser goes to the sign-in page');
  assert.match(page.headers.location!, /^\/_\/login\b/);
  assert.equal((await save(anon, person.username)).status, 401);

  const appUser = kiln.client();
  const user = await signedIn(kiln, appUser, { accountType: 'app_user' });
  assert.equal((await appUser.get(editorPath(user.username))).status, 403);
  assert.equal((await save(appUser, user.username)).status, 403);
});

test('utility stylesheet: empty CSS with 200 before the first compile, compiled classes after a save', async () => {
  const { doc, pageUrl, page } = await setup();
  const sheet = `/tailwindcss/${page.name.replace(/\.html$/, '')}.css`;
  const before = await doc.get(sheet);
  assert.equal(before.status, 200);
  assert.match(String(before.headers['content-type']), /text\/css/);
  assert.equal(before.text, '');
  const html = `<html><head><link rel="stylesheet" href="${sheet}"></head><body class="p-4 text-red-500">x</body></html>`;
  const saved = await doc.post('/_/save', html, { headers: { 'content-type': 'text/plain', 'document-url': pageUrl } });
  assert.equal(saved.status, 200);
  await kiln.services.stylesheets.idle();
  const after = await doc.get(sheet);
  assert.equal(after.status, 200);
  assert.match(after.text, /\.p-4/);
  assert.match(after.text, /\.text-red-500/);
  assert.doesNotMatch(after.text, /\.p-5\b/);
});

test('Kiln serves the hyperclayjs browser library itself (no CDN)', async () => {
  const { doc } = await setup();
  const res = await doc.get('/_/hyperclayjs/src/hyperclay.js');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /javascript/);
  assert.match(res.text, /export/);
  const escaped = await doc.get('/_/hyperclayjs/src/../package.json');
  assert.ok([403, 404].includes(escaped.status), `traversal answered ${escaped.status}`);
  assert.doesNotMatch(escaped.text, /"name": "hyperclayjs"/);
});

test('an encoded percent (%25) in an upload path is 400, never decoded twice into another name; names with % are refused', async () => {
  const { doc, pageUrl, main, person, host } = await setup();
  assert.equal(
    (
      await doc.post(
        '/_/upload',
        { fileName: 'aA.txt', fileBody: Buffer.from('secret A').toString('base64') },
        { headers: { 'page-url': pageUrl } },
      )
    ).status,
    200,
  );
  // The editor path is decoded by the router once; a second decode turned %2541 into A.
  const twice = await main.get(`/_/edit/uploads/${person.username}/a%2541.txt`);
  assert.equal(twice.status, 400, twice.text);
  assert.equal(twice.json.code, 'invalid-path');
  assert.doesNotMatch(twice.text, /secret A/);
  // Encoded letters are decoded once, as everywhere.
  assert.equal((await main.get(`/_/edit/uploads/${person.username}/a%41.txt`)).status, 200);
  // Serving on the document host: 400 too.
  for (const path of ['/a%2541.txt', '/a%25%34%31.txt', '/%25', '/folder%252fa.txt']) {
    const served = await kiln.client(host).get(path);
    assert.equal(served.status, 400, path);
  }
  assert.equal((await kiln.client(host).get('/a%41.txt')).text, 'secret A');
  // A save whose Document-URL names an upload through %25 is refused as well.
  const saved = await main.post('/_/save', 'changed', {
    headers: {
      'content-type': 'text/plain',
      'document-url': `http://${kiln.config.rootDomain}/_/edit/uploads/${person.username}/a%2541.txt`,
    },
  });
  assert.equal(saved.status, 400);
  assert.equal((await kiln.client(host).get('/aA.txt')).text, 'secret A');
  // File names that could be confused with encodings are refused at upload time.
  for (const fileName of ['a%41.txt', '100%.txt', '%2e%2e.txt']) {
    const res = await doc.post('/_/upload', { fileName, fileBody: 'aGk=' }, { headers: { 'page-url': pageUrl } });
    assert.equal(res.status, 400, fileName);
  }
});

test('POST /_/upload checks the session before reading the body: an anonymous 20 MB body is refused with 401 before it is sent', async () => {
  const { host, pageUrl } = await setup();
  const port = Number(new URL(kiln.url).port);
  for (const h of [host, kiln.config.rootDomain]) {
    const a = await answerBeforeBody({
      port,
      host: h,
      method: 'POST',
      path: '/_/upload',
      headers: { 'page-url': pageUrl },
      size: 20 * 1024 * 1024,
    });
    assert.equal(a.status, 401, `${h}: ${a.body}`);
  }
});

test('a malformed multipart body answers 400, not a server error', async () => {
  const { doc, pageUrl } = await setup();
  for (const [type, body] of [
    ['multipart/form-data; boundary=xyz', 'this is not multipart at all'],
    [
      'multipart/form-data; boundary=xyz',
      '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\ncut short',
    ],
    ['multipart/form-data', '--xyz\r\n\r\n--xyz--'],
  ]) {
    const res = await doc.post('/_/upload', body, { headers: { 'content-type': type, 'page-url': pageUrl } });
    assert.equal(res.status, 400, `${type}: ${res.status} ${res.text}`);
    assert.equal(res.json.msgType, 'error');
  }
});

/** A multipart body with one file part, as a browser's FormData sends it. */
function formWith(name: string, bytes: Buffer, pageUrl: string) {
  const boundary = `----kilnform${Math.random().toString(36).slice(2)}`;
  return {
    body: Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'page-url': pageUrl },
  };
}

test('concurrent uploads of one file name all survive: distinct names and urls, each serving its own bytes', async () => {
  const { doc, pageUrl, host } = await setup();
  const files = Array.from({ length: 8 }, (_, i) => Buffer.from(`file number ${i} `.repeat(i + 1)));
  const answers = await Promise.all(
    files.map((bytes) => {
      const f = formWith('race.bin', bytes, pageUrl);
      return doc.post('/_/upload', f.body, { headers: f.headers });
    }),
  );
  for (const a of answers) assert.equal(a.status, 200, a.text);
  const urls = answers.map((a) => a.json.uploads[0].url as string);
  assert.equal(new Set(urls).size, files.length, 'no upload replaced another');
  assert.equal(new Set(answers.map((a) => a.json.uploads[0].name)).size, files.length);
  const visitor = kiln.client(host);
  for (const [i, url] of urls.entries()) {
    const served = await visitor.get(new URL(url).pathname);
    assert.deepEqual(served.body, files[i], url);
  }
});

test('a traversing file name lands inside the page’s own folder, under its last segment', async () => {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const host = kiln.hostOf(person.username);
  const folder = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'folder',
    name: 'deep',
  });
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: folder.id,
    type: 'site',
    name: 'page.html',
    html: '<html><body>page</body></html>',
  });
  const pageUrl = `http://${host}/deep/page.html`;
  for (const name of ['../../escape.bin', '..\\..\\win.bin', '/etc/abs.bin']) {
    const f = formWith(name, Buffer.from(name), pageUrl);
    const res = await main.on(host).post('/_/upload', f.body, { headers: f.headers });
    assert.equal(res.status, 200, `${name}: ${res.text}`);
    const stored = res.json.uploads[0];
    assert.doesNotMatch(stored.name, /[\\/]|\.\./, name);
    assert.equal(new URL(stored.url).host, host);
    assert.match(new URL(stored.url).pathname, /^\/deep\/[^/]+$/, `${name} stays beside the page`);
    assert.equal((await kiln.client(host).get(new URL(stored.url).pathname)).text, name);
  }
});

test('upload refusals carry the codes clients read: 401 login-required, 413 too-large with the plan’s limit', async () => {
  const { doc, pageUrl, host } = await setup();
  const anon = await kiln
    .client(host)
    .post('/_/upload', { fileName: 'a.txt', fileBody: 'aGk=' }, { headers: { 'page-url': pageUrl } });
  assert.equal(anon.json.code, 'login-required');
  const meta = await doc.get('/_/meta', { headers: { 'document-url': pageUrl } });
  const cap = meta.json.document.upload.maxBytes as number;
  const over = formWith('over.bin', Buffer.alloc(cap + 1), pageUrl);
  const res = await doc.post('/_/upload', over.body, { headers: over.headers });
  assert.equal(res.status, 413);
  assert.equal(res.json.code, 'too-large');
  assert.equal(res.json.max, cap, 'the limit /_/meta announced is the one enforced');
  const exact = formWith('exact.bin', Buffer.alloc(cap), pageUrl);
  assert.equal((await doc.post('/_/upload', exact.body, { headers: exact.headers })).status, 200);
});

/** A main-app multipart upload with the dashboard's fields (parentId, replaces, ownerId). */
function dashboardUpload(name: string, content: string | Buffer, fields: Record<string, string | number> = {}) {
  const boundary = `----kilnreplace${Date.now()}`;
  const parts = Object.entries(fields).map(
    ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  return {
    body: Buffer.concat([
      Buffer.from(
        `${parts.join('')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      Buffer.from(content),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' },
  };
}

test('uploading a taken name: kept both by default (the answer names the new one); Replace puts the new bytes at the name and the old file in the trash', async () => {
  const { main, host, person } = await setup();
  const json = { headers: { accept: 'application/json' } };
  const first = dashboardUpload('photo.png', 'old bytes');
  assert.equal((await main.post('/_/upload', first.body, { headers: first.headers })).status, 200);
  const again = dashboardUpload('photo.png', 'second bytes');
  const kept = await main.post('/_/upload', again.body, { headers: again.headers });
  assert.equal(kept.status, 200, kept.text);
  assert.equal(kept.json.node.name, 'photo-1.png');
  assert.equal(kept.json.msg, 'Uploaded as photo-1.png: photo.png was taken in that folder.');

  const nodes = (await main.get('/_/dashboard/nodes', json)).json.nodes as Array<{ id: number; name: string }>;
  const old = nodes.find((n) => n.name === 'photo.png')!;
  const replace = dashboardUpload('new-photo.png', 'new bytes', { parentId: 0, replaces: old.id });
  const replaced = await main.post('/_/upload', replace.body, { headers: replace.headers });
  assert.equal(replaced.status, 200, replaced.text);
  assert.equal(replaced.json.node.name, 'photo.png', 'the new file takes the old one’s name');
  assert.equal(replaced.json.msg, 'Replaced photo.png (the old file is in the trash).');
  assert.equal((await kiln.client(host).get('/photo.png')).text, 'new bytes');
  const trash = (await main.get('/_/dashboard/trash', json)).json;
  assert.ok(
    JSON.stringify(trash).includes('photo.png'),
    `the old file waits in the trash: ${JSON.stringify(trash).slice(0, 300)}`,
  );
  // The old id is gone from the tree: replacing it again answers like a missing file; so does another
  // account's file, a file of another folder, and a document.
  const twice = dashboardUpload('x.png', 'x', { parentId: 0, replaces: old.id });
  assert.equal((await main.post('/_/upload', twice.body, { headers: twice.headers })).status, 404);
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  const current = (await main.get('/_/dashboard/nodes', json)).json.nodes.find(
    (n: { name: string }) => n.name === 'photo.png',
  );
  const theirs = dashboardUpload('x.png', 'x', { parentId: 0, replaces: current.id });
  assert.equal((await stranger.post('/_/upload', theirs.body, { headers: theirs.headers })).status, 404);
  assert.equal((await kiln.client(host).get('/photo.png')).text, 'new bytes');
  const page = nodes.find((n) => n.name === `up-${person.username}.html`)!;
  const aDocument = dashboardUpload('x.png', 'x', { parentId: 0, replaces: page.id });
  assert.equal((await main.post('/_/upload', aDocument.body, { headers: aDocument.headers })).status, 404);
});

test('the upload body is one declared schema: a shape that is neither JSON {fileName, fileBody} nor a multipart field "file" is 400 invalid, a broken multipart body 400 malformed-multipart, another origin 403 first', async () => {
  const { doc, pageUrl, main } = await setup();
  const json = await doc.post('/_/upload', { fileName: 'a.txt' }, { headers: { 'page-url': pageUrl } });
  assert.equal(json.status, 400, json.text);
  assert.equal(json.json.code, 'invalid');
  const boundary = `----kilnschema${Date.now()}`;
  const form = (parts: string) => Buffer.from(`${parts}--${boundary}--\r\n`);
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' };
  const wrongField = await main.post(
    '/_/upload',
    form(`--${boundary}\r\nContent-Disposition: form-data; name="other"; filename="a.txt"\r\n\r\nhi\r\n`),
    { headers },
  );
  assert.equal(wrongField.status, 400, wrongField.text);
  assert.equal(wrongField.json.code, 'invalid');
  const badTarget = await main.post(
    '/_/upload',
    form(
      `--${boundary}\r\nContent-Disposition: form-data; name="parentId"\r\n\r\nnope\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhi\r\n`,
    ),
    { headers },
  );
  assert.equal(badTarget.status, 400, badTarget.text);
  assert.equal(badTarget.json.msg, 'parentId must be a folder id.');
  const broken = await main.post('/_/upload', Buffer.from(`--${boundary}\r\nContent-Disposition: form-da`), {
    headers,
  });
  assert.equal(broken.status, 400, broken.text);
  assert.equal(broken.json.code, 'malformed-multipart');
  const elsewhere = await doc.post(
    '/_/upload',
    { fileName: 'a.txt' },
    {
      headers: { 'page-url': pageUrl, origin: 'http://elsewhere.example' },
    },
  );
  assert.equal(elsewhere.status, 403, elsewhere.text);
  assert.equal(elsewhere.json.code, 'cross-origin');
});
