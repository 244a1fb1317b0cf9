// `kiln sync` when things go wrong: a network cut (a TCP proxy between the command and Kiln) and a Kiln
// restart in the middle of a sync, and the command itself killed with SIGKILL at random moments over
// ten rounds. Afterwards both sides hold every acknowledged change exactly once (no conflict copies, no
// duplicates, nothing lost).
// kiln-test: once
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { spawnKiln, freePort, type ChildKiln } from './support/child.ts';
import { storage, freshPostgres, startKiln } from './support/kiln.ts';
import { newPerson } from './support/people.ts';
import { SyncApi, relPathOf, checksum, keyHolder } from './support/sync-client.ts';
import { startTcpProxy } from './support/tcp-proxy.ts';
import { runCli, startCli, readTree, writeFile, tempDir, page } from './support/sync-cli.ts';
import { until } from './support/wait.ts';

async function remoteSums(api: SyncApi): Promise<Map<string, string>> {
  const { nodes } = await api.list();
  return new Map(nodes.filter((n) => n.type !== 'folder').map((n) => [relPathOf(n), n.checksum!]));
}
const localSums = (dir: string) => new Map([...readTree(dir)].map(([k, v]) => [k, checksum(v)]));
/** Progress of the long tests, for a person watching a run (KILN_TEST_PROGRESS=file). */
const progress = (line: string) => {
  if (process.env.KILN_TEST_PROGRESS)
    fs.appendFileSync(process.env.KILN_TEST_PROGRESS, `${new Date().toISOString()} ${line}\n`);
};
const sorted = (m: Map<string, string>) => [...m].sort(([a], [b]) => a.localeCompare(b));
const expectedSums = (m: Map<string, string>) => new Map([...m].map(([k, v]) => [k, checksum(v)]));

async function converged(api: SyncApi, dir: string, expected: Map<string, string>): Promise<boolean> {
  const want = JSON.stringify(sorted(expectedSums(expected)));
  return JSON.stringify(sorted(localSums(dir))) === want && JSON.stringify(sorted(await remoteSums(api))) === want;
}

test('a network cut and a Kiln restart in the middle of a sync: retried with backoff, changes kept and caught up after', {
  timeout: 600_000,
}, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-sync-cli-restart-'));
  const pg = storage === 'postgres' ? await freshPostgres() : null;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(pg ? { DATABASE_URL: pg.url } : {}),
  };
  const s = await createServices(loadConfig(env));
  const person = await createPerson(s, newPerson({ plan: 'personal' }));
  const { key } = await createSyncKey(s, person.id);
  await closeServices(s);
  const port = await freePort();
  let kiln: ChildKiln = await spawnKiln({ ...env, PORT: String(port) });
  const proxy = await startTcpProxy('127.0.0.1', port);
  const api = new SyncApi({ port, host: 'kiln.localhost:8080', apiKey: key });
  const dir = tempDir();
  const expected = new Map<string, string>();
  const put = (rel: string, text: string) => {
    writeFile(dir, rel, text);
    expected.set(rel, text);
  };
  const tag = `${process.pid}`;
  for (let i = 0; i < 40; i++) put(`batch/p${i}-${tag}.html`, page(`first ${i}`));
  const cli = startCli(['sync', dir, '--url', `http://127.0.0.1:${proxy.port}`, '--json'], key);
  try {
    // Cut the network once the first sync is under way.
    await cli.waitFor((e) => e.event === 'upload', 'the first uploads');
    progress('cut');
    proxy.cut();
    await cli.waitFor((e) => e.event === 'retry', 'a retry');
    // Changes on both sides while cut off.
    put(`while-cut-${tag}.html`, page('written while the network was down'));
    const remoteWhileCut = `remote-while-cut-${tag}.html`;
    await api.create({ type: 'site', name: remoteWhileCut, parentId: 0, content: page('made on Kiln meanwhile') });
    expected.set(remoteWhileCut, page('made on Kiln meanwhile'));
    progress('restore');
    proxy.restore();
    await until(() => converged(api, dir, expected), {
      what: 'convergence after the cut',
      timeout: 240_000,
      every: 250,
    });

    // Kiln stops hard and comes back on the same address; changes made meanwhile are caught up.
    progress('restart');
    await kiln.kill('SIGKILL');
    put(`while-down-${tag}.html`, page('written while Kiln was down'));
    put(`batch/p0-${tag}.html`, page('edited while Kiln was down'));
    await until(
      () => {
        const events = cli.events().map((e) => e.event);
        return events.slice(events.lastIndexOf('online') + 1).includes('retry');
      },
      { what: 'a retry while Kiln is down', timeout: 120_000 },
    );
    kiln = await spawnKiln({ ...env, PORT: String(port) });
    progress('restarted');
    await until(() => converged(api, dir, expected), {
      what: 'convergence after the restart',
      timeout: 240_000,
      every: 250,
    });
    // The change stream is open again: an edit on Kiln reaches the folder.
    const n = (await api.list()).nodes.find((x) => x.name === remoteWhileCut)!;
    await api.upload(n.id, page('after the restart'), { ifMatch: n.checksum! });
    expected.set(remoteWhileCut, page('after the restart'));
    await until(() => converged(api, dir, expected), {
      what: 'a remote edit after the restart',
      timeout: 120_000,
      every: 100,
    });
  } finally {
    const code = await cli.stop('SIGTERM');
    await kiln.kill('SIGKILL');
    await proxy.close();
    await pg?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    assert.equal(code, 0, cli.stderr());
  }
  assert.ok(![...readTree(dir).keys()].some((k) => k.includes('(conflict')), 'no conflict copies');
});

test('kill -9 at random moments over 10 rounds: the next run converges, every acknowledged change present once', {
  timeout: 900_000,
}, async () => {
  const kiln = await startKiln();
  try {
    const url = `http://127.0.0.1:${new URL(kiln.url).port}`;
    const { api, key } = await keyHolder(kiln);
    const dir = tempDir();
    const tag = `${process.pid}`;
    // Local changes touch `l-` files, remote ones `r-` files: no change can be a genuine conflict, so any
    // conflict copy or duplicate would be the command's own doing.
    const expected = new Map<string, string>();
    let n = 0;
    const localWrite = (rel: string) => {
      const text = page(`${rel} v${++n}`);
      writeFile(dir, rel, text);
      expected.set(rel, text);
    };
    const remoteWrite = async (rel: string) => {
      const text = page(`${rel} v${++n}`);
      const node = (await api.list()).nodes.find((x) => relPathOf(x) === rel);
      if (node) await api.upload(node.id, text, { ifMatch: node.checksum! });
      else await api.create({ type: 'site', name: rel, parentId: 0, content: text });
      expected.set(rel, text);
    };
    for (let i = 0; i < 10; i++) localWrite(`l-${i}-${tag}.html`);
    for (let i = 0; i < 10; i++) await remoteWrite(`r-${i}-${tag}.html`);
    for (let round = 0; round < 10; round++) {
      progress(`round ${round}`);
      const cli = startCli(['sync', dir, '--url', url, '--json'], key);
      // Changes on both sides while it runs: new files, edits, a delete each side.
      const pick = (prefix: string) => {
        const names = [...expected.keys()].filter((k) => k.startsWith(prefix));
        return names[Math.floor(Math.random() * names.length)];
      };
      for (let i = 0; i < 3; i++) localWrite(`l-${round}-${i}-new-${tag}.html`);
      localWrite(pick('l-'));
      await remoteWrite(`r-${round}-new-${tag}.html`);
      await remoteWrite(pick('r-'));
      if (round % 3 === 1) {
        const gone = pick('l-');
        fs.rmSync(path.join(dir, gone));
        expected.delete(gone);
        const goneRemote = pick('r-');
        const node = (await api.list()).nodes.find((x) => relPathOf(x) === goneRemote);
        if (node) await api.delete(node.id, { expectedVersion: node.structureVersion });
        expected.delete(goneRemote);
      }
      // Killed after a random number of its changes (0 to 4): often in the middle of a pass.
      const after = Math.floor(Math.random() * 5);
      if (after > 0)
        await cli
          .waitFor(
            () =>
              cli.events().filter((e) => ['upload', 'download', 'delete', 'move'].includes(e.event)).length >= after,
            `${after} changes`,
            60_000,
          )
          .catch(() => {}); // fewer changes than that this round: killed once they are done
      progress(`kill after ${after}`);
      cli.child.kill('SIGKILL');
      await cli.exited;
    }
    progress('last run');
    const last = await runCli(['sync', dir, '--once', '--json'], key);
    assert.equal(last.code, 0, last.stderr);
    const local = readTree(dir);
    assert.ok(![...local.keys()].some((k) => k.includes('(conflict')), `no conflict copies: ${[...local.keys()]}`);
    assert.deepEqual(sorted(localSums(dir)), sorted(expectedSums(expected)), 'the folder holds every change, once');
    assert.deepEqual(sorted(await remoteSums(api)), sorted(expectedSums(expected)), 'so does the account');
  } finally {
    await kiln.stop();
  }
});
