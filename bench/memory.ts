// Memory of one Kiln process around one large document (#26.7): a 3.8 MB page of 200,000 elements is opened
// in the code editor, saved, extracted (`?data=`) and served; then the process idles. Prints the resident
// set size (VmRSS) before, after each step, and after 40 s idle. Goal: back within 50 MB of where it was.
//
// Then many documents (#29.3, #44.8): 100 documents of the same size are served one after another from a fresh
// process, once to their owner (with the session cookie) and once, in another fresh process, to cookie-less visitors;
// RSS after the first, the tenth and the hundredth, and after the idle wait, with what each cache holds. Every cache
// is bounded in bytes (src/limits.ts `memory`), so RSS levels off, not grows by 3.8 MB per document: at a higher
// level for visitors, whose answers the hot path keeps too (its bound, 256 MB, is the largest).
//
// Then, with BENCH_SOAK_S set (0: skipped), a soak (#44.8): 200 open streams and a mixed load (the owner's GETs of
// 300 documents of 100 KB and saves of 20 of them, fanned out to the streams; visitors' GETs and `?data=` of another
// account's 300) for that many seconds, RSS and each cache's bytes every BENCH_SAMPLE_S (30): what fills the process's memory, and whether it
// stops.
//
// Kiln runs as its own process (`node bin/kiln.js serve`) on SQLite. Settings: BENCH_IDLE_S (40), BENCH_SOAK_S (0),
// BENCH_SAMPLE_S (30).
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { closeServices, createServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { sessionsFor, actingAs } from '../test/support/people.ts';
import { spawnKiln } from '../test/support/child.ts';
import { metricsText } from './http.ts';

const ROOT = 'kiln.localhost:8080';
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 40);
const GOAL_MB = 50;
const MANY = 100;
const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 0);
const SAMPLE_S = Number(process.env.BENCH_SAMPLE_S ?? 30);
const SOAK_DOCS = 300;
const SOAK_STREAMS = 200;
/** Documents the soak saves (and whose streams it holds open). */
const SOAK_SAVED = 20;

const items = Array.from({ length: 100_000 }, (_, i) => `<li data-i="${i}"><b>item ${i}</b></li>`).join('\n');
const page = (mark: string) =>
  `<!DOCTYPE html>\n<html>\n<head><title>Big ${mark}</title></head>\n<body>\n<ul>\n${items}\n</ul>\n</body>\n</html>\n`;

/** RSS split as the kernel counts it: anonymous memory (heaps, buffers, malloc) and mapped files (code, libraries). */
const rssSplit = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return `anon ${kb('RssAnon').toFixed(0)}, files ${kb('RssFile').toFixed(0)}, threads ${/Threads:\s+(\d+)/.exec(status)?.[1]}`;
};
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** One request to the document host; without `token`, as a cookie-less visitor. */
function request(
  port: number,
  o: { method?: string; path: string; token?: string; body?: string; name?: string; user?: string },
): Promise<number> {
  const host = `${o.user ?? 'big'}.${ROOT}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: o.method ?? 'GET',
        path: o.path,
        headers: {
          host,
          ...(o.token ? { cookie: `__Host-auth_token=${o.token}` } : {}),
          ...(o.body
            ? {
                'content-type': 'text/plain;charset=UTF-8',
                'document-url': `http://${host}/${o.name ?? 'big.html'}`,
                'x-kiln-editor': '1',
              }
            : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          if (res.statusCode! >= 400 && text.length < 500) text += c;
        });
        res.on('end', () => {
          if (res.statusCode! >= 400) console.log(`${o.path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
          resolve(res.statusCode!);
        });
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** What the process holds, from its metrics (src/metrics): V8's heap (used of committed), Buffers and other memory
 *  outside it; the rest of RSS is code, native libraries (SQLite's page cache) and memory malloc keeps. */
async function heldBy(port: number): Promise<string> {
  const text = await metricsText(port, ROOT);
  const metric = (name: string) =>
    Number(new RegExp(`^kiln_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  const heapUsed = metric('nodejs_heap_size_used_bytes');
  const heapTotal = metric('nodejs_heap_size_total_bytes');
  const external = metric('nodejs_external_memory_bytes');
  return `V8 heap ${heapUsed.toFixed(0)} MB used of ${heapTotal.toFixed(0)} MB, outside it ${external.toFixed(0)} MB; caches: ${cachesIn(text)}`;
}

/** What each cache holds (kiln_cache_bytes{cache}), in MB. */
function cachesIn(metrics: string): string {
  return [...metrics.matchAll(/^kiln_cache_bytes\{cache="([^"]+)"\} (\S+)$/gm)]
    .map(([, cache, bytes]) => `${cache} ${(Number(bytes) / 2 ** 20).toFixed(0)}`)
    .join(', ');
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-mem-'));
try {
  const env = { DATA_DIR: dir };
  const s = await createServices(loadConfig({ ...env, ROOT_DOMAIN: ROOT, LOG_LEVEL: 'silent' }));
  let token: string;
  try {
    const person = await createPerson(s, {
      email: 'big@example.com',
      username: 'big',
      password: 'bench-password-x9-long',
      plan: 'maker',
    });
    token = (await sessionsFor(s.database.db, s.config, person.id, person.username)).host;
    await createNode(await actingAs(s, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name: 'big.html',
      html: page('0'),
    });
    for (let i = 1; i <= MANY; i++)
      await createNode(await actingAs(s, person.id), {
        ownerId: person.id,
        parentId: 0,
        type: 'site',
        name: `many-${i}.html`,
        html: page(`m${i}`),
      });
    if (SOAK_S > 0) {
      // The owner's documents (saved, streamed, read with the cookie), and another account's that visitors read: an
      // account's saves drop the hot path's answers of that account.
      const other = await createPerson(s, {
        email: 'visited@example.com',
        username: 'visited',
        password: 'bench-password-x9-long',
        plan: 'maker',
      });
      for (let i = 0; i < SOAK_DOCS; i++)
        for (const p of [person, other])
          await createNode(await actingAs(s, p.id), {
            ownerId: p.id,
            parentId: 0,
            type: 'site',
            name: `${p === person ? 'soak' : 'visit'}-${i}.html`,
            html: soakPage(i, 0),
          });
    }
  } finally {
    await closeServices(s);
  }
  const kiln = await spawnKiln({ ...env, ROOT_DOMAIN: ROOT });
  const pid = kiln.child.pid!;
  try {
    const mb = (v: number) => `${v.toFixed(0).padStart(4)} MB`;
    for (let i = 0; i < 20; i++) await request(kiln.port, { path: '/_/health', token });
    const before = rss(pid);
    console.log(`document: ${(Buffer.byteLength(page('0')) / 2 ** 20).toFixed(1)} MB, 200,000 elements`);
    console.log(`before                       ${mb(before)}  (${await heldBy(kiln.port)})`);
    const step = async (label: string, run: () => Promise<number>) => {
      const status = await run();
      console.log(`${label.padEnd(28)} ${mb(rss(pid))}  (HTTP ${status})`);
    };
    await step('opened in the code editor', () => request(kiln.port, { path: '/_/edit?path=big.html', token }));
    const editor = rss(pid) - before;
    console.log(
      `${''.padEnd(28)} the editor page added ${editor.toFixed(0)} MB (goal ≤ ${GOAL_MB} MB: ${editor <= GOAL_MB ? 'met' : 'NOT met'})`,
    );
    await step('saved from the editor', () =>
      request(kiln.port, { method: 'POST', path: '/_/save', token, body: page('1') }),
    );
    await step('extracted (?data=)', () =>
      request(kiln.port, { path: `/big.html?data=${encodeURIComponent('{n: title}')}`, token }),
    );
    await step('served', () => request(kiln.port, { path: '/big.html', token }));
    const peak = rss(pid);
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const idle = rss(pid);
    console.log(`after ${IDLE_S} s idle              ${mb(idle)}  (${await heldBy(kiln.port)})`);
    console.log(
      `back within ${(idle - before).toFixed(0)} MB of before (peak +${(peak - before).toFixed(0)} MB); goal ≤ ${GOAL_MB} MB: ${idle - before <= GOAL_MB ? 'met' : 'NOT met'}`,
    );
  } finally {
    await kiln.kill('SIGTERM');
  }
  // Many documents, each served once, in a process of their own: to their owner, then to visitors.
  for (const who of ['owner', 'visitors'] as const) {
    const many = await spawnKiln({ ...env, ROOT_DOMAIN: ROOT });
    const manyPid = many.child.pid!;
    try {
      for (let i = 0; i < 20; i++) await request(many.port, { path: '/_/health', token });
      const start = rss(manyPid);
      const line: string[] = [`before ${start.toFixed(0)} MB`];
      for (let i = 1; i <= MANY; i++) {
        const status = await request(many.port, {
          path: `/many-${i}.html`,
          token: who === 'owner' ? token : undefined,
        });
        if (status !== 200) throw new Error(`GET /many-${i}.html answered ${status}`);
        if (i === 1 || i === 10 || i === MANY) line.push(`${i} served ${rss(manyPid).toFixed(0)} MB`);
      }
      const served = await metricsText(many.port, ROOT);
      await new Promise((r) => setTimeout(r, IDLE_S * 1000));
      line.push(`after ${IDLE_S} s idle ${rss(manyPid).toFixed(0)} MB`);
      console.log(
        `${MANY} documents of this size, each served once to ${who === 'owner' ? 'their owner (cookie)' : 'cookie-less visitors'}: ${line.join(', ')}`,
      );
      console.log(`${''.padEnd(4)}caches (MB) once all were served: ${cachesIn(served)}`);
    } finally {
      await many.kill('SIGTERM');
    }
  }
  if (SOAK_S > 0) await soak(env, token);
  else console.log('soak: skipped (BENCH_SOAK_S=600 runs ten minutes of it)');
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** A 100 KB document of the soak, edit `n`. */
function soakPage(i: number, n: number): string {
  const items = Array.from(
    { length: 1_000 },
    (_, k) => `<li data-k="${k}">soak ${i} item ${k} ${k === n % 1_000 ? `edit ${n}` : ''}</li>`,
  );
  return `<!DOCTYPE html>\n<html>\n<head><title>Soak ${i}</title></head>\n<body>\n<ul>\n${items.join('\n')}\n</ul>\n</body>\n</html>\n`;
}

/** 200 open streams and a mixed load for SOAK_S seconds; RSS and each cache's bytes every SAMPLE_S. */
async function soak(env: Record<string, string>, token: string) {
  const kiln = await spawnKiln({ ...env, ROOT_DOMAIN: ROOT, MAX_STREAMS_PER_ADDRESS: String(SOAK_STREAMS + 100) });
  const pid = kiln.child.pid!;
  const host = `big.${ROOT}`;
  const sockets: net.Socket[] = [];
  try {
    for (let i = 0; i < 20; i++) await request(kiln.port, { path: '/_/health', token });
    const sample = async (label: string) => {
      const text = await metricsText(kiln.port, ROOT);
      const metric = (name: string) =>
        Number(new RegExp(`^kiln_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
      console.log(
        `${label.padEnd(12)} RSS ${rss(pid).toFixed(0).padStart(4)} MB (${rssSplit(pid)})  V8 heap ${metric('nodejs_heap_size_used_bytes').toFixed(0)} of ${metric('nodejs_heap_size_total_bytes').toFixed(0)} MB, outside it ${metric('nodejs_external_memory_bytes').toFixed(0)} MB; caches (MB): ${cachesIn(text)}`,
      );
    };
    await sample('before');
    // Anonymous viewers' saved lanes on the documents the soak saves.
    for (let i = 0; i < SOAK_STREAMS; i++) {
      const url = encodeURIComponent(`http://${host}/soak-${i % SOAK_SAVED}.html`);
      const sock = net.connect(kiln.port, '127.0.0.1');
      sock.on('data', () => {});
      sock.on('error', () => {});
      sock.write(
        `GET /_/sync?document-url=${url}&lane=saved HTTP/1.1\r\nHost: ${host}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      sockets.push(sock);
    }
    await sample('200 streams');
    const ends = Date.now() + SOAK_S * 1000;
    const edits = new Map<number, number>();
    const counts = { visitor: 0, owner: 0, data: 0, save: 0, failed: 0 };
    const one = async () => {
      const r = Math.random();
      const i = Math.floor(Math.random() * SOAK_DOCS);
      let status: number;
      if (r < 0.5) {
        status = await request(kiln.port, { path: `/visit-${i}.html`, user: 'visited' });
        counts.visitor++;
      } else if (r < 0.7) {
        status = await request(kiln.port, { path: `/soak-${i}.html`, token });
        counts.owner++;
      } else if (r < 0.9) {
        // Rules that differ by name only: as many answers as the cache holds.
        const rule = JSON.stringify({
          [`t${Math.floor(Math.random() * 100)}`]: 'title',
          items: ['li', { k: '@data-k', text: '@textContent' }],
        });
        status = await request(kiln.port, {
          path: `/visit-${i}.html?data=${encodeURIComponent(rule)}`,
          user: 'visited',
        });
        counts.data++;
      } else {
        const d = i % SOAK_SAVED;
        const n = (edits.get(d) ?? 0) + 1;
        edits.set(d, n);
        status = await request(kiln.port, {
          method: 'POST',
          path: '/_/save',
          token,
          body: soakPage(d, n),
          name: `soak-${d}.html`,
        });
        counts.save++;
      }
      if (status >= 400) counts.failed++;
    };
    let nextSample = Date.now() + SAMPLE_S * 1000;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (Date.now() < ends) await one();
      }).concat([
        (async () => {
          while (Date.now() < ends) {
            await new Promise((r) => setTimeout(r, Math.max(0, Math.min(nextSample, ends) - Date.now())));
            if (Date.now() >= nextSample) {
              nextSample += SAMPLE_S * 1000;
              await sample(`${Math.round((Date.now() - started) / 1000)} s`);
            }
          }
        })(),
      ]),
    );
    await sample('end');
    for (const sock of sockets) sock.destroy();
    // Idle: the extraction threads end (30 s), V8 gives back what it does not use (src/idle-heap.ts, 10 s), and
    // the caches keep what they hold: what is left is theirs and the process's own.
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    await sample(`${IDLE_S} s idle`);
    console.log(
      `soak ${SOAK_S} s: ${counts.visitor} visitor GETs, ${counts.owner} owner GETs, ${counts.data} ?data=, ${counts.save} saves (${counts.failed} answered ≥ 400), ${SOAK_STREAMS} streams`,
    );
  } finally {
    for (const sock of sockets) sock.destroy();
    await kiln.kill('SIGTERM');
  }
}
