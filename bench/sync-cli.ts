// `kiln sync` (src/sync-cli) end to end: the first sync of BENCH_SYNC_CLI_FILES (1,000) files of 10 KB
// (seconds and requests), then, with `kiln sync` watching, BENCH_SYNC_CLI_ROUNDS (50) of each:
//   - a local save → visible on the document host (the file written; the host polled until it serves it);
//   - a browser save → on disk (the owner's session POSTs /_/save as hyperclayjs does; the file polled).
// p50 and p99 of each (goal: p99 ≤ 1 s). Kiln runs as a child (`node bin/kiln.js serve`, SQLite), and so
// does the command (`node bin/kiln.js sync`), as a user runs them.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { spawnKiln, REPO } from '../test/support/child.ts';
import { sessionsFor } from '../test/support/people.ts';

const FILES = Number(process.env.BENCH_SYNC_CLI_FILES ?? 1000);
const ROUNDS = Number(process.env.BENCH_SYNC_CLI_ROUNDS ?? 50);
const ROOT_DOMAIN = 'kiln.localhost:8080';
const agent = new http.Agent({ keepAlive: true });

function get(port: number, host: string, url: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: url,
        method: body === undefined ? 'GET' : 'POST',
        agent,
        headers: { host, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const tick = () => new Promise((r) => setTimeout(r, 2));
/** A poll step that turns a change that never arrives into an error instead of a hang. */
const within = async (t0: number) => {
  if (performance.now() - t0 > 60_000) throw new Error('a change did not arrive within a minute');
  await tick();
};

function cli(args: string[], key: string) {
  const child = spawn(process.execPath, [path.join(REPO, 'bin/kiln.js'), ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', KILN_KEY: key, KILN_CONFIG_DIR: os.tmpdir() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  return { child, out: () => out, exited };
}

const page = (text: string) =>
  `<!DOCTYPE html><html><head><title>bench</title></head><body><p>${text}</p>${'x'.repeat(10_000)}</body></html>`;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-sync-cli-'));
const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ROOT_DOMAIN };
const config = loadConfig(env);
const s = await createServices(config);
const person = await createPerson(s, {
  email: 'bench-sync-cli@example.com',
  username: 'benchsynccli',
  password: 'Bench-sync-cli-password-9x',
  plan: 'maker',
  emailConfirmed: true,
});
const { key } = await createSyncKey(s, person.id);
const sessions = await sessionsFor(s.database.db, config, person.id, person.username);
await closeServices(s);
const kiln = await spawnKiln(env);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-sync-cli-dir-'));
const docHost = `${person.username}.${ROOT_DOMAIN}`;
try {
  for (let i = 0; i < FILES; i++) {
    const sub = path.join(dir, `f${i % 10}`);
    fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, `p${i}.html`), page(`page ${i}`));
  }
  const url = `http://127.0.0.1:${kiln.port}`;
  const t0 = performance.now();
  const first = cli(['sync', dir, '--url', url, '--once', '--json'], key);
  const code = await first.exited;
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`first sync failed (${code}): ${first.out().slice(-2000)}`);
  const done = first
    .out()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .find((e) => e.event === 'done');
  console.log(
    `first sync: ${FILES} files of 10 KB in ${seconds.toFixed(1)} s (including the command's start), ${done?.requests} requests`,
  );

  const watching = cli(['sync', dir, '--json'], key);
  while (!watching.out().includes('"event":"watching"')) await tick();
  // Local save → served by the document host.
  const localMs: number[] = [];
  const target = path.join(dir, 'f0', 'p0.html');
  for (let r = 0; r < ROUNDS; r++) {
    const marker = `local-${r}-${Date.now()}`;
    const t = performance.now();
    fs.writeFileSync(target, page(marker));
    while (!(await get(kiln.port, docHost, '/f0/p0.html')).text.includes(marker)) await within(t);
    localMs.push(performance.now() - t);
  }
  // Browser save → on disk.
  const browserMs: number[] = [];
  const onDisk = path.join(dir, 'f1', 'p1.html');
  for (let r = 0; r < ROUNDS; r++) {
    const marker = `browser-${r}-${Date.now()}`;
    const t = performance.now();
    const res = await get(
      kiln.port,
      docHost,
      '/_/save',
      {
        'content-type': 'text/plain',
        'document-url': `http://${docHost}/f1/p1.html`,
        cookie: `__Host-auth_token=${sessions.host}`,
        origin: `http://${docHost}`,
      },
      page(marker),
    );
    if (res.status !== 200) throw new Error(`browser save answered ${res.status}: ${res.text}`);
    while (!fs.readFileSync(onDisk, 'utf8').includes(marker)) await within(t);
    browserMs.push(performance.now() - t);
  }
  watching.child.kill('SIGTERM');
  await watching.exited;
  const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(0)} ms, p99 ${pct(xs, 99).toFixed(0)} ms (n=${xs.length})`;
  console.log(`local save → document host: ${fmt(localMs)}`);
  console.log(`browser save → on disk:     ${fmt(browserMs)}`);
  const ok = pct(localMs, 99) <= 1000 && pct(browserMs, 99) <= 1000;
  console.log(ok ? 'goal met: p99 ≤ 1 s' : 'goal missed: p99 > 1 s on this machine');
} finally {
  await kiln.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
}
