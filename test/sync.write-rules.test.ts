// The spec's write rules 1–6 on PUT and POST, the 402 plan rule, and structure preconditions:
// If-Match equal → written; different → 412 {code:'conflict', etag, changedBy} with nothing changed;
// no If-Match → replaced; a document name of another account → 409 "already taken"; the account's
// own name in another folder → that node is reused; If-None-Match: * on create → 412 when the name
// exists; snapshotHtml + senderId → live broadcasts; over 5 MB → 413; stale expectedVersion → 409.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, checksum, relPathOf } from './support/sync-client.ts';
import { channels, type KilnEvent } from '../src/events/bus.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const db = () => kiln.services.database.db;
const versionCount = async (id: number) =>
  Number(
    (
      await db()
        .selectFrom('versions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('node_id', '=', id)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Collects the events of a channel until `stop()`. */
async function listen(channel: string) {
  const got: KilnEvent[] = [];
  const stop = kiln.services.events.subscribe(channel, (e) => got.push(e));
  await kiln.services.events.subscribed(channel);
  return { got, stop };
}
/** Waits (bounded) until `pred` holds for the collected events. */
async function until(got: KilnEvent[], pred: (e: KilnEvent[]) => boolean) {
  for (let i = 0; i < 200 && !pred(got); i++) await new Promise((r) => setTimeout(r, 10));
  return got;
}

test('rule 1: If-Match equal to the stored checksum writes (quoted, bare and W/ forms); a different one is 412 and changes nothing', async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `r1-${person.username}.html`;
  const site = await api.create({ type: 'site', name, parentId: 0, content: '<html><p>v1</p></html>' });
  const v1 = checksum('<html><p>v1</p></html>');
  const ok = await api.raw('PUT', `/nodes/${site.id}/content`, {
    body: { content: '<html><p>v2</p></html>' },
    headers: { 'if-match': `"${v1}"` },
  });
  assert.equal(ok.status, 200, ok.text);
  const v2 = checksum('<html><p>v2</p></html>');
  assert.equal(ok.json.etag, v2);
  assert.equal(
    (
      await api.raw('PUT', `/nodes/${site.id}/content`, {
        body: { content: '<html><p>v3</p></html>' },
        headers: { 'if-match': v2 },
      })
    ).status,
    200,
  );
  const v3 = checksum('<html><p>v3</p></html>');
  assert.equal(
    (
      await api.raw('PUT', `/nodes/${site.id}/content`, {
        body: { content: '<html><p>v4</p></html>' },
        headers: { 'if-match': `W/"${v3}"` },
      })
    ).status,
    200,
  );
  const v4 = checksum('<html><p>v4</p></html>');

  const before = await versionCount(site.id);
  const stale = await api.raw('PUT', `/nodes/${site.id}/content`, {
    body: { content: '<html><p>lost</p></html>' },
    headers: { 'if-match': `"${v1}"` },
  });
  assert.equal(stale.status, 412);
  assert.equal(stale.json.msgType, 'error');
  assert.equal(stale.json.code, 'conflict');
  assert.equal(stale.json.etag, v4);
  assert.equal(typeof stale.json.msg, 'string');
  assert.equal(stale.json.changedBy, 'another-tab');
  // Nothing changed: bytes, checksum, versions.
  assert.equal((await api.download(site.id)).content, '<html><p>v4</p></html>');
  assert.equal((await api.list()).nodes[0].etag, v4);
  assert.equal(await versionCount(site.id), before);
  assert.equal((await kiln.client(kiln.hostOf(person.username)).get(`/${name}`)).text, '<html><p>v4</p></html>');
  // Uploads follow the same rule.
  const up = await api.create({ type: 'upload', name: 'u.bin', parentId: 0, content: Buffer.from('one') });
  const upStale = await api.raw('PUT', `/nodes/${up.id}/content`, {
    body: { content: Buffer.from('two').toString('base64') },
    headers: { 'if-match': '"0123456789abcdef"' },
  });
  assert.equal(upStale.status, 412);
  assert.equal(upStale.json.code, 'conflict');
  assert.equal(upStale.json.etag, checksum('one'));
  assert.deepEqual((await api.download(up.id)).content, Buffer.from('one'));
  const upOk = await api.raw('PUT', `/nodes/${up.id}/content`, {
    body: { content: Buffer.from('two').toString('base64') },
    headers: { 'if-match': `"${checksum('one')}"` },
  });
  assert.equal(upOk.status, 200);
  assert.equal(upOk.json.etag, checksum('two'));
});

test("rule 2: without If-Match a write to one's own document replaces the content", async () => {
  const { api, person } = await keyHolder(kiln);
  const site = await api.create({
    type: 'site',
    name: `r2-${person.username}.html`,
    parentId: 0,
    content: '<html><p>a</p></html>',
  });
  const r = await api.upload(site.id, '<html><p>b</p></html>');
  assert.equal(r.etag, checksum('<html><p>b</p></html>'));
  assert.equal((await api.download(site.id)).content, '<html><p>b</p></html>');
  // The same bytes again: nothing to do, same etag, no new version.
  const n = await versionCount(site.id);
  const same = await api.upload(site.id, '<html><p>b</p></html>');
  assert.equal(same.etag, checksum('<html><p>b</p></html>'));
  assert.equal(await versionCount(site.id), n);
});

test('rule 3: a document name owned by another account is 409 name-conflict "already taken"; nothing is created', async () => {
  const alice = await keyHolder(kiln);
  const bob = await keyHolder(kiln);
  const name = `shared-${alice.person.username}.html`;
  await alice.api.create({ type: 'site', name, parentId: 0, content: '<html><p>alice</p></html>' });
  const folder = await bob.api.create({ type: 'folder', name: 'mine', parentId: 0 });
  for (const parentId of [0, folder.id]) {
    const r = await bob.api.raw('POST', '/nodes', {
      body: { type: 'site', name, parentId, content: '<html><p>bob</p></html>' },
    });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.code, 'name-conflict');
    assert.equal(r.json.msgType, 'error');
    assert.match(r.json.msg, /already taken/);
  }
  assert.equal((await bob.api.list()).nodes.length, 1);
  assert.equal((await alice.api.download((await alice.api.list()).nodes[0].id)).content, '<html><p>alice</p></html>');
});

test("rule 3: the account's own document name in another folder reuses that node (same id, content written, 200)", async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `reuse-${person.username}.html`;
  const a = await api.create({ type: 'folder', name: 'a', parentId: 0 });
  const b = await api.create({ type: 'folder', name: 'b', parentId: 0 });
  const original = await api.create({ type: 'site', name, parentId: a.id, content: '<html><p>first</p></html>' });
  const r = await api.raw('POST', '/nodes', {
    body: { type: 'site', name, parentId: b.id, content: '<html><p>second</p></html>' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.node.id, original.id);
  assert.equal(r.json.node.etag, checksum('<html><p>second</p></html>'));
  assert.equal(relPathOf(r.json.node), `a/${name}`);
  assert.equal((await api.download(original.id)).content, '<html><p>second</p></html>');
  assert.equal((await api.list()).nodes.filter((n) => n.type === 'site').length, 1);
  // A sibling of another type with that name is a conflict, not a reuse.
  await api.create({ type: 'upload', name: 'same.txt', parentId: 0, content: Buffer.from('x') });
  const clash = await api.raw('POST', '/nodes', { body: { type: 'folder', name: 'same.txt', parentId: 0 } });
  assert.equal(clash.status, 400); // folder names cannot contain dots
  const clash2 = await api.raw('POST', '/nodes', { body: { type: 'upload', name: 'a', parentId: 0, content: '' } });
  assert.equal(clash2.status, 409);
  assert.equal(clash2.json.code, 'name-conflict');
  assert.match(clash2.json.msg, /already taken/);
});

test('If-None-Match: * on create: 412 when the name exists (nothing written), 201 when it does not', async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `inm-${person.username}.html`;
  const fresh = await api.raw('POST', '/nodes', {
    body: { type: 'site', name, parentId: 0, content: '<html><p>1</p></html>' },
    headers: { 'if-none-match': '*' },
  });
  assert.equal(fresh.status, 201, fresh.text);
  const exists = await api.raw('POST', '/nodes', {
    body: { type: 'site', name, parentId: 0, content: '<html><p>2</p></html>' },
    headers: { 'if-none-match': '*' },
  });
  assert.equal(exists.status, 412);
  assert.equal(exists.json.code, 'conflict');
  assert.equal(exists.json.etag, checksum('<html><p>1</p></html>'));
  assert.equal((await api.download(fresh.json.node.id)).content, '<html><p>1</p></html>');
  const folder = await api.raw('POST', '/nodes', {
    body: { type: 'folder', name: 'fx', parentId: 0 },
    headers: { 'if-none-match': '*' },
  });
  assert.equal(folder.status, 201);
  assert.equal(
    (
      await api.raw('POST', '/nodes', {
        body: { type: 'folder', name: 'fx', parentId: 0 },
        headers: { 'if-none-match': '*' },
      })
    ).status,
    412,
  );
});

test('rule 4: a sync write publishes node-saved (full path, 16-hex checksum, inline content) and the saved lane', async () => {
  const { api, person } = await keyHolder(kiln);
  const folder = await api.create({ type: 'folder', name: 'ev', parentId: 0 });
  const site = await api.create({
    type: 'site',
    name: `ev-${person.username}.html`,
    parentId: folder.id,
    content: '<html><p>0</p></html>',
  });
  const acct = await listen(channels.account(person.id));
  const doc = await listen(channels.document(site.id));
  await api.upload(site.id, '<html><p>1</p></html>');
  await until(acct.got, (g) => g.some((e) => e.type === 'node-saved'));
  await until(doc.got, (g) => g.some((e) => e.type === 'lane'));
  acct.stop();
  doc.stop();
  const saved = acct.got.find((e) => e.type === 'node-saved')!;
  assert.ok(saved && saved.type === 'node-saved');
  assert.equal(saved.nodeId, site.id);
  assert.equal(saved.nodeType, 'site');
  assert.equal(saved.path, `ev/ev-${person.username}.html`);
  assert.equal(saved.checksum, checksum('<html><p>1</p></html>'));
  assert.equal(saved.content, '<html><p>1</p></html>');
  const lane = doc.got.find((e) => e.type === 'lane')!;
  assert.ok(lane.type === 'lane' && lane.lane === 'saved' && lane.html === '<html><p>1</p></html>');
});

test("rule 5: snapshotHtml + senderId add a live-sync frame for the owner's sync tools and a live-lane frame for editors", async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `live-${person.username}.html`;
  const site = await api.create({ type: 'site', name, parentId: 0, content: '<html><p>0</p></html>' });
  const acct = await listen(channels.account(person.id));
  const doc = await listen(channels.document(site.id));
  await api.upload(site.id, '<html><p>stored</p></html>', {
    snapshotHtml: '<html><p>live snapshot</p></html>',
    senderId: 'device-42',
  });
  await until(acct.got, (g) => g.some((e) => e.type === 'live-sync'));
  await until(doc.got, (g) => g.some((e) => e.type === 'lane' && e.lane === 'live'));
  acct.stop();
  doc.stop();
  const live = acct.got.find((e) => e.type === 'live-sync');
  assert.deepEqual(live, {
    type: 'live-sync',
    nodeId: site.id,
    file: name,
    html: '<html><p>live snapshot</p></html>',
    sender: 'device-42',
  });
  const lane = doc.got.find((e) => e.type === 'lane' && e.lane === 'live');
  assert.ok(lane && lane.type === 'lane');
  assert.equal(lane.html, '<html><p>live snapshot</p></html>');
  assert.equal(lane.sender, 'device-42');
  // Without a sender id there is no live frame.
  const acct2 = await listen(channels.account(person.id));
  await api.upload(site.id, '<html><p>stored 2</p></html>', { snapshotHtml: '<html><p>x</p></html>' });
  await until(acct2.got, (g) => g.some((e) => e.type === 'node-saved'));
  acct2.stop();
  assert.equal(acct2.got.filter((e) => e.type === 'live-sync').length, 0);
});

test('rule 6: content over 5 MB is 413 on PUT and on create, and nothing changes', async () => {
  const { api, person } = await keyHolder(kiln);
  const site = await api.create({
    type: 'site',
    name: `big-${person.username}.html`,
    parentId: 0,
    content: '<html><p>small</p></html>',
  });
  const big = `<p>${'x'.repeat(5 * 1024 * 1024)}</p>`;
  const put = await api.raw('PUT', `/nodes/${site.id}/content`, { body: { content: big } });
  assert.equal(put.status, 413);
  assert.equal(put.json.msgType, 'error');
  assert.equal(put.json.code, 'too-large');
  assert.equal((await api.download(site.id)).content, '<html><p>small</p></html>');
  const create = await api.raw('POST', '/nodes', {
    body: { type: 'site', name: `big2-${person.username}.html`, parentId: 0, content: big },
  });
  assert.equal(create.status, 413);
  assert.equal((await api.list()).nodes.length, 1);
  // Exactly 5 MB is allowed.
  const exact = `<html>${'y'.repeat(5 * 1024 * 1024 - 13)}</html>`;
  assert.equal((await api.raw('PUT', `/nodes/${site.id}/content`, { body: { content: exact } })).status, 200);
});

test("402 payment-required without a plan of one's own: list, read and delete work; create, edit, rename and move do not", async () => {
  const paid = await keyHolder(kiln);
  const name = `lapse-${paid.person.username}.html`;
  const site = await paid.api.create({ type: 'site', name, parentId: 0, content: '<html><p>kept</p></html>' });
  const folder = await paid.api.create({ type: 'folder', name: 'dir', parentId: 0 });
  const gone = await paid.api.create({ type: 'upload', name: 'gone.txt', parentId: 0, content: Buffer.from('g') });
  // The plan lapses.
  await db().updateTable('accounts').set({ has_active_subscription: 0 }).where('id', '=', paid.person.id).execute();
  const api = paid.api;
  assert.equal((await api.raw('GET', '/nodes')).status, 200);
  assert.equal((await api.raw('GET', '/status')).status, 200);
  assert.equal((await api.raw('GET', `/nodes/${site.id}/content`)).status, 200);
  const refusals = [
    await api.raw('POST', '/nodes', {
      body: { type: 'site', name: `new-${paid.person.username}.html`, parentId: 0, content: 'x' },
    }),
    await api.raw('PUT', `/nodes/${site.id}/content`, { body: { content: '<html><p>edit</p></html>' } }),
    await api.raw('PATCH', `/nodes/${site.id}/rename`, { body: { newName: `renamed-${paid.person.username}.html` } }),
    await api.raw('PATCH', `/nodes/${site.id}/move`, { body: { targetParentId: folder.id } }),
  ];
  for (const r of refusals) {
    assert.equal(r.status, 402, r.text);
    assert.equal(r.json.code, 'payment-required');
    assert.equal(r.json.msgType, 'error');
    assert.match(r.json.msg, /plan/i);
  }
  assert.equal((await api.download(site.id)).content, '<html><p>kept</p></html>');
  assert.equal((await api.raw('DELETE', `/nodes/${gone.id}`)).status, 200);
  assert.equal((await api.list()).nodes.length, 2);
});

test('structure preconditions: a current expectedVersion passes; a stale one is 409 node-changed and nothing moves', async () => {
  const { api, person } = await keyHolder(kiln, {}, { protocol: 2 });
  api.conn.accountId = person.id;
  const f = await api.create({ type: 'folder', name: 'box', parentId: 0 });
  const site = await api.create({
    type: 'site',
    name: `sv-${person.username}.html`,
    parentId: f.id,
    content: '<html><p>1</p></html>',
  });
  const listed = async (id: number) => (await api.list()).nodes.find((n) => n.id === id)!;
  const folderV1 = (await listed(f.id)).structureVersion;
  const siteV1 = (await listed(site.id)).structureVersion;
  assert.equal(siteV1, site.structureVersion);

  // A content change of a file changes its version and its folder's.
  await api.upload(site.id, '<html><p>2</p></html>');
  const siteV2 = (await listed(site.id)).structureVersion;
  assert.notEqual(siteV2, siteV1);
  assert.notEqual((await listed(f.id)).structureVersion, folderV1);

  const stale = await api.raw('PATCH', `/nodes/${site.id}/rename`, {
    body: { newName: `x-${person.username}.html`, expectedVersion: siteV1 },
  });
  assert.equal(stale.status, 409);
  assert.equal(stale.json.code, 'node-changed');
  assert.equal((await listed(site.id)).name, `sv-${person.username}.html`);
  const staleMove = await api.raw('PATCH', `/nodes/${site.id}/move`, {
    body: { targetParentId: 0, expectedVersion: siteV1 },
  });
  assert.equal(staleMove.status, 409);
  assert.equal(staleMove.json.code, 'node-changed');
  const staleDelete = await api.raw(
    'DELETE',
    `/nodes/${f.id}?cascade=true&expectedVersion=${encodeURIComponent(folderV1)}`,
  );
  assert.equal(staleDelete.status, 409);
  assert.equal(staleDelete.json.code, 'node-changed');
  assert.equal((await api.list()).nodes.length, 2);

  const ok = await api.raw('PATCH', `/nodes/${site.id}/rename`, {
    body: { newName: `y-${person.username}.html`, expectedVersion: siteV2 },
  });
  assert.equal(ok.status, 200, ok.text);
  // A rename changes the version (the engine re-reads it from the next listing).
  const siteV3 = (await listed(site.id)).structureVersion;
  assert.notEqual(siteV3, siteV2);
  assert.equal(ok.json.structureVersion, siteV3);
  const moved = await api.raw('PATCH', `/nodes/${site.id}/move`, {
    body: { targetParentId: 0, newName: null, expectedVersion: siteV3 },
  });
  assert.equal(moved.status, 200, moved.text);
  const folderNow = (await listed(f.id)).structureVersion;
  const del = await api.raw('DELETE', `/nodes/${f.id}?cascade=true&expectedVersion=${encodeURIComponent(folderNow)}`);
  assert.equal(del.status, 200, del.text);
});

test('every account syncs its own index.html (index names are not global); other names stay global (409)', async () => {
  const a = await keyHolder(kiln);
  const b = await keyHolder(kiln);
  const first = await a.api.raw('POST', '/nodes', {
    body: { type: 'site', name: 'index.html', parentId: 0, content: '<html>a</html>' },
  });
  assert.ok([200, 201].includes(first.status), first.text);
  const second = await b.api.raw('POST', '/nodes', {
    body: { type: 'site', name: 'index.html', parentId: 0, content: '<html>b</html>' },
  });
  assert.ok([200, 201].includes(second.status), second.text);
  assert.notEqual(first.json.node.id, second.json.node.id);
  const shared = `global-${a.person.username}.html`;
  assert.ok(
    [200, 201].includes(
      (
        await a.api.raw('POST', '/nodes', {
          body: { type: 'site', name: shared, parentId: 0, content: '<html><p>a</p></html>' },
        })
      ).status,
    ),
  );
  const taken = await b.api.raw('POST', '/nodes', {
    body: { type: 'site', name: shared, parentId: 0, content: '<html><p>b</p></html>' },
  });
  assert.equal(taken.status, 409);
  assert.match(taken.json.msg, /already taken/);
});

test('a document without a root <html> element is refused as /_/save refuses it: 422 invalid-document, on create and write', async () => {
  const { api, person } = await keyHolder(kiln);
  const site = await api.create({
    type: 'site',
    name: `rooted-${person.username}.html`,
    parentId: 0,
    content: '<html><p>kept</p></html>',
  });
  for (const content of ['<p>no root</p>', '', '<!doctype html><body>x</body>', '<!-- only a comment -->']) {
    const put = await api.raw('PUT', `/nodes/${site.id}/content`, { body: { content } });
    assert.equal(put.status, 422, `PUT ${JSON.stringify(content)}: ${put.text}`);
    assert.equal(put.json.code, 'invalid-document');
    const create = await api.raw('POST', '/nodes', {
      body: { type: 'site', name: `rootless-${person.username}.html`, parentId: 0, content },
    });
    assert.equal(create.status, 422, `POST ${JSON.stringify(content)}: ${create.text}`);
    assert.equal(create.json.code, 'invalid-document');
  }
  assert.equal((await api.download(site.id)).content, '<html><p>kept</p></html>');
  assert.equal((await api.list()).nodes.length, 1, 'nothing was created');
});
