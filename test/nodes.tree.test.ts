// The node tree through the dashboard's HTTP operations: create (documents, folders, paths), names,
// uniqueness, nesting, rename, move (descendant paths), delete, site quota by plan.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn, actingAs } from './support/people.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import type { Client } from './support/client.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

interface Node {
  id: number;
  type: string;
  name: string;
  parentId: number;
  path: string;
  size: number;
  checksum: string | null;
  visibility: string;
}

/** A signed-in developer with a client on the main app and one on their document host. */
async function dev(over = {}) {
  const main = kiln.client();
  const me = await signedIn(kiln, main, over);
  return { me, main, host: main.on(kiln.hostOf(me.username)) };
}

async function create(c: Client, body: Record<string, unknown>) {
  return c.post('/_/dashboard/nodes', body);
}
async function mustCreate(c: Client, body: Record<string, unknown>): Promise<Node> {
  const res = await create(c, body);
  assert.equal(res.status, 201, res.text);
  assert.equal(res.json.msgType, 'success');
  return res.json.node;
}
async function tree(c: Client): Promise<Node[]> {
  const res = await c.get('/_/dashboard/nodes');
  assert.equal(res.status, 200);
  return res.json.nodes;
}
const byName = (nodes: Node[], name: string) => nodes.find((n) => n.name === name);

test('creating a document: 201 JSON with msg and the pre-rendered list; served on its host', async () => {
  const { main, host, me } = await dev();
  const res = await create(main, { type: 'site', name: 'first.html' });
  assert.equal(res.status, 201);
  assert.equal(res.json.msgType, 'success');
  assert.match(res.json.msg, /first\.html/);
  assert.match(res.json.html, /first\.html/);
  assert.match(res.json.html, new RegExp(`href="http://${me.username}\\.kiln\\.localhost:\\d+/first\\.html"`));
  assert.equal(res.json.node.type, 'site');
  assert.equal(res.json.node.parentId, 0);
  assert.equal(res.json.node.path, '');
  assert.match(res.json.node.checksum, /^[0-9a-f]{16}$/);
  const page = await host.get('/first.html');
  assert.equal(page.status, 200);
  assert.match(page.text, /<!DOCTYPE html>/);
  assert.equal(page.body.length, res.json.node.size);
});

test('a document created with HTML serves exactly those bytes', async () => {
  const { main, host } = await dev();
  const html = '<!doctype html>\r\n<html><body>Grüße ✓ \u{1F600}\n\t<p>x</p></body></html>  \n';
  await mustCreate(main, { type: 'site', name: 'exact.html', html });
  const page = await host.get('/exact.html');
  assert.equal(page.status, 200);
  assert.deepEqual(page.body, Buffer.from(html, 'utf8'));
});

test('names: documents must end in .html/.htmlclay; special characters, reserved words and traversal answer 400 naming the rule', async () => {
  const { main } = await dev();
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ type: 'site', name: 'notes.txt' }, /must end in \.html or \.htmlclay/],
    [{ type: 'site', name: '.html' }, /cannot start with a dot|need a name/],
    [{ type: 'site', name: 'a<b>.html' }, /special character/],
    [{ type: 'site', name: 'what?.html' }, /special character/],
    [{ type: 'site', name: '%2e%2e.html' }, /special character/],
    [{ type: 'site', name: 'a\\b.html' }, /slashes/],
    [{ type: 'site', name: 'nul\u0000.html' }, /special character/],
    [{ type: 'site', name: 'con.html' }, /reserved/],
    [{ type: 'site', name: '_private.html' }, /reserved/],
    [{ type: 'site', name: ' padded.html' }, /start or end with a space/],
    [{ type: 'site', name: 'zero\u200bwidth.html' }, /invisible/],
    [{ type: 'site', name: `${'x'.repeat(300)}.html` }, /at most 255 characters/],
    [{ type: 'site', name: '' }, /required/],
    [{ type: 'folder', name: 'dotted.folder' }, /Folder names cannot contain dots/],
    [{ type: 'folder', name: '..' }, /"\.\."|Path segments/],
    [{ type: 'site', name: '../escape.html' }, /Path segments cannot be empty, "\." or "\.\."/],
    [{ type: 'site', name: 'a/../../b.html' }, /Path segments cannot be empty/],
    [{ type: 'site', name: 'a//b.html' }, /Path segments cannot be empty/],
    [{ type: 'banana', name: 'x.html' }, /Type must be one of site, folder/],
  ];
  for (const [body, rule] of cases) {
    const res = await create(main, body);
    assert.equal(res.status, 400, `${JSON.stringify(body)} → ${res.status} ${res.text}`);
    assert.equal(res.json.msgType, 'error');
    assert.match(res.json.msg, rule, JSON.stringify(body));
  }
  assert.deepEqual(await tree(main), [], 'nothing was created');
  // .htmlclay is a document too, and extensions are case-insensitive.
  await mustCreate(main, { type: 'site', name: 'clay.htmlclay' });
  await mustCreate(main, { type: 'site', name: 'Upper.HTML' });
});

test('document names are unique across accounts: another account holding the name answers 409 saying so', async () => {
  const bob = await dev();
  const alice = await dev();
  await mustCreate(bob.main, { type: 'site', name: 'shared-name.html' });
  for (const name of ['shared-name.html', 'SHARED-name.html']) {
    const res = await create(alice.main, { type: 'site', name });
    assert.equal(res.status, 409);
    assert.equal(res.json.msgType, 'error');
    assert.equal(res.json.code, 'name-taken-elsewhere');
    assert.match(res.json.msg, /belongs to another account/);
  }
  // Also inside a folder, and by renaming.
  const folder = await mustCreate(alice.main, { type: 'folder', name: 'stuff' });
  assert.equal((await create(alice.main, { type: 'site', name: 'shared-name.html', parentId: folder.id })).status, 409);
  const mine = await mustCreate(alice.main, { type: 'site', name: 'alice-own.html' });
  const ren = await alice.main.post(`/_/dashboard/nodes/${mine.id}/rename`, { name: 'Shared-Name.html' });
  assert.equal(ren.status, 409);
  assert.match(ren.json.msg, /another account/);
});

test('one owner: a document name once across folders, a folder name once among its siblings (409)', async () => {
  const { main } = await dev();
  const a = await mustCreate(main, { type: 'folder', name: 'a' });
  const b = await mustCreate(main, { type: 'folder', name: 'b' });
  await mustCreate(main, { type: 'site', name: 'only-once.html', parentId: a.id });
  const again = await create(main, { type: 'site', name: 'only-once.html', parentId: b.id });
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'name-conflict');
  assert.match(again.json.msg, /already have a document named "only-once\.html" in "a"/);
  const dupFolder = await create(main, { type: 'folder', name: 'A' });
  assert.equal(dupFolder.status, 409);
  assert.match(dupFolder.json.msg, /top level already has a folder named "a"/);
  // The same folder name under different parents is fine.
  await mustCreate(main, { type: 'folder', name: 'inner', parentId: a.id });
  await mustCreate(main, { type: 'folder', name: 'inner', parentId: b.id });
});

test("a parent that is not a folder of mine: 400 for a document, 400 not-owner for someone else's folder", async () => {
  const { main } = await dev();
  const other = await dev();
  const doc = await mustCreate(main, { type: 'site', name: 'not-a-folder.html' });
  const res = await create(main, { type: 'folder', name: 'x', parentId: doc.id });
  assert.equal(res.status, 400);
  assert.match(res.json.msg, /not a folder/);
  const theirs = await mustCreate(other.main, { type: 'folder', name: 'theirs' });
  const res2 = await create(main, { type: 'site', name: 'sneaky.html', parentId: theirs.id });
  // The access table's answer for `manage` on another account's public node (issue #46: one answer per
  // question; renaming or moving it answered this already, creating in it said 404).
  assert.equal(res2.status, 400);
  assert.equal(res2.json.code, 'not-owner');
});

test('folders nest at most 5 levels; a path creates missing folders in one transaction', async () => {
  const { main, host } = await dev();
  const made = await mustCreate(main, { type: 'site', name: 'l1/l2/l3/l4/l5/deep.html' });
  assert.equal(made.path, 'l1/l2/l3/l4/l5');
  assert.equal((await host.get('/l1/l2/l3/l4/l5/deep.html')).status, 200);
  const l5 = byName(await tree(main), 'l5')!;
  const six = await create(main, { type: 'folder', name: 'l6', parentId: l5.id });
  assert.equal(six.status, 400);
  assert.match(six.json.msg, /at most 5 levels/);
  // A path that would go too deep creates nothing at all.
  const before = (await tree(main)).length;
  const tooDeep = await create(main, { type: 'site', name: 'n1/n2/n3/n4/n5/n6/x.html' });
  assert.equal(tooDeep.status, 400);
  assert.match(tooDeep.json.msg, /at most 5 levels/);
  assert.equal((await tree(main)).length, before);
  assert.equal(byName(await tree(main), 'n1'), undefined);
  // A path reuses existing folders, case-insensitively.
  const reuse = await mustCreate(main, { type: 'site', name: 'L1/l2/extra.html' });
  assert.equal(reuse.path, 'l1/l2');
  // A path relative to a chosen folder.
  const l2 = byName(await tree(main), 'l2')!;
  const rel = await mustCreate(main, { type: 'site', name: 'sub/rel.html', parentId: l2.id });
  assert.equal(rel.path, 'l1/l2/sub');
});

test('rename: a document moves to its new URL; a folder rename rewrites the paths of everything below', async () => {
  const { main, host } = await dev();
  const doc = await mustCreate(main, { type: 'site', name: 'old-name.html', html: '<html>renamed</html>' });
  const res = await main.post(`/_/dashboard/nodes/${doc.id}/rename`, { name: 'new-name.html' });
  assert.equal(res.status, 200);
  assert.match(res.json.msg, /Renamed "old-name\.html" to "new-name\.html"/);
  assert.match(res.json.html, /new-name\.html/);
  assert.equal((await host.get('/new-name.html')).text, '<html>renamed</html>');
  const old = await host.get('/old-name.html');
  assert.equal(old.status, 302, 'the old address leads to the new one for 30 days (test/redirects.http.test.ts)');
  assert.equal(old.headers.location, '/new-name.html');

  await mustCreate(main, { type: 'site', name: 'top/mid/leaf.html', html: '<html>leaf</html>' });
  await mustCreate(main, { type: 'site', name: 'top/direct.html' });
  const top = byName(await tree(main), 'top')!;
  assert.equal((await main.post(`/_/dashboard/nodes/${top.id}/rename`, { name: 'Renamed' })).status, 200);
  const after = await tree(main);
  assert.equal(byName(after, 'mid')!.path, 'Renamed');
  assert.equal(byName(after, 'leaf.html')!.path, 'Renamed/mid');
  assert.equal(byName(after, 'direct.html')!.path, 'Renamed');
  assert.equal((await host.get('/Renamed/mid/leaf.html')).text, '<html>leaf</html>');
  // Case-only renames are allowed; invalid names refused.
  assert.equal((await main.post(`/_/dashboard/nodes/${top.id}/rename`, { name: 'renamed' })).status, 200);
  const bad = await main.post(`/_/dashboard/nodes/${top.id}/rename`, { name: 'has.dot' });
  assert.equal(bad.status, 400);
  const badDoc = await main.post(`/_/dashboard/nodes/${doc.id}/rename`, { name: 'no-extension' });
  assert.equal(badDoc.status, 400);
  assert.match(badDoc.json.msg, /must end in \.html/);
});

test('move: paths of all descendants follow; into itself or a descendant is 400; depth is kept', async () => {
  const { main, host } = await dev();
  await mustCreate(main, { type: 'site', name: 'src/lib/util/helper.html', html: '<html>helper</html>' });
  await mustCreate(main, { type: 'folder', name: 'dest' });
  let t = await tree(main);
  const src = byName(t, 'src')!;
  const lib = byName(t, 'lib')!;
  const util = byName(t, 'util')!;
  const dest = byName(t, 'dest')!;

  const self = await main.post(`/_/dashboard/nodes/${src.id}/move`, { parentId: src.id });
  assert.equal(self.status, 400);
  assert.match(self.json.msg, /into itself or into one of its own subfolders/);
  const below = await main.post(`/_/dashboard/nodes/${src.id}/move`, { parentId: util.id });
  assert.equal(below.status, 400);

  const res = await main.post(`/_/dashboard/nodes/${src.id}/move`, { parentId: dest.id });
  assert.equal(res.status, 200, res.text);
  assert.match(res.json.msg, /Moved "src" to "dest"/);
  t = await tree(main);
  assert.equal(byName(t, 'src')!.path, 'dest');
  assert.equal(byName(t, 'lib')!.path, 'dest/src');
  assert.equal(byName(t, 'util')!.path, 'dest/src/lib');
  assert.equal(byName(t, 'helper.html')!.path, 'dest/src/lib/util');
  assert.equal((await host.get('/dest/src/lib/util/helper.html')).text, '<html>helper</html>');

  // src holds two levels of folders (lib/util): under a folder at level 3 util would sit at level 6.
  const d1 = await mustCreate(main, { type: 'folder', name: 'x1/x2/x3' });
  const tooDeep = await main.post(`/_/dashboard/nodes/${src.id}/move`, { parentId: d1.id });
  assert.equal(tooDeep.status, 400);
  assert.match(tooDeep.json.msg, /at most 5 levels/);
  assert.equal(byName(await tree(main), 'util')!.path, 'dest/src/lib', 'a refused move changes nothing');

  // Back to the top level, renaming on the way; a sibling with that name answers 409.
  const toTop = await main.post(`/_/dashboard/nodes/${lib.id}/move`, { parentId: 0, name: 'library' });
  assert.equal(toTop.status, 200, toTop.text);
  t = await tree(main);
  assert.equal(byName(t, 'library')!.path, '');
  assert.equal(byName(t, 'helper.html')!.path, 'library/util');
  const clash = await main.post(`/_/dashboard/nodes/${util.id}/move`, { parentId: 0, name: 'dest' });
  assert.equal(clash.status, 409);
  // A document moves too.
  const helper = byName(t, 'helper.html')!;
  assert.equal((await main.post(`/_/dashboard/nodes/${helper.id}/move`, { parentId: dest.id })).status, 200);
  assert.equal((await host.get('/dest/helper.html')).text, '<html>helper</html>');
  // Into a document or a missing folder.
  assert.equal((await main.post(`/_/dashboard/nodes/${util.id}/move`, { parentId: helper.id })).status, 400);
  assert.equal((await main.post(`/_/dashboard/nodes/${util.id}/move`, { parentId: 99999999 })).status, 404);
});

test('delete: a document goes to the trash with its content; a non-empty folder needs cascade (400 otherwise), then everything below goes', async () => {
  const { main, host } = await dev();
  const doc = await mustCreate(main, { type: 'site', name: 'doomed.html' });
  const del = await main.post(`/_/dashboard/nodes/${doc.id}/delete`, {});
  assert.equal(del.status, 200);
  assert.match(del.json.msg, /Deleted "doomed\.html"/);
  assert.doesNotMatch(del.json.html, /doomed\.html/);
  assert.equal((await host.get('/doomed.html')).status, 404);
  // Kept in the trash (versions and content too) until it is purged (test/trash.http.test.ts).
  const { db } = kiln.services.database;
  assert.equal((await db.selectFrom('versions').select('id').where('node_id', '=', doc.id).execute()).length, 1);
  const trash = await main.get('/_/dashboard/trash', { headers: { accept: 'application/json' } });
  assert.deepEqual(
    trash.json.trash.map((t: { name: string }) => t.name),
    ['doomed.html'],
  );
  assert.equal((await main.post(`/_/dashboard/trash/${doc.id}/purge`, {})).status, 200);
  assert.equal((await db.selectFrom('versions').select('id').where('node_id', '=', doc.id).execute()).length, 0);
  assert.equal(
    (await db.selectFrom('node_contents').select('node_id').where('node_id', '=', doc.id).execute()).length,
    0,
  );

  await mustCreate(main, { type: 'site', name: 'box/inner/one.html' });
  await mustCreate(main, { type: 'site', name: 'box/two.html' });
  const box = byName(await tree(main), 'box')!;
  const refused = await main.post(`/_/dashboard/nodes/${box.id}/delete`, {});
  assert.equal(refused.status, 400);
  assert.equal(refused.json.code, 'folder-not-empty');
  assert.match(refused.json.msg, /not empty \(it holds 3 items\)/);
  assert.equal((await tree(main)).length, 4);
  const ok = await main.post(`/_/dashboard/nodes/${box.id}/delete`, { cascade: true });
  assert.equal(ok.status, 200);
  assert.match(ok.json.msg, /and 3 items inside it/);
  assert.deepEqual(await tree(main), []);
  assert.equal((await host.get('/box/two.html')).status, 404);
  // The name is free again, for anyone.
  await mustCreate(main, { type: 'site', name: 'two.html' });
  // An empty folder needs no cascade; a node that is gone is 404.
  const empty = await mustCreate(main, { type: 'folder', name: 'empty' });
  assert.equal((await main.post(`/_/dashboard/nodes/${empty.id}/delete`, {})).status, 200);
  assert.equal((await main.post(`/_/dashboard/nodes/${empty.id}/delete`, {})).status, 404);
});

test('site quota: free accounts stop at 10 documents with 403 quota-exceeded naming the limit; paid and superadmins go on', async () => {
  const free = await dev({ plan: 'free' });
  for (let i = 0; i < 10; i++) await mustCreate(free.main, { type: 'site', name: `free-${free.me.id}-${i}.html` });
  const over = await create(free.main, { type: 'site', name: `free-${free.me.id}-10.html` });
  assert.equal(over.status, 403);
  assert.equal(over.json.code, 'quota-exceeded');
  assert.match(over.json.msg, /free plan allows 10 documents/);
  assert.match(over.json.msg, /Upgrade to Personal or Maker/);
  // Folders are not documents.
  await mustCreate(free.main, { type: 'folder', name: 'still-fine' });
  // Deleting one makes room.
  const one = (await tree(free.main)).find((n) => n.type === 'site')!;
  await free.main.post(`/_/dashboard/nodes/${one.id}/delete`, {});
  await mustCreate(free.main, { type: 'site', name: `free-${free.me.id}-11.html` });

  for (const over of [{ plan: 'personal' as const }, { plan: 'maker' as const }, { isSuperadmin: true }]) {
    const paid = await dev(over);
    for (let i = 0; i < 11; i++) await mustCreate(paid.main, { type: 'site', name: `paid-${paid.me.id}-${i}.html` });
    const page = await paid.main.page('/_/dashboard');
    assert.match(cheerio.load(page.text)('#usage').text(), /^11 documents \(unlimited\)/);
  }
  const page = await free.main.page('/_/dashboard');
  assert.match(
    cheerio.load(page.text)('#usage').text(),
    /^10 of 10 documents · .* stored · uploads up to 10\.0 MB each · Upgrade for more/,
  );
});

test('races: one name claimed by many accounts at once gives one 201 and 409s; a free account at 9 documents creating 5 at once ends at 10', async () => {
  const people = await Promise.all([0, 1, 2, 3, 4].map(() => dev()));
  const answers = await Promise.all(people.map((p) => create(p.main, { type: 'site', name: 'contested.html' })));
  assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409, 409, 409, 409]);
  for (const r of answers) assert.equal(r.json.msgType, r.status === 201 ? 'success' : 'error');

  const free = await dev({ plan: 'free' });
  for (let i = 0; i < 9; i++) await mustCreate(free.main, { type: 'site', name: `race-${free.me.id}-${i}.html` });
  const burst = await Promise.all(
    [0, 1, 2, 3, 4].map((i) => create(free.main, { type: 'site', name: `race-${free.me.id}-burst-${i}.html` })),
  );
  assert.deepEqual(burst.map((r) => r.status).sort(), [201, 403, 403, 403, 403]);
  assert.equal((await tree(free.main)).filter((n) => n.type === 'site').length, 10);
});

test('every account may have its own index.html (the host home page); other document names stay unique across accounts', async () => {
  const kiln2 = await startKiln();
  try {
    const a = await createPerson(kiln2.services, newPerson());
    const b = await createPerson(kiln2.services, newPerson());
    await createNode(await actingAs(kiln2.services, a.id), {
      ownerId: a.id,
      parentId: 0,
      type: 'site',
      name: 'index.html',
      html: '<html>a</html>',
    });
    await createNode(await actingAs(kiln2.services, b.id), {
      ownerId: b.id,
      parentId: 0,
      type: 'site',
      name: 'index.html',
      html: '<html>b</html>',
    });
    assert.equal((await kiln2.client(kiln2.hostOf(a.username)).get('/')).text, '<html>a</html>');
    assert.equal((await kiln2.client(kiln2.hostOf(b.username)).get('/')).text, '<html>b</html>');
    // An index in a folder is that folder's own, too; a second one among the same siblings is refused.
    const folder = await createNode(await actingAs(kiln2.services, a.id), {
      ownerId: a.id,
      parentId: 0,
      type: 'folder',
      name: 'blog',
    });
    await createNode(await actingAs(kiln2.services, a.id), {
      ownerId: a.id,
      parentId: folder.id,
      type: 'site',
      name: 'index.html',
      html: '<html>blog</html>',
    });
    assert.equal((await kiln2.client(kiln2.hostOf(a.username)).get('/blog/index.html')).text, '<html>blog</html>');
    await assert.rejects(
      createNode(await actingAs(kiln2.services, a.id), {
        ownerId: a.id,
        parentId: 0,
        type: 'site',
        name: 'INDEX.html',
      }),
      (e: { status?: number }) => e.status === 409,
    );
    await createNode(await actingAs(kiln2.services, a.id), {
      ownerId: a.id,
      parentId: 0,
      type: 'site',
      name: 'unique-name.html',
    });
    await assert.rejects(
      createNode(await actingAs(kiln2.services, b.id), {
        ownerId: b.id,
        parentId: 0,
        type: 'site',
        name: 'unique-name.html',
      }),
      (e: { status?: number }) => e.status === 409,
    );
  } finally {
    await kiln2.stop();
  }
});
