// A developer's own account through HTTP: changing the password ends every other sign-in; the list of
// sign-ins, ending one, ending all; "forgot password" by a mailed link; export → import round trip
// (byte-exact tree, equal checksums), all-or-nothing imports; deleting the account.
import { createHomePage } from '../src/nodes/tree.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { zipOf } from './support/zip.ts';
import yauzl from 'yauzl';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn } from './support/people.ts';
import { mailsTo } from './support/stripe.ts';
import type { Client } from './support/client.ts';
import { until } from './support/wait.ts';
import { createPerson } from '../src/accounts/people.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };

async function dev(over = {}) {
  const main = kiln.client();
  const me = await signedIn(kiln, main, over);
  return { me, main };
}

/** Signs in through the login form, as a browser does (a login of its own). */
async function login(identifier: string, password: string): Promise<Client> {
  const c = kiln.client();
  const r = await c.post('/_/login', { email: identifier, password }, json);
  assert.equal(r.status, 200, r.text);
  return c;
}

function unzip(buf: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out = new Map<string, Buffer>();
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) {
          out.set(e.fileName, Buffer.alloc(0));
          return zip.readEntry();
        }
        zip.openReadStream(e, (er, s) => {
          if (er || !s) return reject(er);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
            out.set(e.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

/** One upload (and text fields, after it): its body and headers share one boundary (make it once, use both). */
function multipart(zip: Buffer, fields: Record<string, string> = {}) {
  const boundary = `----kilnimport${Date.now()}`;
  const text = Object.entries(fields).map(
    ([k, v]) => `\r\n--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}`,
  );
  return {
    body: Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="tree.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      zip,
      Buffer.from(`${text.join('')}\r\n--${boundary}--\r\n`),
    ]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' },
  };
}

test('changing the password needs the current one and signs every other browser out', async () => {
  const p = newPerson();
  await createPerson(kiln.services, p);
  const here = await login(p.email, p.password);
  const there = await login(p.username, p.password);
  const listed = await here.get('/_/account', json);
  assert.equal(listed.json.logins.length, 2);
  assert.equal(listed.json.logins.filter((l: { current: boolean }) => l.current).length, 1);

  const wrong = await here.post(
    '/_/account/password',
    { current: 'not it at all', password: 'a brand new passphrase' },
    json,
  );
  assert.equal(wrong.status, 401);
  assert.equal(wrong.json.code, 'bad-credentials');
  const ok = await here.post('/_/account/password', { current: p.password, password: 'a brand new passphrase' }, json);
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await there.get('/_/account', json)).status, 401, 'the other browser is signed out');
  assert.equal((await here.get('/_/account', json)).status, 200, 'this one stays');
  await login(p.email, 'a brand new passphrase');
  const old = await kiln.client().post('/_/login', { email: p.email, password: p.password }, json);
  assert.equal(old.status, 401);
});

test('sign-ins: one ends from another browser; "sign out everywhere" ends them all', async () => {
  const p = newPerson();
  await createPerson(kiln.services, p);
  const a = await login(p.email, p.password);
  const b = await login(p.email, p.password);
  const other = (await a.get('/_/account', json)).json.logins.find((l: { current: boolean }) => !l.current);
  assert.equal((await a.post(`/_/account/sessions/${other.id}/end`, {}, json)).status, 200);
  assert.equal((await b.get('/_/account', json)).status, 401);
  assert.equal((await a.post(`/_/account/sessions/${other.id}/end`, {}, json)).status, 404, 'already ended');
  const stranger = await dev();
  const mine = (await a.get('/_/account', json)).json.logins[0].id;
  assert.equal((await stranger.main.post(`/_/account/sessions/${mine}/end`, {}, json)).status, 404);
  assert.equal((await a.post('/_/account/sessions/end-all', {}, json)).status, 200);
  assert.equal((await a.get('/_/account', json)).status, 401);
});

test('forgot password: the same answer for any address; the mailed link sets a new one once and ends every sign-in', async () => {
  const p = newPerson();
  await createPerson(kiln.services, p);
  const signedInBefore = await login(p.email, p.password);
  const anon = kiln.client();
  const unknown = await anon.post('/_/reset', { email: 'nobody-at-all@example.com' }, json);
  const known = await anon.post('/_/reset', { email: p.email }, json);
  assert.equal(unknown.status, 200);
  assert.equal(known.status, 200);
  assert.equal(unknown.json.msg, known.json.msg, 'no telling whether the address has an account');
  // The mail goes out after the answer.
  const mails = await until(
    async () => {
      const m = await mailsTo(kiln, p.email);
      return m.length > 0 && m;
    },
    { what: 'the reset mail' },
  );
  const link = /\/_\/reset\/[A-Za-z0-9_-]+/.exec(mails[0].text)![0];
  assert.match((await anon.page(link)).text, /Choose a new password/);
  const set = await anon.post(
    link,
    { password: 'another long passphrase' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(set.status, 302);
  assert.match(set.headers.location!, /^\/_\/login\?/);
  assert.equal((await signedInBefore.get('/_/account', json)).status, 401);
  await login(p.email, 'another long passphrase');
  const again = await anon.post(link, { password: 'yet another passphrase' }, json);
  assert.equal(again.status, 400);
  assert.equal(again.json.code, 'invalid-token');
  // The login page offers the way there.
  assert.match((await anon.page('/_/login')).text, /href="\/_\/reset"/);
});

test('export → import: the same tree, byte for byte, checksums equal; a clash refuses the whole import', async () => {
  const { me, main } = await dev({ plan: 'maker' });
  const docs: Record<string, string> = {
    [`home-${me.id}.html`]: '<html><body>home</body></html>',
    [`notes-${me.id}/todo-${me.id}.html`]: '<html>todo</html>',
  };
  for (const [name, html] of Object.entries(docs))
    assert.equal((await main.post('/_/dashboard/nodes', { type: 'site', name, html }, json)).status, 201);
  const nodes = (await main.get('/_/dashboard/nodes', json)).json.nodes;
  const home = nodes.find((n: { name: string }) => n.name === `home-${me.id}.html`);
  await main.post(`/_/dashboard/nodes/${home.id}/visibility`, { visibility: 'private' }, json);
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 255]);
  const boundary = '----kilnup';
  const up = await main.post(
    '/_/upload',
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="logo.png"\r\nContent-Type: image/png\r\n\r\n`,
      ),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    { headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' } },
  );
  assert.equal(up.status, 200, up.text);

  const exported = await main.get('/_/account/export?versions=1');
  assert.equal(exported.status, 200);
  assert.match(String(exported.headers['content-type']), /application\/zip/);
  assert.match(String(exported.headers['content-disposition']), /attachment; filename="kiln-/);
  const entries = await unzip(exported.body);
  for (const [name, html] of Object.entries(docs)) assert.equal(entries.get(name)?.toString(), html);
  assert.deepEqual(entries.get('logo.png'), png);
  assert.equal(entries.get(`.kiln/versions/home-${me.id}.html/1.html`)?.toString(), docs[`home-${me.id}.html`]);
  const manifest = JSON.parse(entries.get('.kiln/manifest.json')!.toString());
  assert.equal(manifest.format, 'kiln-export');

  // Into another account: the same tree and checksums; the private document stays private.
  const other = await dev({ plan: 'maker' });
  // Document names are unique across Kiln: free them first (the trash frees names at once).
  for (const n of (await main.get('/_/dashboard/nodes', json)).json.nodes.filter(
    (x: { type: string }) => x.type !== 'folder',
  ))
    await main.post(`/_/dashboard/nodes/${n.id}/delete`, {}, json);
  const up2 = multipart(exported.body);
  const imported = await other.main.post('/_/account/import', up2.body, { headers: up2.headers });
  assert.equal(imported.status, 200, imported.text);
  assert.deepEqual(imported.json.imported, { documents: 2, uploads: 1, folders: 1, versions: 0 });
  const theirs = (await other.main.get('/_/dashboard/nodes', json)).json.nodes as Array<{
    path: string;
    name: string;
    checksum: string | null;
    visibility: string;
  }>;
  const want = manifest.nodes as Array<{ path: string; checksum: string | null; visibility: string }>;
  assert.deepEqual(
    theirs.map((n) => [n.path ? `${n.path}/${n.name}` : n.name, n.checksum, n.visibility]).sort(),
    want.map((n) => [n.path, n.checksum, n.visibility]).sort(),
  );
  const host = kiln.client(kiln.hostOf(other.me.username));
  assert.deepEqual((await host.get('/logo.png')).body, png);

  // Again: every name is taken now; nothing changes, and the answer lists them.
  const before = theirs.length;
  const clash = await other.main.post('/_/account/import', up2.body, { headers: up2.headers });
  assert.equal(clash.status, 409);
  assert.equal(clash.json.code, 'name-conflict');
  assert.equal(clash.json.clashes.length, 3);
  assert.equal((await other.main.get('/_/dashboard/nodes', json)).json.nodes.length, before);
});

test('export with every version → import into another Kiln account: the history comes along, and an upload that compresses 1000:1 imports', async () => {
  const { me, main } = await dev({ plan: 'maker' });
  const name = `history-${me.id}.html`;
  const host = kiln.hostOf(me.username);
  const doc = main.on(host);
  const contents = [`<html><body><h1>v1</h1>${'<p>line</p>\n'.repeat(50)}</body></html>`];
  assert.equal((await main.post('/_/dashboard/nodes', { type: 'site', name, html: contents[0] }, json)).status, 201);
  for (let i = 2; i <= 4; i++) {
    contents.push(contents[0].replace('<h1>v1</h1>', `<h1>v${i}</h1>`));
    const saved = await doc.post('/_/save', contents.at(-1)!, {
      headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/${name}` },
    });
    assert.equal(saved.status, 200, saved.text);
  }
  // 4 MB of zeros (a sparse image, a mostly empty database file): it compresses about 1000:1.
  const zeros = Buffer.alloc(4 * 1024 * 1024);
  const boundary = '----kilnzeros';
  const up = await main.post(
    '/_/upload',
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="disk-${me.id}.img"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      zeros,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    { headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' } },
  );
  assert.equal(up.status, 200, up.text);

  const exported = await main.get('/_/account/export?versions=1');
  assert.equal(exported.status, 200);
  // Document names are unique across Kiln: this one goes to the trash first (its name is free at once).
  const mine = (await main.get('/_/dashboard/nodes', json)).json.nodes as Array<{ id: number; name: string }>;
  for (const n of mine.filter((x) => x.name === name)) await main.post(`/_/dashboard/nodes/${n.id}/delete`, {}, json);

  const other = await dev({ plan: 'maker' });
  const zip = multipart(exported.body);
  const imported = await other.main.post('/_/account/import', zip.body, { headers: zip.headers });
  assert.equal(imported.status, 200, imported.text);
  assert.equal(imported.json.imported.versions, 3, 'the three versions before the current one');
  assert.match(imported.json.msg, /with 3 earlier versions/);
  const theirHost = kiln.hostOf(other.me.username);
  const theirs = other.main.on(theirHost);
  assert.deepEqual((await kiln.client(theirHost).get(`/disk-${me.id}.img`)).body, zeros);
  const listed = (await theirs.get(`/_/versions?path=${name}`)).json.versions as Array<{
    id: number;
    backupNumber: number;
  }>;
  assert.deepEqual(
    listed.map((v) => v.backupNumber),
    [4, 3, 2, 1],
  );
  for (const v of listed)
    assert.equal((await theirs.get(`/_/version/${v.id}`)).json.html, contents[v.backupNumber - 1]);
  assert.equal((await kiln.client(theirHost).get(`/${name}`)).text, contents[3]);
  // One line in the activity for the document's import, not one per version.
  const activity = (await other.main.get('/_/activity', json)).json.activity as Array<{ path: string }>;
  assert.ok(activity.filter((a) => a.path === name).length <= 2, JSON.stringify(activity));
});

test('import takes any zip of HTML files and assets, all or nothing; bad input answers 400', async () => {
  const { me, main } = await dev({ plan: 'maker' });
  const plain = await zipOf({
    [`site-${me.id}/index.html`]: '<html>folder index</html>',
    [`site-${me.id}/assets/app.css`]: 'body{margin:0}',
    '__MACOSX/._junk': 'x',
  });
  const plainUp = multipart(plain);
  const ok = await main.post('/_/account/import', plainUp.body, { headers: plainUp.headers });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.json.imported, { documents: 1, uploads: 1, folders: 2, versions: 0 });
  // One bad name in the zip: nothing of it lands.
  const bad = await zipOf({ [`fine-${me.id}.html`]: '<html>ok</html>', 'what?.html': 'x' });
  const badUp = multipart(bad);
  const refused = await main.post('/_/account/import', badUp.body, { headers: badUp.headers });
  assert.equal(refused.status, 400);
  assert.equal(
    (await main.get('/_/dashboard/nodes', json)).json.nodes.some(
      (n: { name: string }) => n.name === `fine-${me.id}.html`,
    ),
    false,
  );
  const notZip = multipart(Buffer.from('this is not a zip'));
  assert.equal((await main.post('/_/account/import', notZip.body, { headers: notZip.headers })).status, 400);
});

test('an untouched starter gives way to an imported document of its name; a page its owner saved does not', async () => {
  const { me, main } = await dev({ plan: 'maker' });
  // A browser-made account's home page: the starter, never saved.
  await createHomePage(kiln.services, me.id, null);
  const zip = await zipOf({ 'index.html': '<html>my old site</html>' });
  const up = multipart(zip);
  const ok = await main.post('/_/account/import', up.body, { headers: up.headers });
  assert.equal(ok.status, 200, ok.text);
  const host = main.on(kiln.hostOf(me.username));
  assert.equal((await host.get('/')).text, '<html>my old site</html>');
  const trash = (await main.get('/_/dashboard/trash', json)).json.trash;
  assert.equal(trash.length, 1, 'the starter waits in the trash');
  // Once its owner has saved it, it is theirs: the import refuses with the clash, and says the way out.
  const again = multipart(await zipOf({ 'index.html': '<html>another</html>' }));
  const refused = await main.post('/_/account/import', again.body, { headers: again.headers });
  assert.equal(refused.status, 409);
  assert.deepEqual(refused.json.clashes, ['index.html']);
  // The way out it offers works: a new folder under which nothing clashes, one more request.
  assert.equal(refused.json.intoFolder, 'imported');
  assert.match(refused.json.msg, /or import into a new folder \("imported" is free/);
  const into = multipart(await zipOf({ 'index.html': '<html>another</html>' }), { folder: refused.json.intoFolder });
  const landed = await main.post('/_/account/import', into.body, { headers: into.headers });
  assert.equal(landed.status, 200, landed.text);
  assert.deepEqual(landed.json.imported, { documents: 1, uploads: 0, folders: 1, versions: 0 });
  assert.equal((await host.get('/imported/index.html')).text, '<html>another</html>');
  assert.match((await host.get('/')).text, /my old site/);
  // A document name unique beyond its folder clashes in any folder: no folder is offered then.
  await main.post('/_/dashboard/nodes', { type: 'site', name: `kept-${me.id}.html`, html: '<p>k</p>' }, json);
  const global = multipart(await zipOf({ [`kept-${me.id}.html`]: '<p>other</p>' }));
  const noWay = await main.post('/_/account/import', global.body, { headers: global.headers });
  assert.equal(noWay.status, 409);
  assert.equal(noWay.json.intoFolder, undefined);
  assert.doesNotMatch(noWay.json.msg, /new folder/);
  const bad = multipart(await zipOf({ 'x.html': '<p>x</p>' }), { folder: '../up' });
  assert.equal((await main.post('/_/account/import', bad.body, { headers: bad.headers })).status, 400);
});

test('deleting the account needs the username typed and the password; everything goes; the name is held back', async () => {
  const p = newPerson({ plan: 'maker' });
  await createPerson(kiln.services, p);
  const c = await login(p.email, p.password);
  await c.post('/_/dashboard/nodes', { type: 'site', name: `gone-${p.username}.html`, html: '<p>x</p>' }, json);
  assert.equal(
    (await c.post('/_/account/delete', { confirm: 'someone-else', password: p.password }, json)).status,
    400,
  );
  assert.equal(
    (await c.post('/_/account/delete', { confirm: p.username, password: 'wrong password!' }, json)).status,
    401,
  );
  // The only owner of a team must hand it over first.
  const team = await c.post('/_/dashboard/teams', { username: `t${p.username}` }, json);
  const blocked = await c.post('/_/account/delete', { confirm: p.username, password: p.password }, json);
  assert.equal(blocked.status, 409);
  assert.equal(blocked.json.code, 'last-owner');
  const friend = await dev();
  await c.post(
    `/_/dashboard/teams/${team.json.team.id}/members`,
    { username: friend.me.username, role: 'owner' },
    json,
  );
  const gone = await c.post(
    '/_/account/delete',
    { confirm: p.username.toUpperCase(), password: p.password, exportFirst: true },
    json,
  );
  assert.equal(gone.status, 200, gone.text);
  assert.match(gone.json.msg, /A link to its export is on its way/);
  // The export was made before the deletion; its link works for anyone who has it, for 7 days.
  const mail = (await mailsTo(kiln, p.email)).at(-1)!;
  const link = /\/_\/export\/[A-Za-z0-9_-]+/.exec(mail.text)![0];
  const zip = await kiln.client().get(link);
  assert.equal(zip.status, 200);
  assert.equal((await unzip(zip.body)).get(`gone-${p.username}.html`)?.toString(), '<p>x</p>');
  assert.equal((await kiln.client().get(`/_/export/${'x'.repeat(43)}`)).status, 404);
  assert.equal((await c.get('/_/account', json)).status, 401);
  assert.equal((await kiln.client(kiln.hostOf(p.username)).get(`/gone-${p.username}.html`)).status, 404);
  assert.equal((await kiln.client().post('/_/login', { email: p.email, password: p.password }, json)).status, 401);
  const again = newPerson({ username: p.username });
  const taken = await kiln
    .client()
    .post('/_/signup', { email: again.email, username: p.username, password: again.password }, json);
  assert.equal(taken.status, 409, 'the username is held for 90 days');
});

test('changing the email: the password required, confirmed by a link to the new address, the old one told', async () => {
  const p = newPerson();
  await createPerson(kiln.services, p);
  const c = await login(p.email, p.password);
  const newEmail = `moved-${p.username}@example.com`;
  assert.equal((await c.post('/_/account/email', { email: newEmail, password: 'not the password' }, json)).status, 401);
  const taken = await c.post(
    '/_/account/email',
    { email: newPerson().email.replace(/^/, ''), password: p.password },
    json,
  );
  assert.ok(taken.status === 200 || taken.status === 409);
  const asked = await c.post('/_/account/email', { email: newEmail, password: p.password }, json);
  assert.equal(asked.status, 200, asked.text);
  assert.equal((await c.get('/_/account', json)).json.account.email, p.email, 'nothing changes before the link');
  const toNew = await mailsTo(kiln, newEmail);
  const link = /\/_\/account\/email\/[A-Za-z0-9_-]+/.exec(toNew[0].text)![0];
  assert.match((await mailsTo(kiln, p.email)).at(-1)!.text, /asked to change its email address/);
  assert.match((await kiln.client().page(link)).text, new RegExp(`Make <strong>${newEmail}</strong>`));
  const confirmed = await kiln.client().post(link, {}, json);
  assert.equal(confirmed.status, 200, confirmed.text);
  assert.equal((await c.get('/_/account', json)).json.account.email, newEmail);
  assert.match((await mailsTo(kiln, p.email)).at(-1)!.text, /is now moved-/);
  assert.equal((await kiln.client().post(link, {}, json)).status, 400, 'the link works once');
  await login(newEmail, p.password);
});

test('changing the username moves the host; the old host redirects there for 30 days and its name stays unavailable', async () => {
  const p = newPerson({ plan: 'maker' });
  await createPerson(kiln.services, p);
  const c = await login(p.email, p.password);
  await c.post('/_/dashboard/nodes', { type: 'site', name: `moving-${p.username}.html`, html: '<p>moving</p>' }, json);
  const to = `${p.username}x`;
  assert.equal((await c.post('/_/account/username', { username: to, password: 'wrong password!' }, json)).status, 401);
  const other = newPerson();
  await createPerson(kiln.services, other);
  const taken = await c.post('/_/account/username', { username: other.username, password: p.password }, json);
  assert.equal(taken.status, 409);
  const moved = await c.post('/_/account/username', { username: to, password: p.password }, json);
  assert.equal(moved.status, 200, moved.text);
  assert.equal((await kiln.client(kiln.hostOf(to)).get(`/moving-${p.username}.html`)).text, '<p>moving</p>');
  const old = await kiln.client(kiln.hostOf(p.username)).get(`/moving-${p.username}.html?x=1`);
  assert.equal(old.status, 302);
  assert.equal(old.headers.location, `http://${kiln.hostOf(to)}/moving-${p.username}.html?x=1`);
  const n = newPerson();
  const grab = await kiln
    .client()
    .post('/_/signup', { email: n.email, username: p.username, password: n.password }, json);
  assert.equal(grab.status, 409, 'the old name is held');
  assert.equal((await c.get('/_/account', json)).json.account.username, to);
});

test('a renamed account takes its old username back during the hold; its host serves again and the other name redirects; others stay refused', async () => {
  const p = newPerson({ plan: 'maker' });
  await createPerson(kiln.services, p);
  const c = await login(p.email, p.password);
  const page = `back-${p.username}.html`;
  await c.post('/_/dashboard/nodes', { type: 'site', name: page, html: '<p>back</p>' }, json);
  const a = p.username;
  const b = `${a}b`;
  const cc = `${a}c`;
  const rename = (client: Client, username: string, password: string) =>
    client.post('/_/account/username', { username, password }, json);
  assert.equal((await rename(c, b, p.password)).status, 200);
  assert.equal((await kiln.client(kiln.hostOf(b)).get(`/${page}`)).text, '<p>back</p>');
  // Another account may not take the held name.
  const other = newPerson();
  await createPerson(kiln.services, other);
  const stranger = await login(other.email, other.password);
  const refused = await rename(stranger, a, other.password);
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'username-taken');
  // The account that held it takes it back, even after a second rename (a → b → c → a).
  assert.equal((await rename(c, cc, p.password)).status, 200);
  const back = await rename(c, a, p.password);
  assert.equal(back.status, 200, back.text);
  assert.equal((await c.get('/_/account', json)).json.account.username, a);
  const served = await kiln.client(kiln.hostOf(a)).get(`/${page}`);
  assert.equal(served.status, 200, 'the host serves directly, no redirect');
  assert.equal(served.text, '<p>back</p>');
  // The names it left lead straight to it, and stay held from everyone else.
  for (const left of [b, cc]) {
    const old = await kiln.client(kiln.hostOf(left)).get(`/${page}`);
    assert.equal(old.status, 302, left);
    assert.equal(old.headers.location, `http://${kiln.hostOf(a)}/${page}`);
    const grab = await rename(stranger, left, other.password);
    assert.equal(grab.status, 409, `${left}: ${grab.text}`);
    assert.equal(grab.json.code, 'username-taken');
  }
  // The stranger cannot take a name that is in use either.
  assert.equal((await rename(stranger, a, other.password)).status, 409);
});
