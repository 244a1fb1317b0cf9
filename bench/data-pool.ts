// The data API cannot block the server: `node --import tsx bench/data-pool.ts` (also run by `npm run bench`).
//
// Kiln runs as a child process (SQLite in a temporary folder). One account has pathological documents (100,000
// nested <div>s, 2.5 MB each, which htmlparser2 takes seconds to parse); another has a normal ~110 KB page
// (bench/rules.ts). Measures p99 latency of GETs of the normal page with autocannon, alone and while a client
// hammers the pathological documents' `?data=` with rules never asked before (every request a result-cache
// miss, round-robin over several documents), in paired rounds; prints both, their ratio (goal: within 2×), and
// what the hammering requests were answered. Each round also measures the anchor: the same hammering of a path
// with no document (404 at once, no extraction), which is what the HTTP load alone costs on this machine.
//
// Settings (environment): BENCH_CONNECTIONS (10, for the normal GETs), BENCH_SECONDS (8), BENCH_ROUNDS (5),
// BENCH_HAMMER (8 requests in flight), BENCH_DEEP_DOCUMENTS (4), BENCH_CONTROL=1 (the control: the hammer asks
// `?data=` of a path with no document instead, answered 404 without any extraction, to tell what hammering
// costs through HTTP alone), BENCH_NODE_ARGS (flags for Kiln's node, e.g. --cpu-prof).
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { spawnKiln, type ChildKiln } from '../test/support/child.ts';
import { benchDocument } from './rules.ts';
import { actingAs } from '../test/support/people.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const HAMMER = Number(process.env.BENCH_HAMMER ?? 8);
const DEEP_DOCUMENTS = Number(process.env.BENCH_DEEP_DOCUMENTS ?? 4);
const CONTROL = process.env.BENCH_CONTROL === '1';

const ROOT_DOMAIN = 'kiln.localhost:8080';
const NORMAL_HOST = `bob.${ROOT_DOMAIN}`;
const DEEP_HOST = `mallory.${ROOT_DOMAIN}`;
const DEPTH = 100_000;
const deep = (i: number) =>
  `<!doctype html><html><body><!-- ${i} -->${'<div class="level">'.repeat(DEPTH)}deep${'</div>'.repeat(DEPTH)}</body></html>`;

async function prepare(env: Record<string, string>) {
  const s = await createServices(loadConfig(env));
  try {
    const bob = await createPerson(s, {
      email: 'bob@example.com',
      username: 'bob',
      password: 'Bench-password-7f3k2q',
      plan: 'maker',
    });
    await createNode(await actingAs(s, bob.id), {
      ownerId: bob.id,
      parentId: 0,
      type: 'site',
      name: 'page.html',
      html: benchDocument(),
    });
    const mallory = await createPerson(s, {
      email: 'mallory@example.com',
      username: 'mallory',
      password: 'Bench-password-7f3k2q',
      plan: 'maker',
    });
    for (let i = 0; i < DEEP_DOCUMENTS; i++) {
      await createNode(await actingAs(s, mallory.id), {
        ownerId: mallory.id,
        parentId: 0,
        type: 'site',
        name: `deep-${i}.html`,
        html: deep(i),
      });
    }
  } finally {
    await closeServices(s);
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function get(port: number, host: string, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, agent, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

type Figures = { rps: number; p50: number; p99: number };

/** CONNECTIONS clients GET the normal page one request after another for SECONDS; latency measured to the
 *  microsecond (autocannon's whole milliseconds make a 1 ms p99 and a 1.9 ms one look the same). */
async function normalGets(port: number): Promise<Figures> {
  const times: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        const res = await get(port, NORMAL_HOST, '/page.html');
        times.push(performance.now() - t);
        if (res.status !== 200) throw new Error(`normal GET answered ${res.status}`);
      }
    }),
  );
  times.sort((a, b) => a - b);
  return {
    rps: times.length / SECONDS,
    p50: times[Math.floor(times.length / 2)],
    p99: times[Math.floor(times.length * 0.99)],
  };
}

/** Hammers the pathological documents' `?data=` until `stop()`; what they were answered. */
function hammer(port: number, control = CONTROL) {
  let running = true;
  let n = 0;
  const codes = new Map<string, number>();
  const times: number[] = [];
  const loops = Array.from({ length: HAMMER }, async (_, k) => {
    while (running) {
      const i = n++;
      const rules = encodeURIComponent(`{deepest: 'div:not(:has(div))', n${k}x${i}: 'div@class'}`);
      const t = performance.now();
      const res = await get(
        port,
        DEEP_HOST,
        `/${control ? 'missing' : 'deep'}-${i % DEEP_DOCUMENTS}.html?data=${rules}`,
      );
      times.push(performance.now() - t);
      const code = res.status === 200 ? '200' : `${res.status} ${(JSON.parse(res.body) as { code: string }).code}`;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      times.sort((a, b) => a - b);
      return {
        n: times.length,
        codes,
        p50: times[Math.floor(times.length / 2)],
        p99: times[Math.floor(times.length * 0.99)],
      };
    },
  };
}

const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(6)} req/s   p50 ${f.p50.toFixed(1).padStart(6)} ms   p99 ${f.p99.toFixed(1).padStart(6)} ms`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-pool-'));
  const env: Record<string, string> = { DATA_DIR: dir, ROOT_DOMAIN, LOG_LEVEL: 'silent' };
  let kiln: ChildKiln | undefined;
  try {
    await prepare(env);
    kiln = await spawnKiln(env, { nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ') ?? [] });
    const port = kiln.port;
    console.log(
      `normal page ${(benchDocument().length / 1024).toFixed(1)} KB on ${NORMAL_HOST}; ${DEEP_DOCUMENTS} documents of ${DEPTH} nested divs ` +
        `(${(deep(0).length / 1e6).toFixed(1)} MB) on ${DEEP_HOST}; ${os.cpus().length} cores, Kiln one process`,
    );
    // Warm up: the page, and the pool's threads on the normal page's data.
    for (let i = 0; i < 50; i++) await get(port, NORMAL_HOST, '/page.html');
    for (let i = 0; i < 20; i++)
      await get(port, NORMAL_HOST, `/page.html?data=${encodeURIComponent(`{t: title, n${i}: h1}`)}`);
    const first = await get(port, DEEP_HOST, `/deep-0.html?data=${encodeURIComponent('{a: div}')}`);
    console.log(`a pathological ?data= answers: ${first.status} ${first.body}`);

    const alone: Figures[] = [];
    const loaded: Figures[] = [];
    const control: Figures[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const a = await normalGets(port);
      const h = hammer(port);
      const b = await normalGets(port);
      const hs = await h.stop();
      // The anchor: the same hammering answered 404 without any extraction (what the HTTP load alone costs).
      const hc = hammer(port, true);
      const c = await normalGets(port);
      await hc.stop();
      alone.push(a);
      loaded.push(b);
      control.push(c);
      console.log(`round ${round}: normal GETs (${CONNECTIONS} clients × ${SECONDS} s)`);
      console.log(`  alone                                 ${fmt(a)}`);
      console.log(
        `  while ${HAMMER} clients hammer ?data=${CONTROL ? ' (404)' : '      '}  ${fmt(b)}   p99 ratio ${(b.p99 / a.p99).toFixed(2)}×`,
      );
      console.log(`  while the same hammer gets 404s       ${fmt(c)}   p99 ratio ${(c.p99 / a.p99).toFixed(2)}×`);
      console.log(
        `  hammering: ${hs.n} requests (${(hs.n / SECONDS).toFixed(0)}/s), p50 ${hs.p50.toFixed(1)} ms, p99 ${hs.p99.toFixed(1)} ms; answers ` +
          [...hs.codes].map(([c, k]) => `${c} ×${k}`).join(', '),
      );
    }
    const pa = median(alone.map((f) => f.p99));
    const pl = median(loaded.map((f) => f.p99));
    const pc = median(control.map((f) => f.p99));
    console.log(
      `median p99: alone ${pa.toFixed(2)} ms, under pathological load ${pl.toFixed(2)} ms, ratio ${(pl / pa).toFixed(2)}× (goal ≤ 2×: ${pl <= 2 * pa ? 'met' : 'NOT met'}); ` +
        `anchor, the same load answered 404 without extraction: ${pc.toFixed(2)} ms, ${(pc / pa).toFixed(2)}×`,
    );
    console.log(
      `load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores (autocannon and the hammer run on the same machine)`,
    );
  } finally {
    await kiln?.kill();
    rmSync(dir, { recursive: true, force: true });
    agent.destroy();
  }
}

await main();
