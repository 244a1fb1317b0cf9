// A full disk under the blob store (a 1 MB tmpfs mounted on DATA_DIR/blobs): an upload that does not
// fit answers 507 insufficient-storage, leaves no temporary file and no node pointing at a missing
// blob, and uploads work again without a restart once there is room. And a full disk under the SQLite
// database itself (the whole DATA_DIR on a small tmpfs): saves answer 507, the last acknowledged save
// is what is served, `PRAGMA integrity_check` stays ok, saves work again once there is room. And the disk
// filled to its last block at chosen moments, so that it is met at a group's COMMIT (the WAL must grow) or
// inside its first write (pages spill to the WAL): 507 each time, also beside other transactions. Needs
// root to mount a tmpfs (CI runs as root); skipped with the reason otherwise.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-disk-'));
const blobs = path.join(dataDir, 'blobs');
let mounted = false;
try {
  mkdirSync(blobs);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', blobs], { stdio: 'ignore' });
  mounted = true;
} catch {
  // not root, or no tmpfs here
}
const skip = !mounted && 'mounting a small tmpfs needs root (CI runs as root)';
/** The whole data folder of a second Kiln on a 6 MB tmpfs (SQLite runs only: the database is there). */
const smallDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-disk-db-'));
let smallMounted = false;
if (storage === 'sqlite' && mounted) {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', smallDir], { stdio: 'ignore' });
    smallMounted = true;
  } catch {
    // as above
  }
}
const skipDb =
  storage !== 'sqlite'
    ? 'the SQLite run only (PostgreSQL keeps its data elsewhere)'
    : !smallMounted && 'mounting a small tmpfs needs root (CI runs as root)';

/** A third data folder, on an 8 MB tmpfs, filled to the last block at chosen moments (SQLite runs only). */
const fullDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-disk-full-'));
let fullMounted = false;
if (storage === 'sqlite' && mounted) {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', fullDir], { stdio: 'ignore' });
    fullMounted = true;
  } catch {
    // as above
  }
}

let kiln: TestKiln;
before(async () => {
  if (!skip) kiln = await startKiln({ env: { DATA_DIR: dataDir } });
});
after(async () => {
  if (kiln) await kiln.stop().catch(() => {});
  if (mounted) execFileSync('umount', ['-l', blobs]);
  rmSync(dataDir, { recursive: true, force: true });
  if (smallMounted) execFileSync('umount', ['-l', smallDir]);
  rmSync(smallDir, { recursive: true, force: true });
  if (fullMounted) execFileSync('umount', ['-l', fullDir]);
  rmSync(fullDir, { recursive: true, force: true });
});

/** Every file under the blob store, temporary ones included. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

test('a full disk: 507, nothing half-written, and uploads work again once there is room', { skip }, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.hostOf(me.username);
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'page.html',
    html: '<html></html>',
  });
  const doc = main.on(host);
  const upload = (name: string, bytes: Buffer) =>
    doc.post(
      '/_/upload',
      { fileName: name, fileBody: bytes.toString('base64') },
      { headers: { 'page-url': `http://${host}/page.html` } },
    );

  // Most of the disk taken by something else.
  const filler = path.join(blobs, 'filler');
  writeFileSync(filler, Buffer.alloc(900 * 1024, 1));
  const big = await upload('big.bin', Buffer.alloc(400 * 1024, 7));
  assert.equal(big.status, 507, big.text);
  assert.equal(big.json.code, 'insufficient-storage');
  assert.deepEqual(
    files(blobs).filter((f) => f.startsWith('.tmp-')),
    [],
    'no temporary file left',
  );
  const rows = await kiln.services.database.db
    .selectFrom('nodes')
    .select('name')
    .where('owner_id', '=', me.id)
    .where('type', '=', 'upload')
    .execute();
  assert.deepEqual(rows, [], 'no node for the upload that failed');

  // Room again: the same upload goes through, without a restart.
  rmSync(filler);
  const again = await upload('big.bin', Buffer.alloc(400 * 1024, 7));
  assert.equal(again.status, 200, again.text);
  assert.equal((await kiln.client(host).get('/big.bin')).body.length, 400 * 1024);
});

test('a full disk under the SQLite database: 507, the last acknowledged save served, integrity ok, saves again once there is room', {
  skip: skipDb,
  timeout: 120_000,
}, async () => {
  const small = await startKiln({ env: { DATA_DIR: smallDir, LOG_LEVEL: process.env.KILN_DEBUG_LOG ?? 'silent' } });
  try {
    const main = small.client();
    const me = await signedIn(small, main, { plan: 'maker' });
    const host = small.hostOf(me.username);
    await createNode(await actingAs(small.services, me.id), {
      ownerId: me.id,
      parentId: 0,
      type: 'site',
      name: 'grow.html',
      html: '<html></html>',
    });
    const doc = main.on(host);
    // Documents for a burst of concurrent saves, made while there is room.
    const names = Array.from({ length: 24 }, (_, i) => `burst-${i}.html`);
    for (const name of names)
      await createNode(await actingAs(small.services, me.id), {
        ownerId: me.id,
        parentId: 0,
        type: 'site',
        name,
        html: '<html></html>',
      });
    // Something else takes part of the disk.
    const filler = path.join(smallDir, 'filler');
    writeFileSync(filler, Buffer.alloc(1024 * 1024, 1));
    // Each save is new, incompressible text: its version is about as large as the document.
    const page = (n: number) =>
      `<!DOCTYPE html><html><body><p>${n}</p><pre>${randomBytes(60 * 1024).toString('base64')}</pre></body></html>`;
    const save = (html: string) =>
      doc.post('/_/save', html, {
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/grow.html` },
      });
    let last = '';
    let saved = 0;
    let full: Awaited<ReturnType<typeof save>> | null = null;
    for (let i = 0; i < 200 && !full; i++) {
      const html = page(i);
      const r = await save(html);
      if (r.status === 200) {
        last = html;
        saved++;
      } else full = r;
    }
    assert.ok(full, 'the disk filled up');
    assert.ok(saved >= 3, `saves went through before the disk was full (${saved})`);
    assert.equal(full.status, 507, full.text);
    assert.equal(full.json.code, 'insufficient-storage');
    assert.equal((await small.client(host).get('/grow.html')).text, last, 'the last acknowledged save is served');
    // Writes that share one group commit (SQLite) each get the disk's answer: 507, never a 500 (#26.3).
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        names.map((name) =>
          doc.post('/_/save', page(round * 100 + names.indexOf(name)), {
            headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/${name}` },
          }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      assert.ok(
        statuses.every((st) => st === 200 || st === 507),
        `a burst on a full disk: ${JSON.stringify(statuses)} ${answers.find((a) => a.status === 500)?.text ?? ''}`,
      );
      assert.ok(statuses.includes(507));
    }
    const check = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(small.services.database.db);
    assert.deepEqual(
      check.rows.map((r) => r.integrity_check),
      ['ok'],
    );

    // Room again: without a restart, saves go through.
    rmSync(filler);
    const html = page(999);
    const again = await save(html);
    assert.equal(again.status, 200, again.text);
    assert.equal((await small.client(host).get('/grow.html')).text, html);
    const after = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(small.services.database.db);
    assert.deepEqual(
      after.rows.map((r) => r.integrity_check),
      ['ok'],
    );
  } finally {
    await small.stop().catch(() => {});
  }
});

/** Takes every free block of the file system under `dir` (a file written until ENOSPC); its path. */
function fillUp(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'a');
  try {
    for (const size of [256 * 1024, 4096, 1])
      try {
        for (const chunk = Buffer.alloc(size, 1); ; ) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
  } finally {
    closeSync(fd);
  }
  return file;
}

test('a full disk at the COMMIT of a group, and inside its first write: 507 every time, nothing half-written (#44.7)', {
  skip:
    storage !== 'sqlite'
      ? 'the SQLite run only (PostgreSQL keeps its data elsewhere)'
      : !fullMounted && 'mounting a small tmpfs needs root (CI runs as root)',
  timeout: 120_000,
}, async () => {
  const k = await startKiln({ env: { DATA_DIR: fullDir, LOG_LEVEL: process.env.KILN_DEBUG_LOG ?? 'silent' } });
  try {
    const main = k.client();
    const me = await signedIn(k, main, { plan: 'maker' });
    const host = k.hostOf(me.username);
    const names = Array.from({ length: 12 }, (_, i) => `doc-${i}.html`);
    for (const name of names)
      await createNode(await actingAs(k.services, me.id), {
        ownerId: me.id,
        parentId: 0,
        type: 'site',
        name,
        html: '<html></html>',
      });
    const doc = main.on(host);
    const save = (name: string, html: string) =>
      doc.post('/_/save', html, {
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/${name}` },
      });
    const page = (n: number, kb: number) =>
      `<!DOCTYPE html><html><body><p>${n}</p><pre>${randomBytes(kb * 768).toString('base64')}</pre></body></html>`;
    const saved = new Map<string, string>();
    for (const name of names) {
      const html = page(0, 4);
      assert.equal((await save(name, html)).status, 200);
      saved.set(name, html);
    }
    const db = k.services.database.db;
    /** The WAL emptied to zero bytes, then the disk filled: the next COMMIT has to grow the WAL, and cannot. */
    const noRoom = async () => {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
      return fillUp(fullDir);
    };
    const expect507 = (r: Awaited<ReturnType<typeof save>>, what: string) => {
      assert.equal(r.status, 507, `${what}: ${r.status} ${r.text}`);
      assert.equal(r.json.code, 'insufficient-storage', what);
    };

    for (let round = 0; round < 3; round++) {
      // A lone small save: its statements fit in SQLite's page cache, so the disk is first needed by its COMMIT.
      let filler = await noRoom();
      expect507(await save(names[0], page(round + 1, 4)), 'a lone save whose COMMIT cannot grow the WAL');
      rmSync(filler);

      // A burst that shares one group commit: every write of the group meets the COMMIT's failure.
      filler = await noRoom();
      const answers = await Promise.all(names.map((name, i) => save(name, page(round * 100 + i, 4))));
      for (const [i, a] of answers.entries()) expect507(a, `save ${i} of a group whose COMMIT fails`);
      rmSync(filler);

      // A page cache smaller than a save (SQLite's is 16 MB, three documents; a busy process may have less):
      // pages spill to the WAL during the first write's own statements, which meet the full disk before any
      // COMMIT. Several at once: each is the first write of a group of its own.
      await sql`PRAGMA cache_size = 64`.execute(db);
      filler = await noRoom();
      const big = await Promise.all([1, 2, 3].map((i) => save(names[i], page(round * 10 + i, 1024))));
      for (const [i, a] of big.entries()) expect507(a, `first write ${i} that spills to a full disk`);
      rmSync(filler);
      await sql`PRAGMA cache_size = -16000`.execute(db);
    }

    // Other writes have transactions of their own (here: new documents), waiting for SQLite's one writer while a
    // group holds it. A COMMIT that fails hands the writer over only once its transaction is rolled back: the
    // next transaction must not be the one rolled back, nor the rollback wait for it and then find nothing to
    // roll back (500, `cannot rollback - no transaction is active`).
    for (let round = 0; round < 3; round++) {
      const filler = await noRoom();
      const answers = await Promise.all(
        names.flatMap((name, i) => [
          save(name, page(round * 100 + i, 4)),
          main.post('/_/dashboard/nodes', { type: 'site', name: `new-${round}-${i}.html`, html: '<html></html>' }),
        ]),
      );
      for (const [i, a] of answers.entries())
        expect507(a, `${i % 2 ? 'new document' : 'save'} ${i >> 1} beside other transactions`);
      rmSync(filler);
    }

    // Nothing half-written: every document is what it was last acknowledged as, and the file is intact.
    for (const name of names) assert.equal((await k.client(host).get(`/${name}`)).text, saved.get(name), name);
    const check = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(db);
    assert.deepEqual(
      check.rows.map((r) => r.integrity_check),
      ['ok'],
    );
    // Room again: saves go through without a restart.
    const html = page(999, 4);
    assert.equal((await save(names[0], html)).status, 200);
    assert.equal((await k.client(host).get(`/${names[0]}`)).text, html);
  } finally {
    await k.stop().catch(() => {});
  }
});
