// Saves per second through HTTP (POST /_/save, the full pipeline: version diff, content, checksum,
// activity line, events) for a 112 KB document with small edits, made down the list and (PostgreSQL and SQLite
// once more) all over the page. Goal: ≥ 600/s on SQLite and on PostgreSQL, PostgreSQL within 15 % of SQLite
// with edits near each other and within 10 % with edits far apart.
//
// Kiln runs as its own process (`node bin/kiln.js serve`, as deployed), one per configuration, the clients here:
// SQLite (the embedded default) and PostgreSQL (a fresh database each; skipped when unreachable). The
// configurations run in rounds, as bench/http does, and each round in slices: a few dozen saves of each
// configuration in turn, the two of each ratio one right after the other (guarded, SQLite, PostgreSQL near;
// SQLite far, PostgreSQL far), the order reversed every other slice. A burst of other work on a shared machine then
// falls on the two of a pair alike; each ratio is taken within a round (its slices' saves over their seconds), and
// the figures printed are the medians of the rounds, with their middle half. (One run of each configuration for a
// few seconds moved its ratios by ±20 % between runs of one commit; seven rounds of 800 saves, each configuration
// seconds from its pair, by as much on a busy machine.) For comparison with earlier figures, one round against a
// Kiln started inside this process, where the clients' work (building each edit of 112 KB, HTTP) shares Kiln's
// one thread.
// The data-clobber guard: the same load on the same page with an `api` rules tag (the guard compares each save's
// data, extracted in the pool, with what the page protects) against the page without one (the guard has nothing
// to do): goal, within 10 %. Saves are sent as hyperclayjs sends a person's edit (`Save-Trigger: user`).
// Also: the version storage of those saves as a share of full copies (goal ≤ 1%), the slowest reconstruction of
// a recent version, Kiln's CPU and its PostgreSQL backends' CPU per save (/proc), and the WAL per save
// (pg_current_wal_lsn before and after each slice: the whole server's, so other databases' writes count in it).
//
// Settings (environment): BENCH_ROUNDS (21), BENCH_SAVES (200 a round), BENCH_SLICES (5 a round), BENCH_WARMUP (300),
// BENCH_CONCURRENCY (4), BENCH_PG_URL,
// BENCH_NODE_ARGS (flags for the Kiln processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { closeServices, createServices, startServer } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { sessionsFor, actingAs } from '../test/support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { versionContent } from '../src/save/history.ts';
import { spawnKiln } from '../test/support/child.ts';
import type { Services } from '../src/services.ts';
import { metricsText } from './http.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const PER_ROUND = Number(process.env.BENCH_SAVES ?? 200);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const SLICES = Number(process.env.BENCH_SLICES ?? 5);
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
  const node = await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'bench.html',
    html: FIRST,
  });
  return { token, nodeId: node.id };
}

/** A writer of small edits to the bench document from CONCURRENCY clients over keep-alive connections; each
 *  `run(count)` sends the next `count` edits of its sequence (the sequence goes on from one round to the next). */
function saver(port: number, token: string, first: string, spread: boolean) {
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
  let doc = first;
  let n = 0;
  const edit = () => {
    // Down the list, one item after the other (a person working through it), or each edit ~600 items from the
    // last (edits all over the page: the one splice spans them, so the whole row is written again).
    const i = spread ? (n * 617) % 1300 : n % 1300;
    n++;
    doc = doc.replace(new RegExp(`(data-id="${i}"><span>Item number ${i}</span> <em>)[^<]*`), `$1done ${n}`);
    return doc;
  };
  return {
    /** Sends `count` saves; their rate, the seconds they took and how many were not answered 200. */
    async run(count: number) {
      let sent = 0;
      let failures = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (sent < count) {
            sent++;
            if ((await post(edit())) !== 200) failures++;
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      return { perSecond: count / seconds, seconds, failures };
    },
    close: () => agent.destroy(),
  };
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

/** One configuration of the bench: its storage and page, Kiln as its own process on it, its figures per round. */
interface Target {
  label: string;
  env: Record<string, string>;
  nodeId: number;
  kiln: Awaited<ReturnType<typeof spawnKiln>>;
  saves: ReturnType<typeof saver>;
  /** A connection to its database kept for the measures (PostgreSQL), so that taking them starts no backend. */
  probe: pg.Client | null;
  rounds: Array<{
    perSecond: number;
    kilnUs: number;
    pgUs: number;
    walBytes: number;
    statements: number;
    trips: number;
  }>;
  failures: number;
}

async function start(label: string, env: Record<string, string>, first = PLAIN, spread = false): Promise<Target> {
  FIRST = first;
  const fix = await withServices(env, fixture);
  FIRST = PLAIN;
  const kiln = await spawnKiln(
    { ...env, ROOT_DOMAIN: ROOT },
    // A machine busy with other work can take more than the usual 30 s to start one.
    { nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ') ?? [], timeoutMs: 180_000 },
  );
  const saves = saver(kiln.port, fix.token, first, spread);
  const probe = env.DATABASE_URL ? new pg.Client({ connectionString: env.DATABASE_URL }) : null;
  await probe?.connect();
  // A warm-up (JIT, caches, the splices' steady state) before the measured rounds.
  await saves.run(WARMUP);
  return { label, env, nodeId: fix.nodeId, kiln, saves, probe, rounds: [], failures: 0 };
}

/** What a configuration's slices of one round add up to. */
interface Sums {
  saves: number;
  seconds: number;
  kilnCpu: number;
  pgCpu: number;
  wal: number;
  awaited: number;
  pipelined: number;
}

/** One slice of a round for a configuration: `count` saves, added to `sums` with Kiln's CPU, its PostgreSQL
 *  backends' CPU, the server's WAL and the statements sent while they ran. The slice ends when Kiln has finished
 *  the work its saves left (the guard's extractions run in its pool after the answer): that time counts in the
 *  slice, and none of it in the next configuration's. */
async function slice(t: Target, count: number, sums: Sums): Promise<void> {
  const c = t.probe;
  const pid = t.kiln.child.pid!;
  const backends0 = c ? await backendCpu(c) : null;
  const wal0 = c ? await walPosition(c) : null;
  const statements0 = c ? await databaseStatements(t.kiln.port) : null;
  const cpu0 = runSeconds(pid);
  const r = await t.saves.run(count);
  const after = await finished(pid);
  sums.kilnCpu += runSeconds(pid) - cpu0;
  sums.saves += count;
  sums.seconds += r.seconds + after;
  t.failures += r.failures;
  if (c && wal0 && backends0 && statements0) {
    sums.wal += await walSince(c, wal0);
    for (const [pid, sec] of await backendCpu(c)) sums.pgCpu += sec - (backends0.get(pid) ?? 0);
    const s1 = await databaseStatements(t.kiln.port);
    sums.awaited += s1.awaited - statements0.awaited;
    sums.pipelined += s1.pipelined - statements0.pipelined;
  }
}

/** One round: SLICES slices of each configuration in `sequence` (its pairs next to each other), the order reversed
 *  every other slice, so that a burst of other work on the machine falls on the two of a pair alike; then each
 *  configuration's figures for the round. */
async function round(sequence: Target[]): Promise<void> {
  const sums = new Map(
    sequence.map((t) => [t, { saves: 0, seconds: 0, kilnCpu: 0, pgCpu: 0, wal: 0, awaited: 0, pipelined: 0 }]),
  );
  const backwards = [...sequence].reverse();
  for (let k = 0; k < SLICES; k++)
    for (const t of k % 2 ? backwards : sequence) await slice(t, Math.ceil(PER_ROUND / SLICES), sums.get(t)!);
  for (const t of sequence) {
    const x = sums.get(t)!;
    const pg = t.probe !== null;
    t.rounds.push({
      perSecond: x.saves / x.seconds,
      kilnUs: (x.kilnCpu / x.saves) * 1e6,
      pgUs: pg ? (x.pgCpu / x.saves) * 1e6 : NaN,
      walBytes: pg ? x.wal / x.saves : NaN,
      statements: pg ? (x.awaited + x.pipelined) / x.saves : NaN,
      trips: pg ? x.awaited / x.saves : NaN,
    });
  }
}

/** Seconds a process's threads have run so far (/proc's schedstat: nanoseconds, where /proc/<pid>/stat counts
 *  10 ms ticks, a tenth of a slice's CPU). */
function runSeconds(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`))
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // ended meanwhile
    }
  return ns / 1e9;
}

/** Waits until the process has been all but idle for 20 ms (at most 10 s); the seconds it worked on till then. */
async function finished(pid: number): Promise<number> {
  const t0 = performance.now();
  let last = runSeconds(pid);
  for (let i = 0; i < 500; i++) {
    const at = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = runSeconds(pid);
    if (now - last < 0.001) return (at - t0) / 1000;
    last = now;
  }
  return (performance.now() - t0) / 1000;
}

/** CPU seconds so far of each PostgreSQL backend serving the database `c` is connected to (Kiln's pool: the
 *  bench's own connection and other databases' backends are left out, so other work on the server does not
 *  count). */
async function backendCpu(c: pg.Client): Promise<Map<number, number>> {
  const { rows } = await c.query(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows)
    try {
      cpu.set(pid, runSeconds(pid));
    } catch {
      // ended meanwhile
    }
  return cpu;
}

const median = (xs: number[]) => {
  const v = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

/** A configuration's medians over the rounds, and its version figures. */
async function report(t: Target) {
  const m = (k: keyof Target['rounds'][number]) => median(t.rounds.map((r) => r[k]));
  const perSecond = m('perSecond');
  console.log(
    `${t.label.padEnd(34)} ${perSecond.toFixed(0).padStart(5)} saves/s median (middle half ${middleHalf(
      t.rounds.map((r) => r.perSecond),
    )
      .map((x) => x.toFixed(0))
      .join('–')}; goal ≥ ${GOAL}: ${perSecond >= GOAL ? 'met' : 'NOT met'}; ${t.failures} failures)`,
  );
  console.log(
    `${''.padEnd(34)} CPU per save: Kiln ${m('kilnUs').toFixed(0)} µs (middle half ${middleHalf(
      t.rounds.map((r) => r.kilnUs),
    )
      .map((x) => x.toFixed(0))
      .join('–')})${
      t.env.DATABASE_URL
        ? `, its PostgreSQL backends ${m('pgUs').toFixed(0)} µs (middle half ${middleHalf(t.rounds.map((r) => r.pgUs))
            .map((x) => x.toFixed(0))
            .join('–')})`
        : ''
    }`,
  );
  if (t.env.DATABASE_URL) {
    console.log(
      `${''.padEnd(34)} PostgreSQL statements per save: ${m('statements').toFixed(2)}, of which ${m('trips').toFixed(2)} round trips (the rest pipelined behind them)`,
    );
    const wal = t.rounds.map((r) => r.walBytes / 1024);
    console.log(
      `${''.padEnd(34)} WAL per save: ${median(wal).toFixed(1)} KiB median, ${Math.min(...wal).toFixed(1)} KiB least (middle half ${middleHalf(
        wal,
      )
        .map((w) => w.toFixed(1))
        .join('–')}; the server's WAL, other databases' included)`,
    );
  }
  const v = await withServices(t.env, (s) => versionFigures(s, t.nodeId));
  console.log(
    `${''.padEnd(34)} version storage ${v.share.toFixed(2)}% of full copies for ${v.count} versions (goal ≤ 1%); slowest read of the newest 40 (query + gunzip + diff chain + SHA-256 check) ${v.slowest.toFixed(1)} ms`,
  );
}

/** The median of per-round ratios a ÷ b of saves/s, with the middle half of them and each round's. */
function ratio(label: string, a: Target, b: Target, goal: number) {
  const rs = a.rounds.map((r, i) => r.perSecond / b.rounds[i].perSecond);
  const r = median(rs);
  const pct = (x: number) => (x * 100).toFixed(0);
  console.log(
    `${label.padEnd(34)} ${pct(r).padStart(5)} % median of the rounds' ratios (middle half ${middleHalf(rs).map(pct).join('–')} %; goal ≥ ${goal * 100} %: ${r >= goal ? 'met' : 'NOT met'}; rounds ${rs.map(pct).join(', ')} %)`,
  );
  // The same by CPU per save (Kiln's, and its PostgreSQL backends'): on a machine busy with other work the rates
  // follow the share of the cores each run got, the CPU each save took much less.
  const cpu = (x: Target['rounds'][number]) => x.kilnUs + (Number.isNaN(x.pgUs) ? 0 : x.pgUs);
  const cs = a.rounds.map((x, i) => cpu(b.rounds[i]) / cpu(x));
  console.log(
    `${''.padEnd(34)} ${pct(median(cs)).padStart(5)} % by CPU per save (the inverse ratio of Kiln's + PostgreSQL's CPU per save; middle half ${middleHalf(cs).map(pct).join('–')} %)`,
  );
}

/** The first and third quartiles. */
function middleHalf(xs: number[]): [number, number] {
  const v = [...xs].sort((a, b) => a - b);
  const at = (q: number) => v[Math.min(v.length - 1, Math.round(q * (v.length - 1)))];
  return [at(0.25), at(0.75)];
}

/** The server's WAL position now. */
async function walPosition(c: pg.Client): Promise<string> {
  return (await c.query('select pg_current_wal_lsn()::text as at')).rows[0].at;
}

/** Bytes of WAL the server wrote since `from`. */
async function walSince(c: pg.Client, from: string): Promise<number> {
  return Number((await c.query('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as n', [from])).rows[0].n);
}

async function withServices<T>(env: Record<string, string>, fn: (s: Services) => Promise<T>): Promise<T> {
  const s = await createServices(loadConfig({ ...env, ROOT_DOMAIN: ROOT, LOG_LEVEL: 'silent' }));
  try {
    return await fn(s);
  } finally {
    await closeServices(s);
  }
}

async function freshDatabase(tag: string): Promise<{ url: string; drop(): Promise<void> } | null> {
  const name = `kiln_bench_save_${tag}_${process.pid}`;
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
const targets: Target[] = [];
const databases: Array<{ drop(): Promise<void> }> = [];
try {
  console.log(
    `document ${Buffer.byteLength(FIRST)} bytes (${(Buffer.byteLength(FIRST) / 1024).toFixed(0)} KiB), ${ROUNDS} rounds of ${PER_ROUND} saves with small edits per configuration after ${WARMUP} to warm up, ${CONCURRENCY} concurrent clients; ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const plain = await start('SQLite, edits near each other', { DATA_DIR: tmp() });
  const guarded = await start('SQLite, the page guarded', { DATA_DIR: tmp() }, GUARDED);
  const far = await start('SQLite, edits far apart', { DATA_DIR: tmp() }, PLAIN, true);
  targets.push(plain, guarded, far);
  const near = await freshDatabase('near');
  const apart = near && (await freshDatabase('far'));
  let pgNear: Target | null = null;
  let pgFar: Target | null = null;
  if (near && apart) {
    databases.push(near, apart);
    pgNear = await start('PostgreSQL, edits near each other', { DATA_DIR: tmp(), DATABASE_URL: near.url });
    pgFar = await start('PostgreSQL, edits far apart', { DATA_DIR: tmp(), DATABASE_URL: apart.url }, PLAIN, true);
    targets.push(pgNear, pgFar);
  }
  // Rounds of slices: the two of each ratio one right after the other (plain sits between the guarded page and
  // PostgreSQL near, the two far-apart ones together), the order reversed every other slice so that neither of a
  // pair always goes first; the ratios are taken within each round, then their median.
  const sequence = [guarded, plain, pgNear, far, pgFar].filter((t): t is Target => t !== null);
  const short = new Map(sequence.map((t, k) => [t, ['guarded', 'near', 'PG near', 'far', 'PG far'][k]]));
  console.log(`  saves/s in each round: ${targets.map((t) => `${short.get(t)} = ${t.label}`).join('; ')}`);
  for (let i = 0; i < ROUNDS; i++) {
    await round(i % 2 ? [...sequence].reverse() : sequence);
    const pct = (a: Target, b: Target) => `${((a.rounds[i].perSecond / b.rounds[i].perSecond) * 100).toFixed(0)} %`;
    console.log(
      `  round ${String(i + 1).padStart(2)}: ${targets.map((t) => `${short.get(t)} ${t.rounds[i].perSecond.toFixed(0)}`).join(', ')}; guarded ÷ unguarded ${pct(guarded, plain)}${pgNear && pgFar ? `, PostgreSQL ÷ SQLite near ${pct(pgNear, plain)}, far apart ${pct(pgFar, far)}` : ''}; load ${os.loadavg()[0].toFixed(1)}`,
    );
  }
  for (const t of targets) await t.kiln.kill('SIGTERM');
  for (const t of targets) await report(t);
  ratio('data-clobber guard', guarded, plain, 0.9);
  if (pgNear && pgFar) {
    ratio('PostgreSQL ÷ SQLite, near', pgNear, plain, 0.85);
    ratio('PostgreSQL ÷ SQLite, far apart', pgFar, far, 0.9);
  }
  // As measured before: Kiln inside this process, beside its clients.
  const running = await startServer(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: tmp(), ROOT_DOMAIN: ROOT, LOG_LEVEL: 'silent' }),
  );
  try {
    const fix = await fixture(running.services);
    const saves = saver(Number(new URL(running.url).port), fix.token, FIRST, false);
    await saves.run(WARMUP);
    const r = await saves.run(PER_ROUND);
    saves.close();
    console.log(
      `${'SQLite, Kiln inside the bench'.padEnd(34)} ${r.perSecond.toFixed(0).padStart(5)} saves/s   (one round; the clients share Kiln's thread; earlier sessions' figures were measured so)`,
    );
  } finally {
    await running.close();
  }
} finally {
  for (const t of targets) {
    t.saves.close();
    await t.probe?.end();
    await t.kiln.kill('SIGTERM');
  }
  for (const d of databases) await d.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
