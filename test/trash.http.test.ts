// The trash through HTTP: deleting (dashboard or sync API) puts a document, upload or folder in the trash
// for 30 days; it is gone for every reader and its name is free; restoring brings it back whole (versions,
// folder contents, paths) unless its name was taken meanwhile or the plan is full; purging and the
// 30-day sweep delete it for good; nobody else can see or touch another account's trash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { movableClock, startKiln, type TestKiln } from './support/kiln.ts';
import { actingAs, signedIn } from './support/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { listTrash, sweepTrash } from '../src/nodes/trash.ts';

const time = movableClock();
let kiln: TestKiln;
before(async () => {
  kiln = await startKiln({ clock: time.clock });
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };

async function dev(over = {}) {
  const main = kiln.client();
  const me = await signedIn(kiln, main, over);
  const host = kiln.client(kiln.hostOf(me.username));
  return { me, main, host };
}

async function create(main: ReturnType<TestKiln['client']>, name: string, html?: string) {
  const r = await main.post('/_/dashboard/nodes', { type: 'site', name, ...(html ? { html } : {}) }, json);
  assert.equal(r.status, 201, r.text);
  return r.json.node as { id: number; name: string };
}

const trashOf = async (main: ReturnType<TestKiln['client']>) =>
  (await main.get('/_/dashboard/trash', json)).json.trash as Array<{
    id: number;
    name: string;
    inside: number;
    path: string;
  }>;

test('a deleted document is gone for readers, its name is free, and it comes back with its versions', async () => {
  const { me, main, host } = await dev({ plan: 'maker' });
  const name = `diary-${me.id}.html`;
  const doc = await create(main, name, '<html><body>one</body></html>');
  const saved = await main.enter(kiln.hostOf(me.username));
  const save = await saved.post('/_/save', '<html><body>two</body></html>', {
    headers: { 'content-type': 'text/plain', 'document-url': `http://${kiln.hostOf(me.username)}/${name}` },
  });
  assert.equal(save.status, 200, save.text);

  const gone = await main.post(`/_/dashboard/nodes/${doc.id}/delete`, {}, json);
  assert.equal(gone.status, 200);
  assert.match(gone.json.msg, /stays in the trash for 30 days/);
  assert.equal((await host.get(`/${name}`)).status, 404);
  assert.equal((await main.get(`/_/dashboard/nodes`, json)).json.nodes.length, 0);
  assert.deepEqual(
    (await trashOf(main)).map((t) => [t.id, t.name, t.inside]),
    [[doc.id, name, 0]],
  );
  // Its name is free: for this account, and (document names are unique across Kiln) for anyone.
  const other = await dev({ plan: 'maker' });
  const taken = await create(other.main, name, '<html>other</html>');

  // Restoring while the name is taken is refused in words; once it is free, it comes back whole.
  const refused = await main.post(`/_/dashboard/trash/${doc.id}/restore`, {}, json);
  assert.equal(refused.status, 409);
  assert.match(refused.json.msg, /was taken meanwhile/);
  await other.main.post(`/_/dashboard/nodes/${taken.id}/delete`, {}, json);
  const back = await main.post(`/_/dashboard/trash/${doc.id}/restore`, {}, json);
  assert.equal(back.status, 200, back.text);
  assert.match(back.json.msg, /Restored ".*" to the top level, with its versions/);
  assert.equal((await host.get(`/${name}`)).text, '<html><body>two</body></html>');
  const versions = await saved.get(`/_/versions?path=${name}`, json);
  assert.equal(versions.json.versions.length, 2, 'both versions came back');
  assert.deepEqual(await trashOf(main), []);

  // A browser's form post comes back to the trash page with the message.
  await main.post(`/_/dashboard/nodes/${doc.id}/delete`, {}, json);
  const page = await main.post(
    `/_/dashboard/trash/${doc.id}/purge`,
    {},
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(page.status, 302);
  const shown = cheerio.load((await main.page(page.headers.location!)).text);
  assert.match(shown('.msg.success').text(), /deleted for good/);
  assert.equal((await main.post(`/_/dashboard/trash/${doc.id}/restore`, {}, json)).status, 404, 'purged is purged');
});

test('a folder goes to the trash with what it holds, as one deletion, and comes back with its paths', async () => {
  const { me, main, host } = await dev({ plan: 'maker' });
  const a = await create(main, `box${me.id}/inner/a-${me.id}.html`, '<html><p>a</p></html>');
  await create(main, `box${me.id}/b-${me.id}.html`, '<html><p>b</p></html>');
  const box = (await main.get('/_/dashboard/nodes', json)).json.nodes.find(
    (n: { name: string }) => n.name === `box${me.id}`,
  );
  assert.equal((await main.post(`/_/dashboard/nodes/${box.id}/delete`, { cascade: true }, json)).status, 200);
  assert.equal((await host.get(`/box${me.id}/inner/a-${me.id}.html`)).status, 404);
  const trash = await trashOf(main);
  assert.deepEqual(
    trash.map((t) => [t.name, t.inside]),
    [[`box${me.id}`, 3]],
  );
  // A new folder of the same name meanwhile: the restore says so; after renaming it, all comes back.
  const again = await main.post('/_/dashboard/nodes', { type: 'folder', name: `box${me.id}` }, json);
  assert.equal(again.status, 201);
  assert.equal((await main.post(`/_/dashboard/trash/${box.id}/restore`, {}, json)).status, 409);
  await main.post(`/_/dashboard/nodes/${again.json.node.id}/rename`, { name: `new${me.id}` }, json);
  assert.equal((await main.post(`/_/dashboard/trash/${box.id}/restore`, {}, json)).status, 200);
  assert.equal((await host.get(`/box${me.id}/inner/a-${me.id}.html`)).text, '<html><p>a</p></html>');
  const nodes = (await main.get('/_/dashboard/nodes', json)).json.nodes as Array<{ id: number; path: string }>;
  assert.equal(nodes.find((n) => n.id === a.id)?.path, `box${me.id}/inner`);
});

test('the sync API deletes into the trash too; sync lists leave the trash out', async () => {
  const { me, main } = await dev({ plan: 'maker' });
  const { key } = await createSyncKey(kiln.services, me.id);
  const sync = kiln.client();
  const made = await sync.post(
    '/_/sync/nodes',
    { type: 'site', name: `synced-${me.id}.html`, parentId: 0, content: '<html><p>s</p></html>' },
    { headers: { 'x-api-key': key } },
  );
  assert.equal(made.status, 201, made.text);
  const del = await sync.request('DELETE', `/_/sync/nodes/${made.json.node.id}`, { headers: { 'x-api-key': key } });
  assert.ok(del.status < 300, del.text);
  const listed = await sync.get('/_/sync/nodes', { headers: { 'x-api-key': key } });
  assert.equal(
    (listed.json.nodes as Array<{ id: number }>).some((n) => n.id === made.json.node.id),
    false,
  );
  assert.deepEqual(
    (await trashOf(main)).map((t) => t.id),
    [made.json.node.id],
  );
  assert.equal(
    (await sync.get(`/_/sync/nodes/${made.json.node.id}/content`, { headers: { 'x-api-key': key } })).status,
    404,
  );
});

test('restoring respects the plan; strangers cannot see or touch the trash; the sweep purges after 30 days', async () => {
  const { me, main } = await dev({ plan: 'free' });
  const first = await create(main, `q0-${me.id}.html`);
  for (let i = 1; i < 10; i++) await create(main, `q${i}-${me.id}.html`);
  await main.post(`/_/dashboard/nodes/${first.id}/delete`, {}, json);
  await create(main, `q10-${me.id}.html`);
  const full = await main.post(`/_/dashboard/trash/${first.id}/restore`, {}, json);
  assert.equal(full.status, 403);
  assert.equal(full.json.code, 'quota-exceeded');

  const stranger = await dev();
  assert.equal((await stranger.main.post(`/_/dashboard/trash/${first.id}/restore`, {}, json)).status, 404);
  assert.equal((await stranger.main.post(`/_/dashboard/trash/${first.id}/purge`, {}, json)).status, 404);
  const strangerTrash = await stranger.main.get('/_/dashboard/trash', json);
  assert.deepEqual(strangerTrash.json.trash, [], strangerTrash.text);

  time.advance(29 * 24 * 3600_000);
  await sweepTrash(kiln.services);
  assert.equal((await trashOf(main)).length, 1, 'kept for 30 days');
  time.advance(2 * 24 * 3600_000);
  assert.ok((await sweepTrash(kiln.services)) >= 1);
  // (The browser session has expired by now: ask the trash directly.)
  assert.deepEqual(await listTrash(await actingAs(kiln.services, me.id), { ownerId: me.id }), []);
  const row = await kiln.services.database.db
    .selectFrom('nodes')
    .select('id')
    .where('id', '=', first.id)
    .executeTakeFirst();
  assert.equal(row, undefined, 'the row, its content and versions are gone');
});
