// `kiln sync`, `push`, `pull`, `login` (src/sync-cli) as a user runs them: the real command against a
// real Kiln, on real folders. Both sides are checked through what a user sees: the files on disk, and
// the account through the sync API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, relPathOf, checksum, type SyncApi } from './support/sync-client.ts';
import { runCli, startCli, readTree, writeFile, tempDir, page } from './support/sync-cli.ts';
import { until } from './support/wait.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';

let kiln: TestKiln;
let url: string;
before(async () => {
  kiln = await startKiln();
  url = `http://127.0.0.1:${new URL(kiln.url).port}`;
});
after(() => kiln.stop());

/** The account's files as a map of relative path → bytes (through the sync API). */
async function remoteTree(api: SyncApi): Promise<Map<string, Buffer>> {
  const { nodes } = await api.list();
  const out = new Map<string, Buffer>();
  for (const n of nodes) {
    if (n.type === 'folder') continue;
    const d = await api.download(n.id);
    out.set(relPathOf(n), Buffer.isBuffer(d.content) ? d.content : Buffer.from(d.content, 'utf8'));
  }
  return out;
}

async function remoteSums(api: SyncApi): Promise<Map<string, string>> {
  const { nodes } = await api.list();
  return new Map(nodes.filter((n) => n.type !== 'folder').map((n) => [relPathOf(n), n.checksum!]));
}

function localSums(dir: string): Map<string, string> {
  return new Map([...readTree(dir)].map(([k, v]) => [k, checksum(v)]));
}

const sorted = (m: Map<string, string>) => [...m].sort(([a], [b]) => a.localeCompare(b));

/** A unique name per test (document names are unique across the Kiln). */
let seq = 0;
const uniq = (stem: string) => `${stem}-${process.pid}-${++seq}`;

test('first sync reconciles both sides by checksum: downloads what is missing, uploads what is new (unicode names, binary uploads)', async () => {
  const { api, key } = await keyHolder(kiln);
  const remoteOnly = `${uniq('remote')}.html`;
  const both = `${uniq('both')}.html`;
  await api.create({ type: 'site', name: remoteOnly, parentId: 0, content: page('from kiln') });
  await api.create({ type: 'site', name: both, parentId: 0, content: page('same') });
  const dir = tempDir();
  const localPage = `café/${uniq('naïve-日本')}.html`;
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 255, 254]);
  writeFile(dir, localPage, page('from disk'));
  writeFile(dir, 'images/résumé.png', png);
  writeFile(dir, both, page('same'));
  const r = await runCli(['sync', dir, '--url', url, '--once', '--json'], key);
  assert.equal(r.code, 0, r.stderr);
  const uploads = r.events.filter((e) => e.event === 'upload').map((e) => e.path);
  const downloads = r.events.filter((e) => e.event === 'download').map((e) => e.path);
  assert.deepEqual(uploads.sort(), [localPage, 'images/résumé.png'].sort());
  assert.deepEqual(downloads, [remoteOnly]);
  const remote = await remoteTree(api);
  assert.deepEqual(remote.get('images/résumé.png'), png);
  assert.equal(remote.get(localPage)?.toString(), page('from disk'));
  assert.equal(fs.readFileSync(path.join(dir, remoteOnly), 'utf8'), page('from kiln'));
  assert.deepEqual(sorted(localSums(dir)), sorted(await remoteSums(api)));
  // The state file is there, and a second run has nothing to do.
  const state = JSON.parse(fs.readFileSync(path.join(dir, '.kiln/state.json'), 'utf8'));
  assert.equal(state.url, url);
  const again = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(
    again.events.filter((e) => ['upload', 'download', 'move', 'delete', 'conflict'].includes(e.event)),
    [],
  );
});
