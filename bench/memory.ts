// Memory of one Kiln process around one large document (#26.7): a 3.8 MB page of 200,000 elements is opened
// in the code editor, saved, extracted (`?data=`) and served; then the process idles. Prints the resident
// set size (VmRSS) before, after each step, and after 40 s idle. Goal: back within 50 MB of where it was.
//
// Then many documents (#29.3): 100 documents of the same size are served one after another from a fresh process;
// RSS after the first, the tenth and the hundredth, and after the idle wait (the document cache is bounded in bytes,
// so it should level off, not grow by 3.8 MB per document).
//
// Kiln runs as its own process (`node bin/kiln.js serve`) on SQLite. Settings: BENCH_IDLE_S (40).
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { closeServices, createServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { sessionsFor } from '../test/support/people.ts';
import { spawnKiln } from '../test/support/child.ts';
import { metricsText } from './http.ts';

const ROOT = 'kiln.localhost:8080';
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 40);
const GOAL_MB = 50;
const MANY = 100;

const items = Array.from({ length: 100_000 }, (_, i) => `<li data-i="${i}"><b>item ${i}</b></li>`).join('\n');
const page = (mark: string) =>
  `<!DOCTYPE html>\n<html>\n<head><title>Big ${mark}</title></head>\n<body>\n<ul>\n${items}\n</ul>\n</body>\n</html>\n`;

const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

function request(
  port: number,
  o: { method?: string; path: string; token: string; body?: string; name?: string },
): Promise<number> {
  const host = `big.${ROOT}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: o.method ?? 'GET',
        path: o.path,
        headers: {
          host,
          cookie: `__Host-auth_token=${o.token}`,
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
  return `V8 heap ${heapUsed.toFixed(0)} MB used of ${heapTotal.toFixed(0)} MB, outside it ${external.toFixed(0)} MB`;
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
    await createNode(s, person.id, {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name: 'big.html',
      html: page('0'),
    });
    for (let i = 1; i <= MANY; i++)
      await createNode(s, person.id, {
        ownerId: person.id,
        parentId: 0,
        type: 'site',
        name: `many-${i}.html`,
        html: page(`m${i}`),
      });
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
  // Many documents, each served once, in a process of their own.
  const many = await spawnKiln({ ...env, ROOT_DOMAIN: ROOT });
  const manyPid = many.child.pid!;
  try {
    for (let i = 0; i < 20; i++) await request(many.port, { path: '/_/health', token });
    const start = rss(manyPid);
    const line: string[] = [`before ${start.toFixed(0)} MB`];
    for (let i = 1; i <= MANY; i++) {
      const status = await request(many.port, { path: `/many-${i}.html`, token });
      if (status !== 200) throw new Error(`GET /many-${i}.html answered ${status}`);
      if (i === 1 || i === 10 || i === MANY) line.push(`${i} served ${rss(manyPid).toFixed(0)} MB`);
    }
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    line.push(`after ${IDLE_S} s idle ${rss(manyPid).toFixed(0)} MB`);
    console.log(`${MANY} documents of this size, each served once: ${line.join(', ')}`);
  } finally {
    await many.kill('SIGTERM');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
