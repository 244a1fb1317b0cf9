// The three blob stores behind one interface, each against the real thing: files in a temporary
// folder, the machine's PostgreSQL (a fresh database), and an S3-protocol server (s3rver) on loopback.
// Then Kiln itself on S3: uploads stored there, served with Range and the same ETag; the sweep; the
// migration command, with reads served throughout.
// kiln-test: once
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { FilesystemBlobStore } from '../src/blobs/filesystem.ts';
import { PostgresBlobStore, CHUNK_BYTES } from '../src/blobs/postgres.ts';
import { S3BlobStore } from '../src/blobs/s3.ts';
import { FallbackBlobStore } from '../src/blobs/fallback.ts';
import { sweepBlobs } from '../src/blobs/sweep.ts';
import type { BlobStore } from '../src/blobs/store.ts';
import { sha256 } from '../src/core/checksum.ts';
import { loadConfig } from '../src/config.ts';
import { freshPostgres, startKiln, type TestKiln } from './support/kiln.ts';
import { startS3, type TestS3 } from './support/s3.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { kilnCmd } from './support/sync-client.ts';
import { kilnRun } from './support/child.ts';
import { Client } from './support/client.ts';
import { startServer } from '../src/server.ts';

let s3: TestS3;
let tmp: string;
let pgdb: Awaited<ReturnType<typeof freshPostgres>>;
const stores: Record<string, BlobStore> = {};

before(async () => {
  s3 = await startS3();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kiln-blobs-'));
  pgdb = await freshPostgres();
  stores.filesystem = new FilesystemBlobStore(tmp);
  stores.postgres = await PostgresBlobStore.open(pgdb.url);
  const c = loadConfig({ ...s3.env });
  if (c.blobs.store !== 's3') throw new Error('s3 config');
  stores.s3 = await S3BlobStore.open(c.blobs);
});
after(async () => {
  await Promise.all(Object.values(stores).map((s) => s.close()));
  await pgdb?.drop();
  await s3?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

async function read(stream: Readable | null): Promise<Buffer> {
  assert.ok(stream, 'a stream');
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

for (const kind of ['filesystem', 'postgres', 's3']) {
  test(`${kind}: put, get, stream (whole and ranges across chunks), has, list, delete`, async () => {
    const store = stores[kind];
    const bytes = randomBytes(CHUNK_BYTES * 2 + 12345);
    const name = await store.put(bytes);
    assert.equal(name, sha256(bytes));
    assert.equal(await store.put(bytes), name, 'the same bytes, the same name');
    assert.deepEqual(await store.get(name), bytes);
    assert.deepEqual(await read(await store.stream(name)), bytes);
    for (const [start, end] of [
      [0, 0],
      [CHUNK_BYTES - 10, CHUNK_BYTES + 10],
      [100, bytes.length - 1],
      [bytes.length - 1, bytes.length - 1],
    ]) {
      assert.deepEqual(
        await read(await store.stream(name, { start, end })),
        bytes.subarray(start, end + 1),
        `${start}-${end}`,
      );
    }
    assert.equal(await store.has(name), true);
    assert.ok((await store.storedAt(name)) instanceof Date);
    const empty = await store.put(Buffer.alloc(0));
    assert.deepEqual(await store.get(empty), Buffer.alloc(0));
    assert.deepEqual(await read(await store.stream(empty)), Buffer.alloc(0));
    const names: string[] = [];
    for await (const b of store.list()) names.push(b.name);
    assert.ok(names.includes(name) && names.includes(empty), names.join());
    await store.delete(name);
    assert.equal(await store.has(name), false);
    assert.equal(await store.get(name), null);
    assert.equal(await store.stream(name), null);
    assert.equal(await store.storedAt(name), null);
    assert.equal(await store.reachable(), true);
  });
}

test('a fallback store reads what its primary lacks from the older store; writes go to the primary', async () => {
  const older = stores.filesystem;
  const old = randomBytes(1000);
  const oldName = await older.put(old);
  const both = new FallbackBlobStore(stores.s3, older);
  assert.deepEqual(await both.get(oldName), old);
  assert.deepEqual(await read(await both.stream(oldName, { start: 10, end: 19 })), old.subarray(10, 20));
  const fresh = randomBytes(500);
  const freshName = await both.put(fresh);
  assert.equal(await stores.s3.has(freshName), true);
  assert.equal(await older.has(freshName), false);
});

/** Uploads a file through the browser's upload route and answers its path and ETag. */
async function uploadTo(kiln: TestKiln, bytes: Buffer, name = 'photo.bin') {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: `page-${me.username}.html`,
    html: '<html><body>p</body></html>',
  });
  const host = kiln.hostOf(me.username);
  const res = await main
    .on(host)
    .post(
      '/_/upload',
      { fileName: name, fileBody: bytes.toString('base64') },
      { headers: { 'page-url': `http://${host}/page-${me.username}.html` } },
    );
  assert.equal(res.status, 200, res.text);
  return { me, main, host, url: new URL(res.json.urls[0]).pathname };
}

test('Kiln on S3: an upload is stored there and served whole, by range (206) and not beyond (416), with one ETag', async () => {
  const kiln = await startKiln({ env: s3.env });
  try {
    const bytes = randomBytes(300_000);
    const { host, url } = await uploadTo(kiln, bytes);
    assert.equal(await stores.s3.has(sha256(bytes)), true, 'the bytes are in the bucket');
    const visitor = kiln.client(host);
    const whole = await visitor.get(url);
    assert.equal(whole.status, 200);
    assert.deepEqual(whole.body, bytes);
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    const part = await visitor.get(url, { headers: { range: 'bytes=1000-1999' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 1000-1999/${bytes.length}`);
    assert.deepEqual(part.body, bytes.subarray(1000, 2000));
    assert.equal(part.headers.etag, whole.headers.etag);
    const tail = await visitor.get(url, { headers: { range: 'bytes=-10' } });
    assert.deepEqual(tail.body, bytes.subarray(bytes.length - 10));
    const beyond = await visitor.get(url, { headers: { range: `bytes=${bytes.length}-` } });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers['content-range'], `bytes */${bytes.length}`);
    const stale = await visitor.get(url, { headers: { range: 'bytes=0-9', 'if-range': '"0000000000000000"' } });
    assert.equal(stale.status, 200, 'If-Range with another ETag: the whole file');
    const ready = await kiln.client().get('/_/ready');
    assert.equal(ready.json.checks.blobs, 'ok');
  } finally {
    await kiln.stop();
  }
});

test('the sweep deletes blobs no file names (after the grace period), never one a live or trashed file names', async () => {
  const kiln = await startKiln();
  try {
    const kept = randomBytes(100);
    const trashed = randomBytes(100);
    const gone = randomBytes(100);
    const a = await uploadTo(kiln, kept, 'kept.bin');
    const b = await uploadTo(kiln, trashed, 'trashed.bin');
    const c = await uploadTo(kiln, gone, 'gone.bin');
    const nodes = async (u: typeof a) =>
      (await u.main.get('/_/dashboard/nodes', { headers: { accept: 'application/json' } })).json.nodes as Array<{
        id: number;
        name: string;
      }>;
    const idOf = async (u: typeof a, name: string) => (await nodes(u)).find((n) => n.name === name)!.id;
    const json = { headers: { accept: 'application/json' } };
    await b.main.post(`/_/dashboard/nodes/${await idOf(b, 'trashed.bin')}/delete`, {}, json);
    const cId = await idOf(c, 'gone.bin');
    await c.main.post(`/_/dashboard/nodes/${cId}/delete`, {}, json);
    const purged = await c.main.post(`/_/dashboard/trash/${cId}/purge`, {}, json);
    assert.equal(purged.status, 200, purged.text);
    const stray = await kiln.services.blobs.put(randomBytes(64)); // written, never named

    // Within the grace period nothing goes.
    assert.equal((await sweepBlobs(kiln.services)).deleted, 0);
    const r = await sweepBlobs(kiln.services, 0);
    assert.equal(r.deleted, 2, 'the purged file’s blob and the stray one');
    assert.equal(await kiln.services.blobs.has(sha256(kept)), true);
    assert.equal(await kiln.services.blobs.has(sha256(trashed)), true, 'the trash can still restore it');
    assert.equal(await kiln.services.blobs.has(sha256(gone)), false);
    assert.equal(await kiln.services.blobs.has(stray), false);
    assert.deepEqual((await kiln.client(a.host).get(a.url)).body, kept);
  } finally {
    await kiln.stop();
  }
});

test('kiln blobs migrate --to s3 copies every blob while the server serves; run again, it copies only what is new', async () => {
  const kiln = await startKiln();
  try {
    const first = randomBytes(2000);
    const up = await uploadTo(kiln, first, 'one.bin');
    // The target's variables, as for BLOB_STORE=s3; the configured store (the source) stays the filesystem.
    const { BLOB_STORE: _, ...s3vars } = s3.env;
    const run = await kilnCmd(kiln, ['blobs', 'migrate', '--to', 's3'], s3vars);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /From filesystem to s3: 1 copied/);
    assert.deepEqual(await stores.s3.get(sha256(first)), first);
    assert.deepEqual((await kiln.client(up.host).get(up.url)).body, first, 'reads went on');
    await uploadTo(kiln, randomBytes(500), 'two.bin');
    const again = await kilnCmd(kiln, ['blobs', 'migrate', '--to', 's3'], s3vars);
    assert.match(again.stdout, /1 copied, 1 already there/);
  } finally {
    await kiln.stop();
  }
});

test('kiln backup to s3:// while serving, and kiln restore from it into an empty instance', async () => {
  const kiln = await startKiln();
  const emptyDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-restore-s3-'));
  const emptyPg = kiln.config.databaseUrl ? await freshPostgres() : null;
  try {
    const bytes = randomBytes(3000);
    const up = await uploadTo(kiln, bytes, 'kept.bin');
    const { BLOB_STORE: _, ...s3vars } = s3.env;
    const backup = await kilnCmd(kiln, ['backup', `s3://${s3.bucket}/backups`], s3vars);
    assert.equal(backup.code, 0, backup.stderr);
    const location = /Backed up to (s3:\/\/\S+):/.exec(backup.stdout)?.[1];
    assert.ok(location, backup.stdout);
    const target = {
      ...s3vars,
      DATA_DIR: emptyDir,
      ...(emptyPg ? { DATABASE_URL: emptyPg.url } : {}),
    };
    const restored = await kilnRun(target, ['restore', location]);
    assert.equal(restored.code, 0, restored.out);
    const back = await startServer(loadConfig({ ...target, PORT: '0', HOST: '127.0.0.1' }));
    try {
      const res = await new Client(Number(new URL(back.url).port), up.host).get(up.url);
      assert.deepEqual(res.body, bytes);
    } finally {
      await back.close();
    }
  } finally {
    await kiln.stop();
    await emptyPg?.drop();
    rmSync(emptyDir, { recursive: true, force: true });
  }
});
