// SSE fan-out: 5,000 open streams, save-to-delivery latency.
//
// 1. One process: a Kiln child (`node bin/kiln.js serve`, SQLite, in-process bus) holds 5,000 streams on
//    one document's account — 4,000 `saved` lanes (anonymous viewers of a public document) and 1,000
//    sync streams (`GET /_/sync/stream` with a key). Goal: p99 ≤ 100 ms.
// 2. Two processes through Redis: two Kiln children on one PostgreSQL and one Redis; all 5,000 streams
//    on B, every save through A. Goal: p99 ≤ 150 ms. Skipped when PostgreSQL or Redis is unreachable.
//
// Each round is one browser save (`POST /_/save`, ~2 KB document carrying a round marker); the clock
// starts just before the request is written and stops when a stream's socket delivers the frame with
// that marker. This process holds all 5,000 client sockets itself, so the tail includes the time it
// takes this one client to read 5,000 sockets. Rounds do not overlap (a short pause between them).
//
// Settings (environment): BENCH_STREAMS (5000), BENCH_SYNC_STREAMS (1000 of them), BENCH_ROUNDS (30),
// BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test), BENCH_REDIS_URL (redis://127.0.0.1:6379).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { freePort, spawnKiln, type ChildKiln } from '../test/support/child.ts';
import { Client } from '../test/support/client.ts';
import { newPerson, sessionsFor, actingAs } from '../test/support/people.ts';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { createNode } from '../src/nodes/tree.ts';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 5000);
const SYNC_STREAMS = Math.min(STREAMS, Number(process.env.BENCH_SYNC_STREAMS ?? 1000));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = 'kiln.localhost:8080';
const DOC = 'fanout.html';

interface Fixture {
  username: string;
  token: string;
  key: string;
}

/** A person with a public document, a session and a sync key, written straight into the storage. */
async function fixture(env: Record<string, string>): Promise<Fixture> {
  const s = await createServices(loadConfig(env));
  try {
    const person = await createPerson(s, newPerson({ plan: 'personal' }));
    const token = (await sessionsFor(s.database.db, s.config, person.id, person.username)).host;
    const { key } = await createSyncKey(s, person.id);
    await createNode(await actingAs(s, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name: DOC,
      html: documentFor(0),
    });
    return { username: person.username, token, key };
  } finally {
    await closeServices(s);
  }
}

function documentFor(round: number): string {
  const items = Array.from({ length: 40 }, (_, i) => `<li data-i="${i}">item ${i} of the list</li>`).join('\n');
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>fan-out</title></head>\n<body><h1>round-${round}-mark</h1>\n<ul>\n${items}\n</ul></body></html>\n`;
}

// ---------------------------------------------------------------- streams

// The client sockets live in reader processes (BENCH_READERS, default 2), so that reading 5,000
// sockets is not all on one event loop; each reader reports arrival times on the shared clock
// (performance.timeOrigin + performance.now()).
const READER = `
const net = require('node:net');
const now = () => performance.timeOrigin + performance.now();
let sockets = [], marker = null, round = 0, arrived = [], waiting = 0;
process.on('message', async (m) => {
  if (m.kind === 'open') {
    const BATCH = 250;
    for (let start = 0; start < m.requests.length; start += BATCH) {
      await Promise.all(m.requests.slice(start, start + BATCH).map((req) => new Promise((resolve, reject) => {
        const s = net.connect(m.port, '127.0.0.1');
        s.setNoDelay(true);
        let head = Buffer.alloc(0), connected = false;
        s.on('error', (e) => connected ? process.send({ kind: 'error', message: e.message }) : reject(e));
        s.on('data', (chunk) => {
          if (!connected) {
            head = Buffer.concat([head, chunk]);
            // A refusal has a whole head and no stream: say which, instead of waiting for a comment that never comes.
            if (head.indexOf('\\r\\n\\r\\n') !== -1 && !head.toString('latin1').startsWith('HTTP/1.1 200')) return reject(new Error('refused: ' + head.toString().split('\\r\\n')[0]));
            if (head.indexOf(': connected') === -1) return;
            if (!head.toString('latin1').startsWith('HTTP/1.1 200')) return reject(new Error('refused: ' + head.toString().split('\\r\\n')[0]));
            connected = true; sockets.push(s); s.kiln = { last: 0 }; resolve();
            return;
          }
          if (marker && s.kiln.last !== round && chunk.indexOf(marker) !== -1) {
            s.kiln.last = round;
            arrived.push(now());
            if (--waiting === 0) process.send({ kind: 'round', round, arrived });
          }
        });
        s.write(req);
      })));
    }
    process.send({ kind: 'opened', count: sockets.length });
  } else if (m.kind === 'arm') {
    round = m.round; marker = Buffer.from(m.marker); arrived = []; waiting = sockets.length;
    process.send({ kind: 'armed' });
  } else if (m.kind === 'collect') {
    process.send({ kind: 'round', round, arrived });
  }
});
`;

class Reader {
  child: ChildProcess;
  private waiters: Array<(m: any) => boolean> = [];
  constructor() {
    this.child = spawn(process.execPath, ['-e', READER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: any) => {
      if (m.kind === 'error') console.error('reader socket error:', m.message);
      this.waiters = this.waiters.filter((w) => !w(m));
    });
  }
  ask(msg: unknown, kind: string, timeoutMs = 120_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`reader did not answer ${kind}`)), timeoutMs);
      this.waiters.push((m) => (m.kind === kind ? (clearTimeout(t), resolve(m), true) : false));
      this.child.send(msg as object);
    });
  }
}

class Streams {
  readers: Reader[] = [];
  count = 0;

  /** Opens `count` streams spread over the readers; resolves when every one has sent `: connected`. */
  async open(port: number, f: Fixture, count: number, syncCount: number) {
    const docHost = `${f.username}.${ROOT}`;
    const lane = `GET /_/sync?document-url=${encodeURIComponent(`http://${docHost}/${DOC}`)}&lane=saved HTTP/1.1\r\nHost: ${docHost}\r\nAccept: text/event-stream\r\n\r\n`;
    const sync = `GET /_/sync/stream HTTP/1.1\r\nHost: ${ROOT}\r\nX-API-Key: ${f.key}\r\nAccept: text/event-stream\r\n\r\n`;
    await this.openRequests(
      port,
      Array.from({ length: count }, (_, i) => (i < syncCount ? sync : lane)),
    );
  }

  async openRequests(port: number, requests: string[]) {
    const n = Math.max(1, Number(process.env.BENCH_READERS ?? 2));
    this.readers = Array.from({ length: n }, () => new Reader());
    const opened = await Promise.all(
      this.readers.map((r, i) =>
        r.ask({ kind: 'open', port, requests: requests.filter((_, j) => j % n === i) }, 'opened'),
      ),
    );
    this.count = opened.reduce((a, o) => a + o.count, 0);
  }

  /** Runs one save round; resolves with the per-stream latencies (ms) and how many never arrived. */
  async round(
    round: number,
    save: () => Promise<number>,
  ): Promise<{ latencies: number[]; missing: number; saveMs: number }> {
    const marker = `round-${round}-mark`;
    await Promise.all(this.readers.map((r) => r.ask({ kind: 'arm', round, marker }, 'armed')));
    const results = this.readers.map((r) =>
      r.ask({ kind: 'noop' }, 'round', 10_000).catch(() => r.ask({ kind: 'collect' }, 'round')),
    );
    const t0 = performance.timeOrigin + performance.now();
    const status = await save();
    const saveMs = performance.timeOrigin + performance.now() - t0;
    if (status !== 200) throw new Error(`save answered ${status}`);
    const got = await Promise.all(results);
    const latencies = got.flatMap((g) => (g.arrived as number[]).map((t) => t - t0));
    return { latencies, missing: this.count - latencies.length, saveMs };
  }

  close() {
    for (const r of this.readers) r.child.kill();
    this.readers = [];
  }
}

function saver(port: number, f: Fixture) {
  const host = `${f.username}.${ROOT}`;
  const c = new Client(port, host);
  c.jar.store(host, `__Host-auth_token=${f.token}; Path=/`);
  return (round: number) => async () =>
    (
      await c.post('/_/save', documentFor(round), {
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/${DOC}` },
      })
    ).status;
}

// ---------------------------------------------------------------- figures

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

/** One server under measure, its streams open. */
interface Target {
  label: string;
  what: string;
  streams: Streams;
  save: (round: number) => () => Promise<number>;
  goalP99: number;
  pid: number;
  close(): Promise<void>;
}

interface Figures {
  p50: number;
  p99: number;
  /** Each round's p99 (the round's 5,000 deliveries of one save). */
  roundP99: number[];
  missing: number;
}

/** Rounds interleaved over every target (floor, one process, two processes, then the other way round), so that
 *  load from elsewhere on the machine falls on all of them alike; then each target's figures. */
async function measureAll(targets: Target[]): Promise<Figures[]> {
  // Warm-up rounds (JIT, caches) are not counted.
  for (let r = 1; r <= 3; r++) for (const t of targets) await t.streams.round(r, t.save(r));
  const acc = targets.map(() => ({ all: [] as number[], saves: [] as number[], roundP99: [] as number[], missing: 0 }));
  for (let r = 100; r < 100 + ROUNDS; r++) {
    const order = [...targets.entries()];
    for (const [i, t] of r % 2 ? order.reverse() : order) {
      const res = await t.streams.round(r, t.save(r));
      acc[i].all.push(...res.latencies);
      acc[i].roundP99.push(
        pct(
          [...res.latencies].sort((a, b) => a - b),
          99,
        ),
      );
      acc[i].saves.push(res.saveMs);
      acc[i].missing += res.missing;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return targets.map((t, i) => {
    const { all, saves, roundP99, missing } = acc[i];
    all.sort((a, b) => a - b);
    saves.sort((a, b) => a - b);
    const p50 = pct(all, 50);
    const p99 = pct(all, 99);
    console.log(`\n${t.label}`);
    console.log(`  streams open            ${t.streams.count} (${t.what})`);
    console.log(
      `  deliveries measured     ${all.length} (${ROUNDS} saves × ${t.streams.count} streams), missing ${missing}`,
    );
    console.log(`  save → delivery  min    ${all[0].toFixed(1)} ms`);
    console.log(`  save → delivery  p50    ${p50.toFixed(1)} ms`);
    console.log(
      `  save → delivery  p99    ${p99.toFixed(1)} ms${Number.isFinite(t.goalP99) ? `   (goal ≤ ${t.goalP99} ms: ${p99 <= t.goalP99 ? 'met' : 'NOT met'})` : ''}`,
    );
    console.log(`  save → delivery  max    ${all[all.length - 1].toFixed(1)} ms`);
    console.log(`  save answer      p50    ${pct(saves, 50).toFixed(1)} ms`);
    console.log(`  server memory (RSS)     ${rssMb(t.pid)} MB with the streams open`);
    return { p50, p99, roundP99, missing };
  });
}

function rssMb(pid: number): string {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? (Number(m[1]) / 1024).toFixed(0) : '?';
  } catch {
    return '?';
  }
}

// ---------------------------------------------------------------- targets

async function oneProcess(): Promise<Target> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-sse-'));
  // Every bench stream comes from loopback: lift the per-address caps on open streams and connections.
  const env = {
    DATA_DIR: dir,
    ROOT_DOMAIN: ROOT,
    LOG_LEVEL: 'silent',
    MAX_STREAMS_PER_ADDRESS: String(STREAMS + 100),
    // The readers open 250 streams at a time from one address: until its head is out, a stream counts as a
    // request in flight.
    MAX_REQUESTS_PER_ADDRESS: '1000',
    MAX_CONNECTIONS_PER_ADDRESS: String(STREAMS + 1000),
  };
  const streams = new Streams();
  let kiln: ChildKiln | undefined;
  const close = async () => {
    streams.close();
    await kiln?.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const f = await fixture(env);
    kiln = await spawnKiln(env, { nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ') ?? [] });
    const t = performance.now();
    await streams.open(kiln.port, f, STREAMS, SYNC_STREAMS);
    console.log(`opened ${STREAMS} streams on one process in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    return {
      label: 'One process (SQLite, in-process bus)',
      what: `${SYNC_STREAMS} sync streams, ${STREAMS - SYNC_STREAMS} saved lanes`,
      streams,
      save: saver(kiln.port, f),
      goalP99: 100,
      pid: kiln.child.pid!,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

// The floor: a bare Node HTTP server (no Kiln, no database) that writes one ~2 KB frame to each of
// the same number of open streams when asked. Measured the same way, in the same rounds, on the same
// machine: what is left above it is Kiln's own cost.
const FLOOR_SERVER = `
const http = require('node:http');
const streams = new Set();
const body = (m) => Buffer.from('id: 1\\ndata: ' + JSON.stringify({ html: ${JSON.stringify(documentFor(0))}.replace('round-0-mark', m), sender: 'floor', seq: 1 }) + '\\n\\n');
http.createServer((req, res) => {
  if (req.url.startsWith('/fire')) {
    const frame = body(new URL(req.url, 'http://x').searchParams.get('m'));
    for (const s of streams) s.write(frame);
    return res.end('ok');
  }
  res.socket.setNoDelay(true);
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.write(': connected\\n\\n');
  streams.add(res);
  res.on('close', () => streams.delete(res));
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.send('ready'));
`;

async function floor(): Promise<Target> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', FLOOR_SERVER], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const streams = new Streams();
  const close = async () => {
    streams.close();
    child.kill();
  };
  try {
    await new Promise((resolve) => child.once('message', resolve));
    await streams.openRequests(
      port,
      Array.from({ length: STREAMS }, () => `GET /stream HTTP/1.1\r\nHost: floor\r\n\r\n`),
    );
    const c = new Client(port, 'floor');
    return {
      label: 'Floor: a bare Node server writing the same frame to the same number of streams',
      what: 'plain SSE responses',
      streams,
      save: (round: number) => async () => (await c.get(`/fire?m=round-${round}-mark`)).status,
      goalP99: Infinity,
      pid: child.pid!,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function reachable(): Promise<string | null> {
  try {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.end();
  } catch (err) {
    return `PostgreSQL at ${PG_URL} (${(err as Error).message})`;
  }
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    return `Redis at ${REDIS_URL} (${(err as Error).message})`;
  } finally {
    r.disconnect();
  }
  return null;
}

async function twoProcesses(): Promise<Target | null> {
  const missing = await reachable();
  if (missing) {
    console.log(`\nTwo processes: skipped (${missing} unreachable)`);
    return null;
  }
  const name = `kiln_bench_sse_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const dbUrl = PG_URL.replace(/\/[^/]*$/, `/${name}`);
  const dirs = [0, 1, 2].map(() => mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-sse-')));
  const env = (dir: string) => ({
    DATA_DIR: dir,
    DATABASE_URL: dbUrl,
    REDIS_URL,
    ROOT_DOMAIN: ROOT,
    LOG_LEVEL: 'silent',
    MAX_STREAMS_PER_ADDRESS: String(STREAMS + 100),
    // The readers open 250 streams at a time from one address: until its head is out, a stream counts as a
    // request in flight.
    MAX_REQUESTS_PER_ADDRESS: '1000',
    MAX_CONNECTIONS_PER_ADDRESS: String(STREAMS + 1000),
  });
  const kilns: ChildKiln[] = [];
  const streams = new Streams();
  const close = async () => {
    streams.close();
    await Promise.all(kilns.map((k) => k.kill()));
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  try {
    const f = await fixture(env(dirs[2]));
    const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ') ?? [];
    kilns.push(...(await Promise.all([spawnKiln(env(dirs[0])), spawnKiln(env(dirs[1]), { nodeArgs })])));
    const [a, b] = kilns;
    const t = performance.now();
    await streams.open(b.port, f, STREAMS, SYNC_STREAMS);
    console.log(
      `opened ${STREAMS} streams on process B in ${((performance.now() - t) / 1000).toFixed(1)} s; saves go through process A`,
    );
    return {
      label: 'Two processes (PostgreSQL + Redis): saves through A, streams on B',
      what: `${SYNC_STREAMS} sync streams, ${STREAMS - SYNC_STREAMS} saved lanes`,
      streams,
      save: saver(a.port, f),
      goalP99: 150,
      pid: b.child.pid!,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(
  `machine: ${os.cpus().length} cores, load average ${load()} (other work on the machine lengthens the tail); rounds interleaved over the servers`,
);
const targets: Target[] = [];
try {
  targets.push(await floor());
  targets.push(await oneProcess());
  const two = await twoProcesses();
  if (two) targets.push(two);
  const [base, one, twoFigures] = await measureAll(targets);
  console.log('\nSummary');
  console.log(`  floor (bare Node, no Kiln): p50 ${base.p50.toFixed(1)} ms, p99 ${base.p99.toFixed(1)} ms`);
  // Beside the ratio of the p99s of all rounds together, the median of the rounds' own ratios (each round's p99
  // against the floor's in the same round): a burst of other work then counts in one round, not in one target.
  const vsFloor = (f: Figures, goal: number) => {
    const r = f.p99 / base.p99;
    const rounds = f.roundP99.map((p, k) => p / base.roundP99[k]).sort((a, b) => a - b);
    const at = (q: number) => rounds[Math.round(q * (rounds.length - 1))].toFixed(2);
    return `${r.toFixed(2)}× the floor's p99 (goal ≤ ${goal.toFixed(2)}×: ${r <= goal ? 'met' : 'NOT met'}); median of the rounds' ratios ${at(0.5)}× (middle half ${at(0.25)}–${at(0.75)}×)`;
  };
  console.log(
    `  one process:   p50 ${one.p50.toFixed(1)} ms, p99 ${one.p99.toFixed(1)} ms (goal ≤ 100 ms); ${vsFloor(one, 1.1)}`,
  );
  if (twoFigures)
    console.log(
      `  two processes: p50 ${twoFigures.p50.toFixed(1)} ms, p99 ${twoFigures.p99.toFixed(1)} ms (goal ≤ 150 ms); ${vsFloor(twoFigures, 1.15)}`,
    );
  console.log(`  load average at the end: ${load()}`);
  if (one.missing || twoFigures?.missing) {
    console.error('some deliveries never arrived');
    process.exitCode = 1;
  }
} finally {
  for (const t of targets) await t.close();
}
