// GET of a 100 KB document on its document host: Kiln beside nginx serving the same bytes, in one run.
//
// Kiln (SQLite in a temporary folder, LOG_LEVEL=silent) and nginx (Debian's package, one worker on a
// loopback port, a temporary prefix) each run as a child process; autocannon runs here, with the same
// connections and duration for both, after a warm-up. Rounds alternate Kiln and nginx so that load from
// elsewhere on the machine falls on both alike; the ratio reported is the median of the rounds' ratios.
// Goal: Kiln at least 0.5 of nginx's requests/s; in server CPU per request, a cookie-less visitor within 1.15× and
// the signed-in owner within 2× of Node's floor (node:http sending the same bytes and nothing else), each ratio
// the median of the rounds' (issue #49).
//
// Settings (environment): BENCH_CONNECTIONS (50), BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3),
// BENCH_ROUNDS (3), BENCH_NGINX_WORKERS (1, like Kiln's one process; `auto` for one per core).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { REPO, freePort, spawnKiln, type ChildKiln } from '../test/support/child.ts';
import { Client } from '../test/support/client.ts';
import { countInstructions } from './instructions.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const NGINX_WORKERS = process.env.BENCH_NGINX_WORKERS ?? '1';
const GOAL = 0.5;
/** Kiln's server CPU per document GET as a multiple of nginx's in the same run (#29; it was ≤ 110 µs before). */
const CPU_GOAL_RATIO = 1.3;
/** Server CPU per request as a multiple of Node's floor in the same round (#49): a visitor's, the owner's. */
const VISITOR_FLOOR_GOAL = 1.15;
const OWNER_FLOOR_GOAL = 2;

const ROOT_DOMAIN = 'kiln.localhost:8080';
const USER = { email: 'bench@example.com', username: 'bench', password: 'Bench-password-7f3k2q' };
const DOC_NAME = 'bench.html';
export const DOC_HOST = `${USER.username}.${ROOT_DOMAIN}`;

/** A realistic 100 KB (102,400 bytes exactly) HTML document. */
export function document100k(): Buffer {
  const head =
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Bench</title>\n<style>body{font:16px/1.5 system-ui;margin:2rem}li{margin:.2rem 0}</style>\n</head>\n<body>\n<h1>Benchmark document</h1>\n<ul class="items">\n';
  const tail = '</ul>\n</body>\n</html>\n';
  const target = 100 * 1024;
  let body = '';
  for (let i = 0; head.length + body.length + tail.length < target - 120; i++) {
    body += `<li data-id="${i}" class="item"><input type="checkbox"${i % 3 ? '' : ' checked'}> Task ${i}: water the plants, ${(i * 7919) % 1000} ml</li>\n`;
  }
  const pad = target - head.length - body.length - tail.length;
  body += `<!--${'-'.repeat(Math.max(0, pad - 7))}-->`;
  const html = Buffer.from(head + body + tail);
  if (html.length !== target) throw new Error(`document is ${html.length} bytes, wanted ${target}`);
  return html;
}

// ---------------------------------------------------------------- Kiln

/** Kiln serving the document, with the owner's cookie on the document host and the document's ETag. */
export async function startKilnWithDocument(
  dataDir: string,
  bytes: Buffer,
): Promise<{ kiln: ChildKiln; ownerCookie: string; etag: string }> {
  const env = { DATA_DIR: dataDir, ROOT_DOMAIN, LOG_LEVEL: 'silent' };
  const add = spawnSync(
    process.execPath,
    [
      path.join(REPO, 'bin/kiln.js'),
      'user',
      'add',
      '--email',
      USER.email,
      '--username',
      USER.username,
      '--password',
      USER.password,
      '--plan',
      'maker',
    ],
    { cwd: REPO, env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  if (add.status !== 0) throw new Error(`kiln user add failed:\n${add.stdout}${add.stderr}`);
  const kiln = await spawnKiln(env, {
    nodeArgs: process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [],
  });
  try {
    const main = new Client(kiln.port, ROOT_DOMAIN);
    const login = await main.post('/_/login', { email: USER.email, password: USER.password });
    if (login.status !== 200) throw new Error(`sign-in failed: ${login.status} ${login.text}`);
    await createDocument(main, DOC_NAME, bytes);
    const got = await main.on(DOC_HOST).get(`/${DOC_NAME}`);
    if (got.status !== 200 || !got.body.equals(bytes))
      throw new Error(
        `Kiln does not serve the document's exact bytes (status ${got.status}, ${got.body.length} bytes)`,
      );
    return { kiln, ownerCookie: main.jar.header(DOC_HOST), etag: String(got.headers.etag) };
  } catch (err) {
    await kiln.kill('SIGKILL');
    throw err;
  }
}

/** Creates a document from the dashboard (AJAX) and saves the exact bytes through `POST /_/save`. */
async function createDocument(main: Client, name: string, bytes: Buffer) {
  const created = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name },
    { headers: { accept: 'application/json' } },
  );
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  // The main app's session reaches the document host through the session handshake.
  const doc = await main.enter(DOC_HOST);
  const saved = await doc.post('/_/save', bytes, {
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${DOC_HOST}/${name}` },
  });
  if (saved.status !== 200) throw new Error(`save failed: ${saved.status} ${saved.text}`);
}

// ---------------------------------------------------------------- Node's floor

/** node:http serving the same bytes with Kiln's headers for a document and nothing else: what any Node server
 *  pays per request, so Kiln's own share is Kiln's CPU minus this. */
async function startNodeFloor(
  dir: string,
  bytes: Buffer,
): Promise<{ port: number; child: ChildProcess; stop(): Promise<void> }> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'doc.html');
  writeFileSync(file, bytes);
  const port = await freePort();
  const script = `
    const http = require('node:http');
    const bytes = require('node:fs').readFileSync(${JSON.stringify(file)});
    http.createServer((req, res) => {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': bytes.length,
        etag: '"0123456789abcdef"',
        'cache-control': 'no-cache',
        'x-frame-options': 'DENY',
        'content-security-policy': "frame-ancestors 'none'",
        'x-content-type-options': 'nosniff',
      });
      res.end(bytes);
    }).listen(${port}, '127.0.0.1', () => process.send('ready'));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the Node floor server exited with ${code}`)));
  });
  return {
    port,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

// ---------------------------------------------------------------- nginx

function nginxBinary(): string {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(p)) return p;
  console.log('nginx is not installed: installing the Debian package (apt-get install nginx)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', 'nginx'],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
    if (r.status !== 0) throw new Error(`could not install nginx (apt-get ${args.join(' ')} failed)`);
  }
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(p)) return p;
  throw new Error('nginx is still missing after apt-get install');
}

export async function startNginx(
  dir: string,
  bytes: Buffer,
): Promise<{ port: number; child: ChildProcess; stop(): Promise<void> }> {
  const bin = nginxBinary();
  const port = await freePort();
  const www = path.join(dir, 'www');
  mkdirSync(www, { recursive: true });
  for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
    mkdirSync(path.join(dir, 'tmp', t), { recursive: true });
  writeFileSync(path.join(www, DOC_NAME), bytes);
  // Workers drop root privileges: let them reach and read the files (mkdtemp folders are 0700).
  for (const p of [path.dirname(dir), dir, www]) chmodSync(p, 0o755);
  chmodSync(path.join(www, DOC_NAME), 0o644);
  const t = (n: string) => path.join(dir, 'tmp', n);
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off;
worker_processes ${NGINX_WORKERS};
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${t('body')};
  proxy_temp_path ${t('proxy')};
  fastcgi_temp_path ${t('fastcgi')};
  uwsgi_temp_path ${t('uwsgi')};
  scgi_temp_path ${t('scgi')};
  types { text/html html; }
  default_type application/octet-stream;
  charset utf-8;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:${port};
    server_name _;
    root ${www};
  }
}
`,
  );
  const errorLog = path.join(dir, 'error.log');
  // stdout/stderr not inherited: a leftover nginx must never hold the caller's pipes open.
  const child = spawn(bin, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', errorLog], { stdio: 'ignore' });
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  // Never leave nginx behind, whatever happens to this process.
  const killNow = () => child.exitCode === null && child.kill('SIGTERM');
  process.once('exit', killNow);
  const stop = async () => {
    killNow();
    await gone;
    process.off('exit', killNow);
  };
  const deadline = Date.now() + 10_000;
  let last = '';
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${readLog(errorLog)}`);
    const ok = await fetch(`http://127.0.0.1:${port}/${DOC_NAME}`).then(
      (r) =>
        r.arrayBuffer().then((b) => ((last = `status ${r.status}`), r.status === 200 && Buffer.from(b).equals(bytes))),
      (e) => ((last = String(e)), false),
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not serve the document within 10 s (${last}): ${readLog(errorLog)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, child, stop };
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '(no error log)';
  }
}

// ---------------------------------------------------------------- load

interface Figures {
  rps: number;
  p99: number;
  p50: number;
  mbps: number;
  requests: number;
  /** Server CPU time (user + system, all its processes) per request, in microseconds: steadier than
   *  requests/s on a machine shared with other work. NaN where /proc is missing. */
  cpuUsPerReq: number;
  /** Instructions the server's processes retired per request (bench/instructions.ts): the same on a slow or a
   *  busy host. NaN where perf cannot count them. */
  insPerReq: number;
}

/** The Prometheus text of the Kiln on `port` (GET /_/metrics from this machine, on the main app's host). */
export function metricsText(port: number, host: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/_/metrics', headers: { host } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

/** CPU seconds (user + system) one process has used so far, from /proc; with `reaped`, also its ended children
 *  that it has waited for. Throws where /proc is missing. */
export function ownCpuSeconds(pid: number, reaped = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0);
  return ticks / 100; // clock ticks of 1/100 s
}

/** CPU seconds used so far by a process and its children processes (nginx workers), from /proc. */
export function cpuSeconds(pid: number): number {
  try {
    return withChildren(pid).reduce((sum, p) => sum + ownCpuSeconds(p), 0);
  } catch {
    return NaN;
  }
}

export async function load(
  port: number,
  host: string,
  seconds: number,
  serverPid?: number,
  headers: Record<string, string> = {},
): Promise<Figures> {
  const cpu0 = serverPid ? cpuSeconds(serverPid) : NaN;
  const counting = await countInstructions({ server: serverPid ? withChildren(serverPid) : [] });
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/${DOC_NAME}`,
    headers: { host, ...headers },
    connections: CONNECTIONS,
    duration: seconds,
  });
  // A conditional GET is answered 304 every time, any other answer 200.
  const expected = headers['if-none-match'] ? r['3xx'] : r['2xx'];
  if (r.errors || r.timeouts || expected !== r.requests.total - (r.errors ?? 0))
    throw new Error(
      `${host}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.requests.total - expected} unexpected answers (${r['4xx']} 4xx, ${r['5xx']} 5xx)`,
    );
  const cpu = serverPid ? cpuSeconds(serverPid) - cpu0 : NaN;
  const { server } = await counting.stop();
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    p50: r.latency.p50,
    mbps: r.throughput.average / 1e6,
    requests: r.requests.total,
    cpuUsPerReq: (cpu / r.requests.total) * 1e6,
    insPerReq: server === null ? NaN : server / r.requests.total,
  };
}

/** A process and its children processes (nginx's workers), from /proc. */
function withChildren(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return [pid, ...(children ? children.split(' ').flatMap((c) => withChildren(Number(c))) : [])];
  } catch {
    return [pid];
  }
}

const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(7)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   ${f.mbps.toFixed(0).padStart(5)} MB/s` +
  `   server CPU ${f.cpuUsPerReq.toFixed(0).padStart(4)} µs/req` +
  (Number.isNaN(f.insPerReq) ? '' : `   ${(f.insPerReq / 1000).toFixed(0).padStart(4)} k instructions/req`);

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-http-'));
  const bytes = document100k();
  let kiln: ChildKiln | undefined;
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  let floor: Awaited<ReturnType<typeof startNodeFloor>> | undefined;
  try {
    const started = await startKilnWithDocument(path.join(dir, 'kiln'), bytes);
    kiln = started.kiln;
    nginx = await startNginx(path.join(dir, 'nginx'), bytes);
    floor = await startNodeFloor(path.join(dir, 'floor'), bytes);
    console.log(
      `GET /${DOC_NAME} (${bytes.length} bytes): ${CONNECTIONS} connections × ${SECONDS} s after a ${WARMUP} s warm-up, ${ROUNDS} round(s); ` +
        `nginx ${NGINX_WORKERS} worker(s), Kiln one process; ${os.cpus().length} cores`,
    );
    const target = (name: string, port: number, pid: number | undefined, host: string, headers = {}) => ({
      name: name.padEnd(11),
      port,
      pid,
      host,
      headers,
      runs: [] as Figures[],
    });
    // nginx second: the ratio compares the first two.
    const targets = [
      target('kiln', kiln.port, kiln.child.pid, DOC_HOST),
      target('nginx', nginx.port, nginx.child.pid, `127.0.0.1:${nginx.port}`),
      // The owner opening the page in a browser (a navigation): the route adds the toolbar's tag.
      target('kiln owner', kiln.port, kiln.child.pid, DOC_HOST, {
        cookie: started.ownerCookie,
        'sec-fetch-dest': 'document',
      }),
      target('kiln 304', kiln.port, kiln.child.pid, DOC_HOST, { 'if-none-match': started.etag }),
      target('node floor', floor.port, floor.child.pid, `127.0.0.1:${floor.port}`),
    ];
    for (const t of targets) await load(t.port, t.host, WARMUP, t.pid, t.headers);
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const t of targets) {
        const f = await load(t.port, t.host, SECONDS, t.pid, t.headers);
        t.runs.push(f);
        console.log(`  round ${round} ${t.name} ${fmt(f)}`);
      }
      ratios.push(targets[0].runs[round - 1].rps / targets[1].runs[round - 1].rps);
      console.log(`  round ${round} ratio ${ratios[round - 1].toFixed(2)}`);
    }
    // Medians: the machine is shared, so one round can be slowed by something else.
    const median = (xs: number[]) => {
      const v = [...xs].sort((a, b) => a - b);
      return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    };
    const summary = (runs: Figures[]): Figures => ({
      rps: median(runs.map((r) => r.rps)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      mbps: median(runs.map((r) => r.mbps)),
      cpuUsPerReq: median(runs.map((r) => r.cpuUsPerReq)),
      insPerReq: median(runs.map((r) => r.insPerReq)),
      requests: runs.reduce((a, r) => a + r.requests, 0),
    });
    const [k, n, owner, notModified, node] = targets.map((t) => summary(t.runs));
    const ratio = median(ratios);
    for (const t of targets) console.log(`${t.name} ${fmt(summary(t.runs))}   (median of ${ROUNDS})`);
    console.log(
      `ratio  kiln/nginx requests/s ${ratio.toFixed(2)} (median of rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}; goal ≥ ${GOAL}: ${ratio >= GOAL ? 'met' : 'NOT met'}); ` +
        `p99 ${k.p99} ms vs ${n.p99} ms`,
    );
    console.log(
      `cpu    server CPU per request: kiln ${k.cpuUsPerReq.toFixed(0)} µs, nginx ${n.cpuUsPerReq.toFixed(0)} µs: kiln/nginx ${(k.cpuUsPerReq / n.cpuUsPerReq).toFixed(2)}× ` +
        `(goal ≤ ${CPU_GOAL_RATIO}×: ${k.cpuUsPerReq <= CPU_GOAL_RATIO * n.cpuUsPerReq ? 'met' : 'NOT met'}; nginx/kiln is the requests/s ratio when each server is CPU-bound)`,
    );
    const vsNginx = (f: Figures) => (f.cpuUsPerReq / n.cpuUsPerReq).toFixed(2);
    console.log(
      `cpu    signed-in owner ${owner.cpuUsPerReq.toFixed(0)} µs (${vsNginx(owner)}× nginx; goal ≤ ${CPU_GOAL_RATIO}×: ${owner.cpuUsPerReq <= CPU_GOAL_RATIO * n.cpuUsPerReq ? 'met' : 'NOT met'}); ` +
        `304 ${notModified.cpuUsPerReq.toFixed(0)} µs (goal: below the 200's: ${notModified.cpuUsPerReq < k.cpuUsPerReq ? 'met' : 'NOT met'})`,
    );
    console.log(
      `cpu    Node's floor (node:http sending the same bytes, nothing else) ${node.cpuUsPerReq.toFixed(0)} µs = ${vsNginx(node)}× nginx: ` +
        `Kiln's own share ${(k.cpuUsPerReq - node.cpuUsPerReq).toFixed(0)} µs cookie-less, ${(owner.cpuUsPerReq - node.cpuUsPerReq).toFixed(0)} µs signed in`,
    );
    // Each round's ratio to the floor measured in that round (load from elsewhere falls on both alike), then the median.
    const toFloor = (t: (typeof targets)[number]) =>
      median(t.runs.map((r, i) => r.cpuUsPerReq / targets[4].runs[i].cpuUsPerReq));
    const [visitorX, nginxX, ownerX] = [toFloor(targets[0]), toFloor(targets[1]), toFloor(targets[2])];
    const goal = (x: number, g: number) => `${x.toFixed(2)}× (goal ≤ ${g}×: ${x <= g ? 'met' : 'NOT met'})`;
    console.log(
      `floor  server CPU ÷ Node's floor, median of the rounds' ratios: cookie-less visitor ${goal(visitorX, VISITOR_FLOOR_GOAL)}, ` +
        `signed-in owner ${goal(ownerX, OWNER_FLOOR_GOAL)}, nginx ${nginxX.toFixed(2)}×`,
    );
    if (!Number.isNaN(k.insPerReq)) {
      const ins = (f: Figures) =>
        `${(f.insPerReq / 1000).toFixed(0)} k (${(f.insPerReq / n.insPerReq).toFixed(2)}× nginx)`;
      console.log(
        `ins    instructions per request (perf; the same on a slow or busy host): kiln ${ins(k)}, nginx ${(n.insPerReq / 1000).toFixed(0)} k, ` +
          `owner ${ins(owner)}, 304 ${ins(notModified)}, Node's floor ${ins(node)}`,
      );
    }
  } finally {
    await nginx?.stop();
    await floor?.stop();
    await kiln?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
