// `kiln sync` at size: 1,000 files on the first sync (both ways), a 20 MB upload, and a file over the
// plan's upload size answered with the server's message and skipped.
// kiln-test: once
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, relPathOf, checksum, type SyncApi } from './support/sync-client.ts';
import { runCli, readTree, writeFile, tempDir, page } from './support/sync-cli.ts';

let kiln: TestKiln;
let url: string;
before(async () => {
  kiln = await startKiln();
  url = `http://127.0.0.1:${new URL(kiln.url).port}`;
});
after(() => kiln.stop());

async function remoteSums(api: SyncApi): Promise<Map<string, string>> {
  const { nodes } = await api.list();
  return new Map(nodes.filter((n) => n.type !== 'folder').map((n) => [relPathOf(n), n.checksum!]));
}
const localSums = (dir: string) => new Map([...readTree(dir)].map(([k, v]) => [k, checksum(v)]));
const sorted = (m: Map<string, string>) => [...m].sort(([a], [b]) => a.localeCompare(b));

test('1,000 files on the first sync go up, and come down into an empty folder', { timeout: 600_000 }, async () => {
  const { api, key } = await keyHolder(kiln, { plan: 'maker' });
  const dir = tempDir();
  const tag = process.pid;
  for (let i = 0; i < 1000; i++) writeFile(dir, `f${i % 10}/p${i}-${tag}.html`, page(`page ${i} ${'x'.repeat(1000)}`));
  const up = await runCli(['sync', dir, '--url', url, '--once', '--json'], key);
  assert.equal(up.code, 0, up.stderr.slice(-2000));
  assert.equal(up.events.filter((e) => e.event === 'upload').length, 1000);
  assert.equal((await remoteSums(api)).size, 1000);
  assert.deepEqual(sorted(localSums(dir)), sorted(await remoteSums(api)));
  const done = up.events.find((e) => e.event === 'done');
  assert.ok(done.requests >= 1000, 'the run counts its requests');

  const other = tempDir();
  const down = await runCli(['pull', other, '--url', url, '--json'], key);
  assert.equal(down.code, 0, down.stderr.slice(-2000));
  assert.equal(down.events.filter((e) => e.event === 'download').length, 1000);
  assert.deepEqual(sorted(localSums(other)), sorted(await remoteSums(api)));
});

test('a 20 MB upload syncs both ways; one over the plan’s upload size is skipped with the server’s message', {
  timeout: 300_000,
}, async () => {
  const { api, key } = await keyHolder(kiln, { plan: 'maker' });
  const dir = tempDir();
  const big = randomBytes(20 * 1024 * 1024);
  writeFile(dir, 'media/big.bin', big);
  const r = await runCli(['sync', dir, '--url', url, '--once', '--json'], key);
  assert.equal(r.code, 0, r.stderr);
  const node = (await api.list()).nodes.find((n) => n.name === 'big.bin')!;
  assert.equal(node.checksum, checksum(big));
  const other = tempDir();
  const pulled = await runCli(['pull', other, '--url', url, '--json'], key);
  assert.equal(pulled.code, 0, pulled.stderr);
  assert.ok(fs.readFileSync(path.join(other, 'media/big.bin')).equals(big));

  const personal = await keyHolder(kiln, { plan: 'personal' });
  const small = tempDir();
  writeFile(small, 'too-big.bin', Buffer.alloc(21 * 1024 * 1024, 7));
  const refused = await runCli(['sync', small, '--url', url, '--once', '--json'], personal.key);
  assert.equal(refused.code, 3, refused.stderr);
  const skip = refused.events.find((e) => e.event === 'skip');
  assert.equal(skip.path, 'too-big.bin');
  assert.equal(skip.status, 413);
  assert.match(skip.msg, /MB/);
  assert.equal((await remoteSums(personal.api)).size, 0);
});
