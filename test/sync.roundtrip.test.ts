// A full sync round trip the way a desktop tool does it, with the test client in support/sync-client.ts
// and real local folders: list, download, local edit, conditional upload, conflict (the edit kept as a
// local copy), new files and folders, rename, move, delete; a second device follows along. Run with
// protocol 1 (the older desktop engine) and protocol 2 (etags, expected versions, complete listings).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, checksum, relPathOf, SyncApi, SyncFolder, SyncError } from './support/sync-client.ts';
import { createSyncKey } from '../src/sync/keys.ts';

let kiln: TestKiln;
const dirs: string[] = [];
before(async () => (kiln = await startKiln()));
after(async () => {
  await kiln.stop();
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

async function tempDir() {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-sync-folder-'));
  dirs.push(d);
  return d;
}

/** Relative path → checksum of every file in a local folder (conflict copies excluded). */
async function localTree(dir: string, rel = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, await localTree(dir, child));
    else if (!e.name.includes('.conflict-')) out[child] = checksum(await fs.readFile(path.join(dir, child)));
  }
  return out;
}
async function serverTree(api: SyncApi): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const n of (await api.list()).nodes) if (n.type !== 'folder') out[relPathOf(n)] = n.etag!;
  return out;
}

for (const protocol of [1, 2] as const) {
  test(`round trip, protocol ${protocol}: list, download, edit, conditional upload, conflict, create, rename, move, delete`, async () => {
    const { api: seed, person, port } = await keyHolder(kiln);
    const u = person.username;
    const conn = (apiKey: string) => ({
      port,
      host: kiln.config.rootDomain,
      apiKey,
      protocol,
      accountId: protocol === 2 ? person.id : undefined,
    });
    // What is on the server before the tool starts (made by another device).
    const notes = await seed.create({ type: 'folder', name: 'notes', parentId: 0 });
    const todo = await seed.create({
      type: 'site',
      name: `todo-${u}.html`,
      parentId: notes.id,
      content: '<!doctype html><html><ul><li>one</li></ul></html>',
    });
    const home = await seed.create({
      type: 'site',
      name: `home-${u}.html`,
      parentId: 0,
      content: '<!doctype html><html><h1>home</h1></html>',
    });
    const logo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 255]);
    await seed.create({ type: 'upload', name: 'logo.png', parentId: notes.id, content: logo });

    // Device A: first pull downloads everything.
    const a = new SyncFolder(new SyncApi(conn((await createSyncKey(kiln.services, person.id)).key)), await tempDir());
    if (protocol === 2) {
      const d = await a.api.accounts();
      assert.equal(d.accounts.find((x: { kind: string }) => x.kind === 'personal').id, person.id);
    }
    const first = await a.pull();
    assert.deepEqual(first.downloaded.sort(), [`home-${u}.html`, 'notes/logo.png', `notes/todo-${u}.html`].sort());
    assert.deepEqual(await localTree(a.dir), await serverTree(seed));
    assert.deepEqual(await a.read('notes/logo.png'), logo);
    // Nothing changed: the next pull downloads nothing.
    assert.deepEqual((await a.pull()).downloaded, []);

    // Local edit → conditional upload.
    await a.write(`notes/todo-${u}.html`, '<!doctype html><html><ul><li>one</li><li>two</li></ul></html>');
    const pushed = await a.push();
    assert.deepEqual(pushed.uploaded, [`notes/todo-${u}.html`]);
    assert.deepEqual(pushed.conflicts, []);
    assert.equal(
      (await seed.download(todo.id)).content,
      '<!doctype html><html><ul><li>one</li><li>two</li></ul></html>',
    );
    assert.equal(
      (await kiln.client(kiln.hostOf(u)).get(`/notes/todo-${u}.html`)).text,
      '<!doctype html><html><ul><li>one</li><li>two</li></ul></html>',
    );

    // Conflict: another device saves first; A's edit is refused (412), kept as a local copy, and A
    // takes the server's version. Nothing of A's reaches the server.
    const other = await seed.upload(home.id, '<!doctype html><html><h1>home (other device)</h1></html>');
    await a.write(`home-${u}.html`, '<!doctype html><html><h1>home (device A)</h1></html>');
    const conflicted = await a.push();
    assert.deepEqual(conflicted.conflicts, [`home-${u}.html`]);
    assert.equal(
      (await a.read(`home-${u}.html`)).toString(),
      '<!doctype html><html><h1>home (other device)</h1></html>',
    );
    assert.equal(
      (await a.read(`home-${u}.html.conflict-${other.etag}`)).toString(),
      '<!doctype html><html><h1>home (device A)</h1></html>',
    );
    assert.equal((await seed.download(home.id)).content, '<!doctype html><html><h1>home (other device)</h1></html>');

    // New local files in a new folder: created on the server, folders first.
    await a.write(`drafts/idea-${u}.html`, '<!doctype html><html><p>idea</p></html>');
    await a.write('drafts/data.json', '{"a":1}');
    const created = await a.push();
    assert.deepEqual(created.created.sort(), ['drafts/data.json', `drafts/idea-${u}.html`]);
    assert.deepEqual(await localTree(a.dir), await serverTree(seed));

    // Rename a file, rename a folder (descendants follow), move a folder into another, move+rename a file.
    await a.moveLocal(`drafts/idea-${u}.html`, `drafts/plan-${u}.html`);
    await a.moveLocal('drafts', 'ideas');
    await a.moveLocal('ideas', 'notes/ideas');
    await a.moveLocal('notes/logo.png', 'brand.png');
    assert.deepEqual(
      Object.keys(await serverTree(seed)).sort(),
      [
        'brand.png',
        `home-${u}.html`,
        'notes/ideas/data.json',
        `notes/ideas/plan-${u}.html`,
        `notes/todo-${u}.html`,
      ].sort(),
    );
    assert.deepEqual(await localTree(a.dir), await serverTree(seed));
    assert.equal(
      (await kiln.client(kiln.hostOf(u)).get(`/notes/ideas/plan-${u}.html`)).text,
      '<!doctype html><html><p>idea</p></html>',
    );

    // Device B starts later and sees the same tree.
    const b = new SyncFolder(new SyncApi(conn((await createSyncKey(kiln.services, person.id)).key)), await tempDir());
    await b.pull();
    assert.deepEqual(await localTree(b.dir), await serverTree(seed));

    // Deletes: a file and a whole folder, then B follows (a complete listing removes what is gone).
    await a.deleteLocal('brand.png');
    await a.deleteLocal('notes/ideas');
    assert.deepEqual(Object.keys(await serverTree(seed)).sort(), [`home-${u}.html`, `notes/todo-${u}.html`].sort());
    const followed = await b.pull();
    assert.deepEqual(
      followed.removed.sort(),
      ['brand.png', 'notes/ideas', 'notes/ideas/data.json', `notes/ideas/plan-${u}.html`].sort(),
    );
    assert.deepEqual(await localTree(b.dir), await serverTree(seed));
    assert.deepEqual(await localTree(a.dir), await serverTree(seed));

    // B edits what A renamed meanwhile: B's baseline is stale for structure, not for content.
    await a.moveLocal(`notes/todo-${u}.html`, `notes/tasks-${u}.html`);
    await b.write(`notes/todo-${u}.html`, '<!doctype html><html><ul><li>from B</li></ul></html>');
    assert.deepEqual((await b.push()).uploaded, [`notes/todo-${u}.html`]);
    await b.pull();
    assert.equal(
      (await b.read(`notes/tasks-${u}.html`)).toString(),
      '<!doctype html><html><ul><li>from B</li></ul></html>',
    );
    await a.pull();
    assert.deepEqual(await localTree(a.dir), await serverTree(seed));
    assert.deepEqual(await localTree(b.dir), await serverTree(seed));

    if (protocol === 2) {
      // A stale structure version (B listed before A renamed again) is refused with node-changed.
      const stale = b.byPath(`notes/tasks-${u}.html`)!.structureVersion!;
      await a.moveLocal(`notes/tasks-${u}.html`, `notes/done-${u}.html`);
      await assert.rejects(
        b.api.rename(todo.id, `x-${u}.html`, stale),
        (e: unknown) => e instanceof SyncError && e.status === 409 && e.code === 'node-changed',
      );
      assert.ok(Object.keys(await serverTree(seed)).includes(`notes/done-${u}.html`));
    }
  });
}
