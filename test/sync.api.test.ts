// The sync API over HTTP with a key: authentication (401 variants), status, listing (every node,
// parent paths, etags, structure versions, complete), create (sites, uploads, folders, paths), content
// read (text / base64, ETag, 304), write, rename, move (descendant paths), delete (cascade), discovery.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, checksum, relPathOf, SyncApi, type WireNode } from './support/sync-client.ts';
import { answerBeforeBody } from './support/big-body.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createSyncKey, revokeSyncKey } from '../src/sync/keys.ts';
import { setVisibility } from '../src/nodes/tree.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test('401 with a JSON body for a missing key, a key not starting with hcsk_, an unknown, a revoked and an expired key', async () => {
  const { api, person } = await keyHolder(kiln);
  const withKey = (apiKey: string | undefined) => {
    const headers: Record<string, string> = { host: kiln.config.rootDomain };
    if (apiKey !== undefined) headers['x-api-key'] = apiKey;
    return kiln.client().get('/_/sync/nodes', { headers: { ...headers, accept: 'text/html' } });
  };
  const missing = await withKey(undefined);
  const wrongPrefix = await withKey(`sk_${'a'.repeat(64)}`);
  const unknown = await withKey(`hcsk_${'0'.repeat(64)}`);
  const { key: revoked, id: revokedId } = await createSyncKey(kiln.services, person.id);
  assert.equal(await revokeSyncKey(kiln.services, person.id, revokedId), true);
  const revokedRes = await withKey(revoked);
  const { key: expired, id: expiredId } = await createSyncKey(kiln.services, person.id);
  await kiln.services.database.db
    .updateTable('sync_keys')
    .set({ expires_at: '2000-01-01T00:00:00.000Z' })
    .where('id', '=', expiredId)
    .execute();
  const expiredRes = await withKey(expired);
  for (const [res, code] of [
    [missing, 'missing-key'],
    [wrongPrefix, 'invalid-key'],
    [unknown, 'invalid-key'],
    [revokedRes, 'revoked-key'],
    [expiredRes, 'expired-key'],
  ] as const) {
    assert.equal(res.status, 401, res.text);
    assert.match(String(res.headers['content-type']), /application\/json/);
    assert.equal(res.json.msgType, 'error');
    assert.equal(res.json.code, code);
    assert.equal(typeof res.json.msg, 'string');
  }
  assert.match(expiredRes.json.msg, /expired/);
  // The good key still works.
  assert.equal((await api.raw('GET', '/nodes')).status, 200);
});

test('only a sync key counts: a browser session is 401 missing-key on every sync door, and a refused key is answered with its own code even beside a session', async () => {
  const c = kiln.client();
  await signedIn(kiln, c, { plan: 'maker' });
  const host = { host: kiln.config.rootDomain };
  const doors = [
    () => c.get('/_/sync/nodes', { headers: host }),
    () => c.post('/_/sync/nodes', { type: 'folder', name: 'by-session' }, { headers: host }),
    () => c.post('/_/sync/control', { type: 'x', payload: {} }, { headers: host }),
    () => c.get('/_/sync/stream', { headers: host }),
    () => c.get('/_/sync/accounts', { headers: host }),
  ];
  for (const door of doors) {
    const res = await door();
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json.code, 'missing-key');
  }
  const refused = await c.get('/_/sync/nodes', { headers: { ...host, 'x-api-key': `hcsk_${'0'.repeat(64)}` } });
  assert.equal(refused.status, 401);
  assert.equal(refused.json.code, 'invalid-key');
  // The key is checked before the body: a bad body with no key is still 401, not 400.
  const noKeyBadBody = await kiln.client().post('/_/sync/nodes', [1, 2], { headers: host });
  assert.equal(noKeyBadBody.status, 401);
  assert.equal(noKeyBadBody.json.code, 'missing-key');
});

test('another account’s nodes are not in the scope, public or private, whatever is asked of them; a malformed id is no node', async () => {
  const { api } = await keyHolder(kiln);
  const other = await keyHolder(kiln);
  const theirs = await other.api.create({
    type: 'site',
    name: `theirs-${Date.now()}.html`,
    parentId: 0,
    content: '<html><p>x</p></html>',
  });
  const folder = await other.api.create({ type: 'folder', name: 'their-folder', parentId: 0 });
  const secret = await other.api.create({
    type: 'site',
    name: `secret-${Date.now()}.html`,
    parentId: 0,
    content: '<html><p>s</p></html>',
  });
  await setVisibility(await actingAs(kiln.services, other.person.id), { nodeId: secret.id, visibility: 'private' });
  const asks: [string, string, unknown][] = [
    ['GET', `/nodes/${secret.id}/content`, undefined],
    ['PUT', `/nodes/${secret.id}/content`, { content: '<html>mine</html>' }],
    ['DELETE', `/nodes/${secret.id}`, undefined],
    ['GET', `/nodes/${theirs.id}/content`, undefined],
    ['PUT', `/nodes/${theirs.id}/content`, { content: '<html>mine</html>' }],
    ['PATCH', `/nodes/${theirs.id}/rename`, { newName: 'mine.html' }],
    ['PATCH', `/nodes/${theirs.id}/move`, { targetParentId: 0 }],
    ['DELETE', `/nodes/${theirs.id}`, undefined],
    ['POST', '/nodes', { type: 'site', name: 'inside.html', parentId: folder.id }],
    ['GET', '/nodes/abc/content', undefined],
    ['DELETE', '/nodes/0', undefined],
  ];
  for (const [method, path, body] of asks) {
    const res = await api.raw(method, path, { body });
    assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
    assert.equal(res.json.code, 'node-not-found', `${method} ${path}`);
  }
  const still = await other.api.raw('GET', `/nodes/${theirs.id}/content`);
  assert.equal(still.json.content, '<html><p>x</p></html>');
});

test("GET status: serverTime (ISO) and the key owner's username, for protocol 1 and 2", async () => {
  const { api, person } = await keyHolder(kiln);
  const p1 = await api.raw('GET', '/status');
  assert.equal(p1.status, 200);
  assert.equal(p1.json.success, true);
  assert.equal(p1.json.username, person.username);
  assert.match(p1.json.serverTime, ISO);
  assert.ok(Math.abs(Date.parse(p1.json.serverTime) - Date.now()) < 60_000);
  const p2 = await api.raw('GET', '/status', {
    headers: { 'x-sync-protocol': '2', 'x-sync-account-id': String(person.id) },
  });
  assert.equal(p2.status, 200);
  assert.equal(p2.json.username, person.username);
  // Protocol 2 naming another account on the personal base: 409 account-changed.
  const other = await api.raw('GET', '/status', {
    headers: { 'x-sync-protocol': '2', 'x-sync-account-id': String(person.id + 1000) },
  });
  assert.equal(other.status, 409);
  assert.equal(other.json.code, 'account-changed');
});

test('the sync API is on the main address only', async () => {
  const { key, person } = await keyHolder(kiln);
  const res = await kiln.client(kiln.hostOf(person.username)).get('/_/sync/nodes', { headers: { 'x-api-key': key } });
  assert.equal(res.status, 404);
});

test('GET nodes lists EVERY node with parent paths, numeric ids, parentId 0 at top level, etag = checksum, complete: true', async () => {
  const { api, person } = await keyHolder(kiln);
  const a = await api.create({ type: 'folder', name: 'a', parentId: 0 });
  const b = await api.create({ type: 'folder', name: 'b', parentId: a.id });
  const html = `<!doctype html><html><p>deep ${person.username}</p></html>`;
  const site = await api.create({ type: 'site', name: `deep-${person.username}.html`, parentId: b.id, content: html });
  const top = await api.create({
    type: 'site',
    name: `top-${person.username}.html`,
    parentId: 0,
    content: '<html><p>top</p></html>',
  });
  const bin = Buffer.from([0, 1, 2, 250, 255]);
  const up = await api.create({ type: 'upload', name: 'data.bin', parentId: a.id, content: bin });
  const { nodes, complete, serverTime } = await api.list();
  assert.equal(complete, true);
  assert.match(serverTime, ISO);
  assert.equal(nodes.length, 5);
  const by = (id: number) => nodes.find((n) => n.id === id)!;
  assert.deepEqual(
    nodes.map((n) => relPathOf(n)).sort(),
    ['a', 'a/b', `a/b/deep-${person.username}.html`, 'a/data.bin', `top-${person.username}.html`].sort(),
  );
  assert.equal(by(a.id).parentId, 0);
  assert.equal(by(a.id).path, '');
  assert.equal(by(b.id).path, 'a');
  assert.equal(by(site.id).path, 'a/b');
  assert.equal(by(site.id).parentId, b.id);
  assert.equal(by(top.id).path, '');
  assert.equal(by(up.id).path, 'a');
  for (const n of nodes) {
    assert.equal(typeof n.id, 'number');
    assert.equal(typeof n.parentId, 'number');
    assert.match(n.modifiedAt, ISO);
    assert.match(n.lastSyncedAt, ISO);
    assert.equal(typeof n.size, 'number');
    assert.equal(typeof n.structureVersion, 'string');
    assert.ok(n.structureVersion.length > 0);
    assert.equal(n.etag, n.checksum);
  }
  assert.equal(by(site.id).checksum, checksum(html));
  assert.equal(by(site.id).size, Buffer.byteLength(html));
  assert.equal(by(up.id).checksum, checksum(bin));
  assert.equal(by(up.id).size, 5);
  // Parents come before what they hold.
  const order = nodes.map((n) => n.id);
  assert.ok(order.indexOf(a.id) < order.indexOf(b.id) && order.indexOf(b.id) < order.indexOf(site.id));
  // Another account's nodes are never listed.
  const other = await keyHolder(kiln);
  assert.equal((await other.api.list()).nodes.length, 0);
});

test('POST nodes: a path creates missing folders and reuses existing ones; 201 with {success, node}', async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `x/y/z-${person.username}.html`;
  const res = await api.raw('POST', '/nodes', {
    body: { type: 'site', name, parentId: 0, content: '<html><p>z</p></html>', modifiedAt: new Date().toISOString() },
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.json.success, true);
  const node: WireNode = res.json.node;
  assert.equal(node.name, `z-${person.username}.html`);
  assert.equal(node.path, 'x/y');
  assert.equal(node.etag, checksum('<html><p>z</p></html>'));
  assert.equal(typeof node.structureVersion, 'string');
  const again = await api.create({ type: 'upload', name: 'x/y/w.txt', parentId: 0, content: Buffer.from('w') });
  assert.equal(again.path, 'x/y');
  const { nodes } = await api.list();
  assert.deepEqual(
    nodes
      .filter((n) => n.type === 'folder')
      .map(relPathOf)
      .sort(),
    ['x', 'x/y'],
  );
  // 'root' and "0" mean the top level; a folder that exists is reused (200).
  const folder = await api.raw('POST', '/nodes', { body: { type: 'folder', name: 'x', parentId: 'root' } });
  assert.equal(folder.status, 200);
  assert.equal(folder.json.node.id, nodes.find((n) => n.name === 'x')!.id);
  // Names are validated with the reason.
  const bad = await api.raw('POST', '/nodes', {
    body: { type: 'site', name: 'no-extension', parentId: 0, content: 'x' },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.code, 'invalid-name');
  const reserved = await api.raw('POST', '/nodes', { body: { type: 'folder', name: 'con', parentId: 0 } });
  assert.equal(reserved.status, 400);
  assert.match(reserved.json.msg, / is reserved/);
  const badType = await api.raw('POST', '/nodes', { body: { type: 'file', name: 'a.txt', parentId: 0 } });
  assert.equal(badType.status, 400);
  const missingParent = await api.raw('POST', '/nodes', { body: { type: 'folder', name: 'q', parentId: 99999999 } });
  assert.equal(missingParent.status, 404);
  assert.equal(missingParent.json.code, 'node-not-found');
});

test('a bad field answers 400 with its registered code and words; the body is read before anything is written', async () => {
  const { api } = await keyHolder(kiln);
  const doc = (
    await api.raw('POST', '/nodes', { body: { type: 'site', name: 'fields.html', content: '<html></html>' } })
  ).json.node as WireNode;
  const cases: [string, string, unknown, string, RegExp][] = [
    ['POST', '/nodes', { type: 'file', name: 'a.txt' }, 'invalid-type', /type must be "site", "upload" or "folder"/],
    ['POST', '/nodes', { type: 'site' }, 'invalid-name', /name is required/],
    ['POST', '/nodes', { type: 'site', name: '   ' }, 'invalid-name', /name is required/],
    ['POST', '/nodes', { type: 'site', name: 7 }, 'invalid-name', /name is required/],
    ['POST', '/nodes', { type: 'folder', name: 'f', parentId: -1 }, 'invalid-parent', /folder id/],
    ['POST', '/nodes', { type: 'folder', name: 'f', parentId: '12abc' }, 'invalid-parent', /folder id/],
    ['POST', '/nodes', { type: 'site', name: 'b.html', content: 5 }, 'invalid-content', /content must be a string/],
    ['PUT', `/nodes/${doc.id}/content`, {}, 'invalid-content', /content must be a string/],
    ['PATCH', `/nodes/${doc.id}/rename`, {}, 'invalid-name', /newName is required/],
    ['PATCH', `/nodes/${doc.id}/rename`, { newName: 3 }, 'invalid-name', /newName is required/],
    [
      'PATCH',
      `/nodes/${doc.id}/rename`,
      { newName: 'c.html', expectedVersion: 1 },
      'invalid-version',
      /expectedVersion/,
    ],
    ['PATCH', `/nodes/${doc.id}/move`, { targetParentId: 'up' }, 'invalid-parent', /folder id/],
    ['PATCH', `/nodes/${doc.id}/move`, { targetParentId: 0, newName: false }, 'invalid-name', /newName/],
    ['PUT', `/nodes/${doc.id}/content`, [1, 2], 'invalid-body', /JSON object/],
  ];
  for (const [method, path, body, code, words] of cases) {
    const res = await api.raw(method, path, { body, headers: { 'if-match': `"${doc.checksum}"` } });
    const what = `${method} ${path} ${JSON.stringify(body)}`;
    assert.equal(res.status, 400, what);
    assert.equal(res.json.code, code, what);
    assert.match(res.json.msg, words, what);
  }
  const gone = await api.raw('DELETE', `/nodes/${doc.id}?expectedVersion=a&expectedVersion=b`);
  assert.equal(gone.json.code, 'invalid-version');
  // Nothing was written: the one document is as it was.
  const { nodes } = await api.list();
  assert.deepEqual(
    nodes.map((n) => [n.name, n.checksum]),
    [['fields.html', doc.checksum]],
  );
  // The top level may be named 0, "0", "root", "" or null; a move's protocol-1 `parentId` is read too.
  for (const parentId of [0, '0', 'root', '', null]) {
    const r = await api.raw('POST', '/nodes', { body: { type: 'folder', name: 'top', parentId } });
    assert.ok(r.status === 201 || r.status === 200, `${JSON.stringify(parentId)}: ${r.text}`);
    assert.equal(r.json.node.parentId, 0);
  }
  const top = (await api.list()).nodes.find((n) => n.name === 'top')!;
  const moved = await api.raw('PATCH', `/nodes/${doc.id}/move`, {
    body: { parentId: String(top.id) },
    headers: { 'if-match': `"${doc.checksum}"` },
  });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.json.toPath, 'top/fields.html');
});

test('GET content: text for documents, base64 for uploads, ETag header and 304 on If-None-Match', async () => {
  const { api, person } = await keyHolder(kiln);
  const html = `<!doctype html><html><title>ü ${person.username}</title></html>`;
  const site = await api.create({ type: 'site', name: `c-${person.username}.html`, parentId: 0, content: html });
  const bytes = Buffer.from([137, 80, 78, 71, 0, 255]);
  const up = await api.create({ type: 'upload', name: 'pic.png', parentId: 0, content: bytes });
  const folder = await api.create({ type: 'folder', name: 'f', parentId: 0 });

  const r = await api.raw('GET', `/nodes/${site.id}/content`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.etag, `"${checksum(html)}"`);
  assert.deepEqual(
    Object.keys(r.json).sort(),
    [
      'checksum',
      'content',
      'etag',
      'modifiedAt',
      'name',
      'nodeId',
      'nodeType',
      'path',
      'size',
      'structureVersion',
      'success',
    ].sort(),
  );
  assert.equal(r.json.success, true);
  assert.equal(r.json.nodeId, site.id);
  assert.equal(r.json.nodeType, 'site');
  assert.equal(r.json.name, site.name);
  assert.equal(r.json.path, '');
  assert.equal(r.json.content, html);
  assert.equal(r.json.checksum, checksum(html));
  assert.equal(r.json.etag, r.json.checksum);
  assert.equal(r.json.size, Buffer.byteLength(html));
  assert.equal(r.json.structureVersion, site.structureVersion);

  const notModified = await api.raw('GET', `/nodes/${site.id}/content`, {
    headers: { 'if-none-match': `"${checksum(html)}"` },
  });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.text, '');
  assert.equal(notModified.headers.etag, `"${checksum(html)}"`);
  const modified = await api.raw('GET', `/nodes/${site.id}/content`, {
    headers: { 'if-none-match': '"0000000000000000"' },
  });
  assert.equal(modified.status, 200);

  const u = await api.raw('GET', `/nodes/${up.id}/content`);
  assert.equal(u.json.nodeType, 'upload');
  assert.deepEqual(Buffer.from(u.json.content, 'base64'), bytes);
  assert.equal(u.json.checksum, checksum(bytes));
  assert.equal(u.json.size, bytes.length);

  const f = await api.raw('GET', `/nodes/${folder.id}/content`);
  assert.equal(f.status, 400);
  const missing = await api.raw('GET', '/nodes/987654321/content');
  assert.equal(missing.status, 404);
  assert.equal(missing.json.code, 'node-not-found');
  // Another account's node answers like a missing one.
  const other = await keyHolder(kiln);
  const foreign = await other.api.raw('GET', `/nodes/${site.id}/content`);
  assert.equal(foreign.status, 404);
  assert.equal(foreign.json.code, 'node-not-found');
});

test('PUT content: {success, nodeId, checksum, etag, structureVersion} with checksum === etag of the new bytes; served on the document host', async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `w-${person.username}.html`;
  const site = await api.create({ type: 'site', name, parentId: 0, content: '<html><p>one</p></html>' });
  const res = await api.raw('PUT', `/nodes/${site.id}/content`, {
    body: { content: '<html><p>two</p></html>', modifiedAt: new Date().toISOString() },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.success, true);
  assert.equal(res.json.nodeId, site.id);
  assert.equal(res.json.checksum, checksum('<html><p>two</p></html>'));
  assert.equal(res.json.etag, res.json.checksum);
  assert.equal(typeof res.json.structureVersion, 'string');
  assert.notEqual(res.json.structureVersion, site.structureVersion);
  const served = await kiln.client(kiln.hostOf(person.username)).get(`/${name}`);
  assert.equal(served.text, '<html><p>two</p></html>');
  // A version was made for the write to an existing file.
  const versions = await kiln.services.database.db
    .selectFrom('versions')
    .select('saved_by_kind')
    .where('node_id', '=', site.id)
    .orderBy('backup_number')
    .execute();
  assert.deepEqual(
    versions.map((v) => v.saved_by_kind),
    ['create', 'sync'],
  );
  // Uploads: base64 in, checksum of the bytes out.
  const up = await api.create({ type: 'upload', name: 'u.bin', parentId: 0, content: Buffer.from('a') });
  const bytes = Buffer.from([9, 8, 7]);
  const u = await api.upload(up.id, bytes);
  assert.equal(u.checksum, checksum(bytes));
  assert.equal(u.etag, u.checksum);
  assert.deepEqual((await api.download(up.id)).content, bytes);
  // Folders have no content; bodies must carry a string.
  const folder = await api.create({ type: 'folder', name: 'fold', parentId: 0 });
  assert.equal((await api.raw('PUT', `/nodes/${folder.id}/content`, { body: { content: 'x' } })).status, 400);
  assert.equal((await api.raw('PUT', `/nodes/${site.id}/content`, { body: { content: 42 } })).status, 400);
});

test('PATCH rename and move (with newName in one step); moving a folder recalculates every descendant path', async () => {
  const { api, person } = await keyHolder(kiln);
  const docs = await api.create({ type: 'folder', name: 'docs', parentId: 0 });
  const sub = await api.create({ type: 'folder', name: 'sub', parentId: docs.id });
  const inner = await api.create({
    type: 'site',
    name: `in-${person.username}.html`,
    parentId: sub.id,
    content: '<html><p>in</p></html>',
  });
  const file = await api.create({ type: 'upload', name: 'f.txt', parentId: docs.id, content: Buffer.from('f') });
  const archive = await api.create({ type: 'folder', name: 'archive', parentId: 0 });

  const renamed = await api.raw('PATCH', `/nodes/${docs.id}/rename`, { body: { newName: 'papers' } });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.json.success, true);
  assert.equal(renamed.json.oldName, 'docs');
  assert.equal(renamed.json.newName, 'papers');
  let { nodes } = await api.list();
  const at = (id: number) => relPathOf(nodes.find((n) => n.id === id)!);
  assert.equal(at(sub.id), 'papers/sub');
  assert.equal(at(inner.id), `papers/sub/in-${person.username}.html`);
  assert.equal(at(file.id), 'papers/f.txt');

  const moved = await api.raw('PATCH', `/nodes/${docs.id}/move`, { body: { targetParentId: archive.id } });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.json.fromPath, 'papers');
  assert.equal(moved.json.toPath, 'archive/papers');
  ({ nodes } = await api.list());
  assert.equal(at(docs.id), 'archive/papers');
  assert.equal(at(sub.id), 'archive/papers/sub');
  assert.equal(at(inner.id), `archive/papers/sub/in-${person.username}.html`);
  assert.equal(at(file.id), 'archive/papers/f.txt');

  // Move and rename in one step, back to the top level (0).
  const both = await api.raw('PATCH', `/nodes/${inner.id}/move`, {
    body: { targetParentId: 0, newName: `out-${person.username}.html` },
  });
  assert.equal(both.status, 200, both.text);
  assert.equal(both.json.toPath, `out-${person.username}.html`);
  ({ nodes } = await api.list());
  assert.equal(at(inner.id), `out-${person.username}.html`);
  assert.equal(nodes.find((n) => n.id === inner.id)!.parentId, 0);
  // The document is served at its new place.
  assert.equal(
    (await kiln.client(kiln.hostOf(person.username)).get(`/out-${person.username}.html`)).text,
    '<html><p>in</p></html>',
  );
  // A folder cannot move into itself.
  const loop = await api.raw('PATCH', `/nodes/${archive.id}/move`, { body: { targetParentId: sub.id } });
  assert.equal(loop.status, 400);
  // A name clash in the target folder is 409 name-conflict.
  await api.create({ type: 'upload', name: 'g.txt', parentId: 0, content: Buffer.from('g') });
  const clash = await api.raw('PATCH', `/nodes/${file.id}/move`, { body: { targetParentId: 0, newName: 'g.txt' } });
  assert.equal(clash.status, 409);
  assert.equal(clash.json.code, 'name-conflict');
  assert.match(clash.json.msg, /already taken/);
});

test('DELETE: files, empty folders, non-empty folders only with cascade=true (else 400), descendants go too', async () => {
  const { api, person } = await keyHolder(kiln);
  const f = await api.create({ type: 'folder', name: 'full', parentId: 0 });
  const g = await api.create({ type: 'folder', name: 'inner', parentId: f.id });
  const doc = await api.create({
    type: 'site',
    name: `d-${person.username}.html`,
    parentId: g.id,
    content: '<html><p>d</p></html>',
  });
  const empty = await api.create({ type: 'folder', name: 'empty', parentId: 0 });
  const lone = await api.create({ type: 'upload', name: 'lone.txt', parentId: 0, content: Buffer.from('l') });

  const refused = await api.raw('DELETE', `/nodes/${f.id}`);
  assert.equal(refused.status, 400);
  assert.equal(refused.json.msgType, 'error');
  assert.equal((await api.list()).nodes.length, 5);

  assert.equal((await api.raw('DELETE', `/nodes/${empty.id}`)).status, 200);
  const del = await api.raw('DELETE', `/nodes/${lone.id}`);
  assert.equal(del.status, 200);
  assert.equal(del.json.success, true);
  const cascade = await api.raw('DELETE', `/nodes/${f.id}?cascade=true`);
  assert.equal(cascade.status, 200, cascade.text);
  assert.equal(cascade.json.deleted, 3);
  assert.deepEqual((await api.list()).nodes, []);
  assert.equal((await api.raw('GET', `/nodes/${doc.id}/content`)).status, 404);
  assert.equal(
    (await kiln.client(kiln.hostOf(person.username)).get(`/full/inner/d-${person.username}.html`)).status,
    404,
  );
  const again = await api.raw('DELETE', `/nodes/${lone.id}`);
  assert.equal(again.status, 404);
  assert.equal(again.json.code, 'node-not-found');
});

test('GET accounts: protocol 2 discovery with all five features, numeric ids, personal and team accounts', async () => {
  const { api, person } = await keyHolder(kiln);
  const d = await api.accounts();
  assert.equal(d.success, true);
  assert.equal(d.protocol, 2);
  assert.deepEqual(d.features, {
    accountScopes: true,
    accountEvents: true,
    conditionalContent: true,
    conditionalStructure: true,
    completeInventory: true,
  });
  assert.deepEqual(d.actor, { id: person.id, username: person.username });
  assert.equal(d.accounts.length, 1);
  const me = d.accounts[0];
  assert.equal(me.id, person.id);
  assert.equal(me.kind, 'personal');
  assert.equal(me.username, person.username);
  assert.equal(me.role, 'owner');
  assert.equal(me.syncBase, '/_/sync');
  assert.match(me.syncBase, /^\/_\/[a-z0-9/_-]*sync$/i);
  assert.deepEqual(me.sync, { enabled: true, reason: null });
  // A lapsed plan: discovery says so (the engine pauses with the reason).
  const lapsed = await keyHolder(kiln, { plan: 'free' });
  const dl = await lapsed.api.accounts();
  assert.deepEqual(dl.accounts[0].sync, { enabled: false, reason: 'payment-required' });
});

test('sync writes check the key before reading the body: a 20 MB body without a valid key is refused with 401 before it is sent', async () => {
  const { key, person } = await keyHolder(kiln);
  const port = Number(new URL(kiln.url).port);
  const host = kiln.config.rootDomain;
  const size = 20 * 1024 * 1024;
  for (const path of [
    '/_/sync/nodes',
    '/_/sync/nodes/1/content',
    '/_/team/someteam/sync/nodes',
    '/_/team/someteam/sync/nodes/1/content',
  ]) {
    const method = path.endsWith('content') ? 'PUT' : 'POST';
    for (const headers of [{}, { 'x-api-key': `hcsk_${'0'.repeat(64)}` }] as Record<string, string>[]) {
      const a = await answerBeforeBody({ port, host, method, path, headers, size });
      assert.equal(a.status, 401, `${method} ${path} ${JSON.stringify(headers)}: ${a.body}`);
      assert.ok(a.sent < size);
    }
  }
  // A valid key still gets to send its body.
  const ok = await new SyncApi({ port, host, apiKey: key }).raw('POST', '/nodes', {
    body: { type: 'site', name: `${person.username}-big.html`, parentId: 0, content: '<html>x</html>' },
  });
  assert.equal(ok.status, 201, ok.text);
});

test('older desktop builds call /sync/* without /_ on the main app and reach the same routes; a document host keeps /sync/ for its own paths', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c, { plan: 'maker' });
  const { key } = await createSyncKey(kiln.services, me.id);
  const bare = await kiln.client().get('/sync/nodes', { headers: { 'x-api-key': key } });
  assert.equal(bare.status, 200, bare.text);
  assert.equal(bare.json.success, true);
  const onHost = await kiln.client(kiln.hostOf(me.username)).get('/sync/nodes', { headers: { 'x-api-key': key } });
  assert.equal(onHost.status, 404, 'on a document host /sync/nodes is a path like any other (none here)');
});
