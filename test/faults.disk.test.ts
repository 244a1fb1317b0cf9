// A full disk under the blob store (a 1 MB tmpfs mounted on DATA_DIR/blobs): an upload that does not
// fit answers 507 insufficient-storage, leaves no temporary file and no node pointing at a missing
// blob, and uploads work again without a restart once there is room. Needs root to mount a tmpfs
// (CI runs as root); skipped with the reason otherwise.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
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

let kiln: TestKiln;
before(async () => {
  if (!skip) kiln = await startKiln({ env: { DATA_DIR: dataDir } });
});
after(async () => {
  if (kiln) await kiln.stop().catch(() => {});
  if (mounted) execFileSync('umount', ['-l', blobs]);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every file under the blob store, temporary ones included. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => e.name);
}

test('a full disk: 507, nothing half-written, and uploads work again once there is room', { skip }, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.hostOf(me.username);
  await createNode(kiln.services, me.id, { ownerId: me.id, parentId: 0, type: 'site', name: 'page.html', html: '<html></html>' });
  const doc = main.on(host);
  const upload = (name: string, bytes: Buffer) =>
    doc.post('/_/upload', { fileName: name, fileBody: bytes.toString('base64') }, { headers: { 'page-url': `http://${host}/page.html` } });

  // Most of the disk taken by something else.
  const filler = path.join(blobs, 'filler');
  writeFileSync(filler, Buffer.alloc(900 * 1024, 1));
  const big = await upload('big.bin', Buffer.alloc(400 * 1024, 7));
  assert.equal(big.status, 507, big.text);
  assert.equal(big.json.code, 'insufficient-storage');
  assert.deepEqual(files(blobs).filter((f) => f.startsWith('.tmp-')), [], 'no temporary file left');
  const rows = await kiln.services.database.db.selectFrom('nodes').select('name').where('owner_id', '=', me.id).where('type', '=', 'upload').execute();
  assert.deepEqual(rows, [], 'no node for the upload that failed');

  // Room again: the same upload goes through, without a restart.
  rmSync(filler);
  const again = await upload('big.bin', Buffer.alloc(400 * 1024, 7));
  assert.equal(again.status, 200, again.text);
  assert.equal((await kiln.client(host).get('/big.bin')).body.length, 400 * 1024);
});
