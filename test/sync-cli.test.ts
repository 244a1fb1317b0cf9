// `kiln sync`, `push`, `pull`, `login` (src/sync-cli) as a user runs them: the real command against a
// real Kiln, on real folders. Both sides are checked through what a user sees: the files on disk, and
// the account through the sync API.
// kiln-test: once
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, relPathOf, checksum, type SyncApi } from './support/sync-client.ts';
import { runCli, startCli, readTree, writeFile, tempDir, page } from './support/sync-cli.ts';
import { until } from './support/wait.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { actingAs } from './support/people.ts';

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
  // A copy (the same bytes under a new name, the original still there) is a new file, not a move.
  const copy = `${uniq('copy')}.html`;
  fs.copyFileSync(path.join(dir, both), path.join(dir, copy));
  const copied = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(copied.code, 0, copied.stderr);
  assert.deepEqual(
    copied.events.filter((e) => ['upload', 'move', 'delete'].includes(e.event)).map((e) => `${e.event} ${e.path}`),
    [`upload ${copy}`],
  );
  assert.deepEqual(sorted(localSums(dir)), sorted(await remoteSums(api)));
});

test('watching: edits on both sides, renames, moves and deletes both ways; SIGTERM saves and exits 0', async () => {
  const { api, key } = await keyHolder(kiln);
  const dir = tempDir();
  const a = `${uniq('a')}.html`;
  const b = `${uniq('b')}.html`;
  const c = `${uniq('c')}.html`;
  writeFile(dir, a, page('a1'));
  writeFile(dir, b, page('b1'));
  writeFile(dir, c, page('c1'));
  writeFile(dir, 'data.bin', Buffer.from('bytes-1'));
  const cli = startCli(['sync', dir, '--url', url, '--json'], key);
  try {
    await cli.waitFor((e) => e.event === 'watching', 'the watch to start');
    const byName = async (rel: string) => (await api.list()).nodes.find((n) => relPathOf(n) === rel);
    await until(async () => (await remoteSums(api)).size === 4, { timeout: 90_000, what: 'the first sync' });

    // A local edit reaches Kiln.
    writeFile(dir, a, page('a2'));
    await until(async () => (await remoteSums(api)).get(a) === checksum(page('a2')), {
      timeout: 90_000,
      what: 'the local edit on Kiln',
    });

    // A remote edit reaches the folder.
    const nb = (await byName(b))!;
    await api.upload(nb.id, page('b2'), { ifMatch: nb.checksum! });
    await until(() => fs.readFileSync(path.join(dir, b), 'utf8') === page('b2'), {
      timeout: 90_000,
      what: 'the remote edit on disk',
    });

    // A local rename and move is sent as a move: the same node (its versions stay with it).
    const nc = (await byName(c))!;
    const moved = `sub/${uniq('c-moved')}.html`;
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.renameSync(path.join(dir, c), path.join(dir, ...moved.split('/')));
    await until(async () => (await byName(moved))?.id === nc.id, {
      timeout: 90_000,
      what: 'the move on Kiln, same node',
    }).catch(async (err) => {
      throw new Error(
        `${err.message}\nevents:\n${cli.stdout()}\n${cli.stderr()}\nnodes: ${JSON.stringify((await api.list()).nodes.map((n) => [n.id, relPathOf(n)]))}`,
      );
    });
    assert.equal(await byName(c), undefined);

    // A remote rename comes down as a rename.
    const na = (await byName(a))!;
    const renamed = `${uniq('a-renamed')}.html`;
    await api.rename(na.id, renamed, na.structureVersion);
    await until(() => fs.existsSync(path.join(dir, renamed)) && !fs.existsSync(path.join(dir, a)), {
      timeout: 90_000,
      what: 'the remote rename on disk',
    });
    assert.equal(fs.readFileSync(path.join(dir, renamed), 'utf8'), page('a2'));

    // A local delete goes to Kiln's trash; a remote delete to .kiln/trash/.
    fs.rmSync(path.join(dir, 'data.bin'));
    await until(async () => !(await remoteSums(api)).has('data.bin'), {
      timeout: 90_000,
      what: 'the local delete on Kiln',
    });
    const trashed = await kiln.services.database.db
      .selectFrom('nodes')
      .select(['name', 'trashed_at'])
      .where('name', '=', 'data.bin')
      .where('owner_id', '=', (await api.status()).accountId)
      .executeTakeFirst();
    assert.ok(trashed?.trashed_at, 'in Kiln’s trash, not erased');
    const nb2 = (await byName(b))!;
    await api.delete(nb2.id, { expectedVersion: nb2.structureVersion });
    await until(() => !fs.existsSync(path.join(dir, b)), { timeout: 90_000, what: 'the remote delete on disk' });
    const trashDir = path.join(dir, '.kiln/trash');
    assert.ok(
      [...readTree(trashDir, [])].some(([rel, bytes]) => rel.endsWith(b) && bytes.toString() === page('b2')),
      'the deleted file is in .kiln/trash',
    );

    // The other events of the run are one JSON object per line, each with a time.
    assert.ok(cli.events().every((e) => typeof e.event === 'string' && typeof e.time === 'string'));
  } finally {
    const code = await cli.stop('SIGTERM');
    assert.equal(code, 0, cli.stderr());
  }
  assert.deepEqual(sorted(localSums(dir)), sorted(await remoteSums(api)));
});

test('a file changed on both sides since the last sync is never overwritten: both copies are kept, and the run says so', async () => {
  const { api, key } = await keyHolder(kiln);
  const dir = tempDir();
  const name = `${uniq('both')}.html`;
  writeFile(dir, name, page('base'));
  assert.equal((await runCli(['sync', dir, '--url', url, '--once'], key)).code, 0);
  const node = (await api.list()).nodes.find((n) => n.name === name)!;
  await api.upload(node.id, page('theirs'), { ifMatch: node.checksum! });
  writeFile(dir, name, page('mine'));
  const r = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(r.code, 0, r.stderr);
  const conflict = r.events.find((e) => e.event === 'conflict');
  assert.ok(conflict, r.stdout);
  assert.equal(conflict.path, name);
  assert.match(conflict.kept, /^.+ \(conflict [a-z0-9_-]+ \d{4}-\d{2}-\d{2} \d{2}-\d{2}\)\.html$/);
  const local = readTree(dir);
  assert.equal(local.get(name)?.toString(), page('theirs'));
  assert.equal(local.get(conflict.kept)?.toString(), page('mine'));
  // Both copies are on Kiln too, and the two sides agree.
  const remote = await remoteTree(api);
  assert.equal(remote.get(name)?.toString(), page('theirs'));
  assert.equal(remote.get(conflict.kept)?.toString(), page('mine'));
  assert.deepEqual(sorted(localSums(dir)), sorted(await remoteSums(api)));
  // People are told too, in words.
  const again = (await api.list()).nodes.find((n) => n.name === name)!;
  await api.upload(again.id, page('theirs 2'), { ifMatch: again.checksum! });
  writeFile(dir, name, page('mine 2'));
  const human = await runCli(['sync', dir, '--once'], key);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`conflict: ${name} changed on both sides; .* yours is kept as .*\\(conflict `));
  assert.match(human.stderr, /in step: \d+ changes, 1 conflict \(both copies kept\)/);
});

test('a team folder: --team syncs the team’s files through its base, with protocol 2 headers', async () => {
  const owner = await keyHolder(kiln);
  const editor = await keyHolder(kiln, { plan: 'free' });
  const team = await createTeam(kiln.services, {
    username: `t${uniq('team')}`,
    ownerId: owner.person.id,
    plan: 'personal',
  });
  await setMember(await actingAs(kiln.services, owner.person.id), {
    teamId: team.id,
    username: editor.person.username,
    role: 'editor',
  });
  const base = `/_/team/${team.username}/sync`;
  const { SyncApi: Api } = await import('./support/sync-client.ts');
  const teamApi = new Api({ ...owner.api.conn, protocol: 2, accountId: team.id, syncBase: base });
  const shared = `${uniq('shared')}.html`;
  await teamApi.create({ type: 'site', name: shared, parentId: 0, content: page('team page') });
  const dir = tempDir();
  writeFile(dir, `${uniq('from-editor')}.html`, page('editor page'));
  const r = await runCli(['sync', dir, '--url', url, '--team', team.username, '--once', '--json'], editor.key);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(fs.readFileSync(path.join(dir, shared), 'utf8'), page('team page'));
  assert.deepEqual(sorted(localSums(dir)), sorted(await remoteSums(teamApi)));
  // The editor's own account got nothing.
  assert.equal((await editor.api.list()).nodes.length, 0);
  // A team edit (team writes are always conditional) travels both ways.
  writeFile(dir, shared, page('team page v2'));
  const again = await runCli(['sync', dir, '--once', '--json'], editor.key);
  assert.equal(again.code, 0, again.stderr);
  assert.equal((await remoteTree(teamApi)).get(shared)?.toString(), page('team page v2'));
  // A team the key cannot sync is refused with the server's words.
  const stranger = await keyHolder(kiln);
  const refused = await runCli(['sync', tempDir(), '--url', url, '--team', team.username, '--once'], stranger.key);
  assert.equal(refused.code, 5);
  assert.match(refused.stderr, /team/i);
});

test('refusals (name rules, sizes) are answered with the server’s message and the file is skipped, not retried', async () => {
  const { api, key } = await keyHolder(kiln);
  const dir = tempDir();
  const ok = `${uniq('fine')}.html`;
  writeFile(dir, ok, page('fine'));
  writeFile(dir, 'bad@name.html', page('bad'));
  const r = await runCli(['sync', dir, '--url', url, '--once', '--json'], key);
  assert.equal(r.code, 3, r.stderr);
  const skip = r.events.find((e) => e.event === 'skip');
  assert.equal(skip.path, 'bad@name.html');
  assert.equal(skip.status, 400);
  assert.match(skip.msg, /special character/);
  assert.deepEqual([...(await remoteSums(api)).keys()], [ok]);
  // The next run does not send it again (until it changes).
  const again = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(again.code, 0, again.stderr);
  assert.ok(!again.events.some((e) => e.event === 'skip' || e.event === 'upload'));
  writeFile(dir, 'bad@name.html', page('bad, edited'));
  const edited = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(edited.code, 3);
  assert.equal(edited.events.find((e) => e.event === 'skip')?.path, 'bad@name.html');
});

test('push and pull: one way, --dry-run changes nothing, --prune goes to a trash on either side', async () => {
  const { api, key } = await keyHolder(kiln);
  const keep = `${uniq('keep')}.html`;
  const extra = `${uniq('extra')}.html`;
  await api.create({ type: 'site', name: extra, parentId: 0, content: page('only on kiln') });
  const dir = tempDir();
  writeFile(dir, keep, page('deploy me'));

  const dry = await runCli(['push', dir, '--url', url, '--prune', '--dry-run', '--json'], key);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(
    dry.events
      .filter((e) => e.event === 'plan')
      .map((e) => `${e.op} ${e.rel}`)
      .sort(),
    [`remote-delete ${extra}`, `upload ${keep}`],
  );
  assert.deepEqual([...(await remoteSums(api)).keys()], [extra], 'a dry run changes nothing');
  assert.ok(!fs.existsSync(path.join(dir, '.kiln/state.json')));

  const push = await runCli(['push', dir, '--url', url, '--json'], key);
  assert.equal(push.code, 0, push.stderr);
  assert.deepEqual([...(await remoteSums(api)).keys()].sort(), [extra, keep].sort(), 'without --prune nothing goes');
  assert.ok(!fs.existsSync(path.join(dir, extra)), 'push never writes the folder');

  const pruned = await runCli(['push', dir, '--prune', '--json'], key);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.deepEqual([...(await remoteSums(api)).keys()], [keep]);

  // Pull into another folder, then prune a local extra into .kiln/trash.
  const other = tempDir();
  writeFile(other, 'local-only.txt', 'mine');
  const pull = await runCli(['pull', other, '--url', url, '--json'], key);
  assert.equal(pull.code, 0, pull.stderr);
  assert.equal(fs.readFileSync(path.join(other, keep), 'utf8'), page('deploy me'));
  assert.ok(fs.existsSync(path.join(other, 'local-only.txt')));
  assert.ok(!(await remoteSums(api)).has('local-only.txt'), 'pull never writes the account');
  const prunedPull = await runCli(['pull', other, '--prune', '--json'], key);
  assert.equal(prunedPull.code, 0, prunedPull.stderr);
  assert.ok(!fs.existsSync(path.join(other, 'local-only.txt')));
  assert.equal(
    [...readTree(path.join(other, '.kiln/trash'), [])].find(([rel]) => rel.endsWith('local-only.txt'))?.[1].toString(),
    'mine',
  );
});

test('.kilnignore (gitignore syntax) and the default ignores; symlinks are not followed out of the folder', async () => {
  const { api, key } = await keyHolder(kiln);
  const dir = tempDir();
  const outside = tempDir();
  writeFile(outside, 'secret.txt', 'do not upload');
  const kept = `${uniq('kept')}.html`;
  writeFile(dir, kept, page('kept'));
  writeFile(dir, '.kilnignore', '# drafts stay here\ndrafts/\n*.log\n');
  writeFile(dir, 'drafts/wip.html', page('wip'));
  writeFile(dir, 'debug.log', 'log');
  writeFile(dir, '.git/HEAD', 'ref: refs/heads/main');
  writeFile(dir, 'node_modules/x/index.js', 'x');
  writeFile(dir, `.${kept}.swp`, 'swap');
  fs.symlinkSync(outside, path.join(dir, 'linked'));
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'secret.txt'));
  // What the folder ignores is left alone on the account too: not fetched, not deleted.
  const folder = await api.create({ type: 'folder', name: 'drafts', parentId: 0 });
  const remoteDraft = `${uniq('remote-draft')}.html`;
  await api.create({ type: 'site', name: remoteDraft, parentId: folder.id, content: page('draft on kiln') });
  const r = await runCli(['sync', dir, '--url', url, '--once', '--json'], key);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([...(await remoteSums(api)).keys()].sort(), [`drafts/${remoteDraft}`, kept].sort());
  assert.ok(!fs.existsSync(path.join(dir, 'drafts', remoteDraft)));
  assert.equal(fs.readFileSync(path.join(dir, 'drafts/wip.html'), 'utf8'), page('wip'));
  const again = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(
    again.events.filter((e) => ['upload', 'download', 'delete'].includes(e.event)),
    [],
  );
});

test('login stores the key 0600 in the config directory; without a key the command says how to get one', async () => {
  const { api, key } = await keyHolder(kiln);
  const config = tempDir();
  const none = await runCli(['sync', tempDir(), '--url', url, '--once'], null, { KILN_CONFIG_DIR: config });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /KILN_KEY|kiln login/);
  const bad = await runCli(['login', '--url', url], null, { KILN_CONFIG_DIR: config }, { input: 'hcsk_nope\n' });
  assert.equal(bad.code, 5, bad.stderr);
  const login = await runCli(['login', '--url', url], null, { KILN_CONFIG_DIR: config }, { input: `${key}\n` });
  assert.equal(login.code, 0, login.stderr);
  const file = path.join(config, 'credentials.json');
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.ok(!login.stderr.includes(key), 'the key is never printed');
  const dir = tempDir();
  const name = `${uniq('after-login')}.html`;
  writeFile(dir, name, page('x'));
  const r = await runCli(['sync', dir, '--url', url, '--once'], null, { KILN_CONFIG_DIR: config });
  assert.equal(r.code, 0, r.stderr);
  assert.ok((await remoteSums(api)).has(name));
});

test('one run per folder: a second run while one is watching is refused; SIGINT lets the first stop with 0', async () => {
  const { key } = await keyHolder(kiln);
  const dir = tempDir();
  writeFile(dir, `${uniq('one')}.html`, page('one'));
  const cli = startCli(['sync', dir, '--url', url, '--json'], key);
  try {
    await cli.waitFor((e) => e.event === 'watching', 'the watch to start');
    const second = await runCli(['sync', dir, '--once'], key);
    assert.equal(second.code, 2);
    assert.match(second.stderr, /another kiln run \(pid \d+\) is syncing/);
  } finally {
    assert.equal(await cli.stop('SIGINT'), 0, cli.stderr());
  }
  assert.ok(!fs.existsSync(path.join(dir, '.kiln/lock')), 'the lock goes with the run');
  const after = await runCli(['sync', dir, '--once'], key);
  assert.equal(after.code, 0, after.stderr);
});

test('a folder renamed on either side: its files follow as moves of the same nodes, the old folder goes', async () => {
  const { api, key } = await keyHolder(kiln);
  const dir = tempDir();
  const p1 = `${uniq('f1')}.html`;
  const p2 = `${uniq('f2')}.html`;
  writeFile(dir, `docs/${p1}`, page('one'));
  writeFile(dir, `docs/${p2}`, page('two'));
  assert.equal((await runCli(['sync', dir, '--url', url, '--once'], key)).code, 0);
  const ids = async () => new Map((await api.list()).nodes.map((n) => [relPathOf(n), n.id]));
  const before = await ids();

  fs.renameSync(path.join(dir, 'docs'), path.join(dir, 'guides'));
  const local = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(local.code, 0, local.stderr);
  const mid = await ids();
  assert.equal(mid.get(`guides/${p1}`), before.get(`docs/${p1}`), 'the same node, moved');
  assert.equal(mid.get(`guides/${p2}`), before.get(`docs/${p2}`));
  assert.ok(!mid.has('docs'), 'the old folder is gone from the account');

  const folder = (await api.list()).nodes.find((n) => n.type === 'folder' && n.name === 'guides')!;
  await api.rename(folder.id, 'manual', folder.structureVersion);
  const remote = await runCli(['sync', dir, '--once', '--json'], key);
  assert.equal(remote.code, 0, remote.stderr);
  assert.deepEqual([...readTree(dir).keys()].sort(), [`manual/${p1}`, `manual/${p2}`].sort());
  assert.ok(!fs.existsSync(path.join(dir, 'guides')), 'the old folder is gone from disk');
  assert.equal((await ids()).get(`manual/${p1}`), before.get(`docs/${p1}`));
  assert.deepEqual(sorted(localSums(dir)), sorted(await remoteSums(api)));
});

test('a terminal gets a progress bar (files, bytes) during the first sync', {
  skip: !fs.existsSync('/usr/bin/script') && 'no script(1) for a terminal',
}, async () => {
  const { key } = await keyHolder(kiln);
  const dir = tempDir();
  for (let i = 0; i < 30; i++) writeFile(dir, `${uniq('bar')}.html`, page(`bar ${i}`));
  const { spawn } = await import('node:child_process');
  const { REPO } = await import('./support/child.ts');
  // script(1) runs the command on a pseudo-terminal, as a person would (asynchronously: the Kiln it
  // talks to runs in this process).
  const cmd = `${process.execPath} ${path.join(REPO, 'bin/kiln.js')} sync ${dir} --url ${url} --once`;
  const child = spawn('/usr/bin/script', ['-qec', cmd, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', KILN_KEY: key, KILN_CONFIG_DIR: tempDir() },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const r = { status, stdout, stderr };
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /\[#+-*\] \d+\/30 files, [\d.]+ (B|KB|MB)\/[\d.]+ (B|KB|MB)/);
  assert.match(r.stdout, /\[#{30}\] 30\/30 files/);
});
