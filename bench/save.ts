// Saves per second through HTTP (POST /_/save, the full pipeline: version diff, content, checksum,
// activity line, events) for a 112 KB document with small edits, made down the list and (PostgreSQL and SQLite
// once more) all over the page. Goal: ≥ 600/s on SQLite and on PostgreSQL, and
// PostgreSQL within 15 % of SQLite in the same run.
//
// Kiln runs as its own process (`node bin/kiln.js serve`, as deployed), the clients here: SQLite (the
// embedded default) and PostgreSQL (a fresh database; skipped when unreachable). For comparison with
// earlier figures, the same load once more against a Kiln started inside this process, where the
// clients' work (building each edit of 112 KB, HTTP) shares Kiln's one thread — as this bench measured
// before.
// The data-clobber guard: the same load on the same page with an `api` rules tag (the guard compares each save's
// data, extracted in the pool, with what the page protects) against the page without one (the guard has nothing
// to do): goal, within 10 %. Saves are sent as hyperclayjs sends a person's edit (`Save-Trigger: user`).
// Also: the version storage of those saves as a share of full copies (goal ≤ 1%), and the slowest
// reconstruction of a recent version.
//
// Settings (environment): BENCH_SAVES (3000), BENCH_CONCURRENCY (4), BENCH_PG_URL, BENCH_NODE_ARGS (flags for the
// Kiln process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { closeServices, createServices, startServer } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { sessionsFor } from '../test/support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { versionContent } from '../src/save/history.ts';
import { spawnKiln } from '../test/support/child.ts';
import type { Services } from '../src/services.ts';
import { execFileSync } from 'node:child_process';
import { cpuSeconds, metricsText, ownCpuSeconds } from './http.ts';
import { countInstructions } from './instructions.ts';

const SAVES = Number(process.env.BENCH_SAVES ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const GOAL = 600;
const ROOT = 'kiln.localhost:8080';

const rows = Array.from(
  { length: 1300 },
  (_, i) => `    <li class="item" data-id="${i}"><span>Item number ${i}</span> <em>pending</em></li>\n`,
).join('');
const page = (head: string) =>
  `<!DOCTYPE html>\n<html>\n<head><title>Bench</title>${head}</head>\n<body>\n  <ul>\n${rows}  </ul>\n</body>\n</html>\n`;
const PLAIN = page('');
const GUARDED = page(
  '<script type="application/json" data-rules-name="api" data-rules-version="1">{"items": ".item span[]"}</script>',
);
let FIRST = PLAIN;

/** The person, session and document of a run, written straight into the storage. */
async function fixture(s: Services): Promise<{ token: string; nodeId: number }> {
  const person = await createPerson(s, {
    email: 'bench@example.com',
    username: 'bench',
    password: 'bench-password-x9-long',
    plan: 'maker',
  });
  const token = (await sessionsFor(s.database.db, s.config, person.id, person.username)).host;
  const node = await createNode(s, person.id, {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'bench.html',
    html: FIRST,
  });
  return { token, nodeId: node.id };
}

/** SAVES small edits from CONCURRENCY clients; returns saves per second, and the instructions the measured run
 *  retired on the machine and in the process `kilnPid` (when perf can count them). */
async function load(port: number, token: string, kilnPid?: number, spread = false) {
  const host = `bench.${ROOT}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const post = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/_/save',
          agent,
          headers: {
            host,
            cookie: `__Host-auth_token=${token}`,
            'content-type': 'text/plain;charset=UTF-8',
            'document-url': `http://${host}/bench.html`,
            'save-trigger': 'user',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let doc = FIRST;
  let n = 0;
  const edit = () => {
    // Down the list, one item after the other (a person working through it), or each edit ~600 items from the
    // last (edits all over the page: each PostgreSQL save then writes its whole content row, src/core/splice.ts).
    const i = spread ? (n++ * 617) % 1300 : n++ % 1300;
    doc = doc.replace(new RegExp(`(data-id="${i}"><span>Item number ${i}</span> <em>)[^<]*`), `$1done ${n}`);
    return doc;
  };
  // A short warm-up (JIT, caches), then the measured run.
  for (let i = 0; i < 50; i++) await post(edit());
  n = 0;
  const statements0 = await databaseStatements(port);
  const counting = await countInstructions({
    machine: 'machine',
    kiln: kilnPid === undefined ? [] : [kilnPid],
    clients: [process.pid],
  });
  const t0 = performance.now();
  let failures = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (n < SAVES) if ((await post(edit())) !== 200) failures++;
    }),
  );
  const perSecond = SAVES / ((performance.now() - t0) / 1000);
  const instructions = await counting.stop();
  const statements1 = await databaseStatements(port);
  agent.destroy();
  const statements = {
    awaited: (statements1.awaited - statements0.awaited) / SAVES,
    pipelined: (statements1.pipelined - statements0.pipelined) / SAVES,
  };
  return { perSecond, failures, instructions, statements };
}

/** The PostgreSQL statements Kiln has sent so far, from its metrics (src/metrics/metrics.ts). */
async function databaseStatements(port: number): Promise<{ awaited: number; pipelined: number }> {
  const text = await metricsText(port, ROOT);
  const sent = (kind: string) =>
    Number(new RegExp(`^kiln_database_statements_total\\{sent="${kind}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { awaited: sent('awaited'), pipelined: sent('pipelined') };
}

/** Version storage as a share of full copies, and the slowest read of the newest 40 versions. */
async function versionFigures(s: Services, nodeId: number) {
  const versions = await s.database.db
    .selectFrom('versions')
    .select(['id', 'html', 'diff_content', 'size'])
    .where('node_id', '=', nodeId)
    .execute();
  const stored = versions.reduce((sum, v) => sum + (v.html?.length ?? 0) + Buffer.byteLength(v.diff_content ?? ''), 0);
  const full = versions.reduce((sum, v) => sum + v.size, 0);
  let slowest = 0;
  for (const v of versions.slice(-40)) {
    const t = performance.now();
    await versionContent(s.database.db, v.id);
    slowest = Math.max(slowest, performance.now() - t);
  }
  return { count: versions.length, share: (stored / full) * 100, slowest };
}

/** One storage: fixture, Kiln as its own process, the load, the version figures. */
async function asProcess(label: string, env: Record<string, string>, first = PLAIN, spread = false) {
  FIRST = first;
  const fix = await withServices(env, fixture);
  const kiln = await spawnKiln(
    { ...env, ROOT_DOMAIN: ROOT },
    { nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ') ?? [] },
  );
  let r: Awaited<ReturnType<typeof load>>;
  const pg0 = env.DATABASE_URL ? postgresCpuSeconds() : NaN;
  const wal0 = env.DATABASE_URL ? await walPosition(env.DATABASE_URL) : null;
  let kilnCpu = NaN;
  try {
    const cpu0 = cpuSeconds(kiln.child.pid!);
    r = await load(kiln.port, fix.token, kiln.child.pid!, spread);
    kilnCpu = cpuSeconds(kiln.child.pid!) - cpu0;
  } finally {
    await kiln.kill('SIGTERM');
  }
  // The pool's backends end with Kiln; their CPU time then counts in the postmaster's children.
  await new Promise((res) => setTimeout(res, 500));
  const pgCpu = postgresCpuSeconds() - pg0;
  const walBytes = wal0 === null ? NaN : await walSince(env.DATABASE_URL, wal0);
  const v = await withServices(env, (s) => versionFigures(s, fix.nodeId));
  console.log(
    `${label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(5)} saves/s   (goal ≥ ${GOAL}: ${r.perSecond >= GOAL ? 'met' : 'NOT met'}; ${r.failures} failures)`,
  );
  console.log(
    `${''.padEnd(34)} version storage ${v.share.toFixed(2)}% of full copies for ${v.count} versions (goal ≤ 1%); slowest read of the newest 40 (query + gunzip + diff chain + SHA-256 check) ${v.slowest.toFixed(1)} ms`,
  );
  const per = (sec: number) => ((sec / (SAVES + 50)) * 1e6).toFixed(0);
  console.log(
    `${''.padEnd(34)} CPU per save: Kiln ${per(kilnCpu)} µs${Number.isNaN(pgCpu) ? '' : `, PostgreSQL ${per(pgCpu)} µs (every postgres process)`}`,
  );
  const ins = r.instructions;
  if (ins.machine !== null && ins.kiln !== null && ins.clients !== null) {
    const m = (n: number) => `${(n / SAVES / 1e6).toFixed(2)} M`;
    console.log(
      `${''.padEnd(34)} instructions per save (perf; the same on a slow or busy host): machine ${m(ins.machine)}, Kiln ${m(ins.kiln)}, clients ${m(ins.clients)}, the rest (${env.DATABASE_URL ? 'PostgreSQL, ' : ''}kernel, other processes) ${m(ins.machine - ins.kiln - ins.clients)}`,
    );
  }
  if (env.DATABASE_URL)
    console.log(
      `${''.padEnd(34)} PostgreSQL statements per save: ${(r.statements.awaited + r.statements.pipelined).toFixed(2)}, of which ${r.statements.awaited.toFixed(2)} round trips (the rest pipelined behind them)`,
    );
  if (!Number.isNaN(walBytes))
    console.log(
      `${''.padEnd(34)} WAL per save: ${(walBytes / (SAVES + 50) / 1024).toFixed(1)} KiB (the whole server's WAL over the run; full-page images after a checkpoint included)`,
    );
  FIRST = PLAIN;
  return r.perSecond;
}

/** The server's WAL position now. */
async function walPosition(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query('select pg_current_wal_lsn()::text as at')).rows[0].at;
  } finally {
    await c.end();
  }
}

/** Bytes of WAL the server wrote since `from`. */
async function walSince(url: string, from: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as n', [from])).rows[0].n);
  } finally {
    await c.end();
  }
}

/** CPU seconds of every postgres process on this machine so far (user + system, with the ended
 *  backends that the postmaster has reaped); NaN when ps cannot tell. */
function postgresCpuSeconds(): number {
  try {
    const pids = execFileSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' }).trim().split('\n');
    return pids.reduce((sum, pid) => sum + ownCpuSeconds(Number(pid), true), 0);
  } catch {
    return NaN;
  }
}

async function withServices<T>(env: Record<string, string>, fn: (s: Services) => Promise<T>): Promise<T> {
  const s = await createServices(loadConfig({ ...env, ROOT_DOMAIN: ROOT, LOG_LEVEL: 'silent' }));
  try {
    return await fn(s);
  } finally {
    await closeServices(s);
  }
}

async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> } | null> {
  const name = `kiln_bench_save_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    console.log(`PostgreSQL: skipped (${(err as Error).message})`);
    return null;
  } finally {
    await admin.end().catch(() => {});
  }
  return {
    url: PG_URL.replace(/\/[^/]*$/, `/${name}`),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-save-'));
  dirs.push(d);
  return d;
};
try {
  console.log(
    `document ${Buffer.byteLength(FIRST)} bytes (${(Buffer.byteLength(FIRST) / 1024).toFixed(0)} KiB), ${SAVES} saves with small edits, ${CONCURRENCY} concurrent clients; ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const plain = await asProcess('SQLite, Kiln its own process', { DATA_DIR: tmp() });
  const guarded = await asProcess('SQLite, the page guarded', { DATA_DIR: tmp() }, GUARDED);
  console.log(
    `${'data-clobber guard'.padEnd(34)} ${((guarded / plain) * 100).toFixed(0).padStart(5)} % of the unguarded page's saves/s (goal ≥ 90 %: ${guarded >= 0.9 * plain ? 'met' : 'NOT met'})`,
  );
  const db = await freshDatabase();
  if (db)
    try {
      const pg = await asProcess('PostgreSQL, Kiln its own process', { DATA_DIR: tmp(), DATABASE_URL: db.url });
      console.log(
        `${'PostgreSQL ÷ SQLite'.padEnd(34)} ${((pg / plain) * 100).toFixed(0).padStart(5)} % of SQLite's saves/s in this run (goal ≥ 85 %: ${pg >= 0.85 * plain ? 'met' : 'NOT met'})`,
      );
    } finally {
      await db.drop();
    }
  // The same with each edit far from the last: no splice, the whole row each save (as before splices).
  const spreadDb = await freshDatabase();
  if (spreadDb)
    try {
      const sqliteSpread = await asProcess('SQLite, edits far apart', { DATA_DIR: tmp() }, PLAIN, true);
      const pgSpread = await asProcess(
        'PostgreSQL, edits far apart',
        { DATA_DIR: tmp(), DATABASE_URL: spreadDb.url },
        PLAIN,
        true,
      );
      console.log(
        `${'PostgreSQL ÷ SQLite, edits far apart'.padEnd(34)} ${((pgSpread / sqliteSpread) * 100).toFixed(0).padStart(5)} % (goal ≥ 85 %: ${pgSpread >= 0.85 * sqliteSpread ? 'met' : 'NOT met'})`,
      );
    } finally {
      await spreadDb.drop();
    }
  // As measured before: Kiln inside this process, beside its clients.
  const running = await startServer(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: tmp(), ROOT_DOMAIN: ROOT, LOG_LEVEL: 'silent' }),
  );
  try {
    const fix = await fixture(running.services);
    const r = await load(Number(new URL(running.url).port), fix.token);
    console.log(
      `${'SQLite, Kiln inside the bench'.padEnd(34)} ${r.perSecond.toFixed(0).padStart(5)} saves/s   (the clients share Kiln's thread; earlier sessions' figures were measured so)`,
    );
  } finally {
    await running.close();
  }
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
