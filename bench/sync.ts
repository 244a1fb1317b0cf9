// The sync API: listing an account of 10,000 nodes (goal: at most 150 ms) and conditional PUT
// throughput (writes/s), on SQLite and — when reachable — PostgreSQL.
//
// Kiln runs as a child process (`node bin/kiln.js serve`, LOG_LEVEL=silent); the tree is written
// straight into its database beforehand (100 folders holding 9,900 documents and uploads), then the
// listing is timed over HTTP with a keep-alive connection: warm-up rounds, then the median and p95
// of the timed rounds. The PUT figure: BENCH_SYNC_WRITERS (8) tools each keep rewriting their own
// 10 KB document for BENCH_SYNC_SECONDS (5) s, each PUT with the If-Match its previous answer gave.
//
// Settings: BENCH_SYNC_NODES (10000), BENCH_SYNC_ROUNDS (20), BENCH_SYNC_WRITERS, BENCH_SYNC_SECONDS,
// BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test; `none` to skip PostgreSQL).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { checksum } from '../src/core/checksum.ts';
import { spawnKiln } from '../test/support/child.ts';
import { closeConnections, cpuMs, machineLine, phase, refusals, request } from './_measure.ts';

const NODES = Number(process.env.BENCH_SYNC_NODES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_SYNC_ROUNDS ?? 20);
const WRITERS = Number(process.env.BENCH_SYNC_WRITERS ?? 8);
const SECONDS = Number(process.env.BENCH_SYNC_SECONDS ?? 5);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const GOAL_MS = 150;
const ROOT_DOMAIN = 'kiln.localhost:8080';

/** A request to the main app (its host), with the key. */
const call = (port: number, method: string, url: string, key: string, body?: unknown, headers = {}) =>
  request(port, method, url, key, body, { host: ROOT_DOMAIN, ...headers });

/** Fills one account with NODES nodes: 100 folders, then documents and uploads spread over them. */
async function populate(
  env: Record<string, string>,
): Promise<{ key: string; docs: Array<{ id: number; etag: string }> }> {
  const s = await createServices(loadConfig(env));
  try {
    const person = await createPerson(s, {
      email: 'bench-sync@example.com',
      username: 'benchsync',
      password: 'Bench-sync-password-9x',
      plan: 'maker',
      emailConfirmed: true,
    });
    const { key } = await createSyncKey(s, person.id);
    const now = new Date().toISOString();
    const base = {
      owner_id: person.id,
      visibility: 'public' as const,
      enable_signups: 0 as const,
      share_token: null,
      share_enabled: 0 as const,
      source_node_id: null,
      content_type: null,
      blob_sha256: null,
      created_at: now,
      modified_at: now,
      last_synced_at: null,
      saved_by_account_id: person.id,
      saved_by_writer: null,
    };
    const docs: Array<{ id: number; etag: string }> = [];
    await s.database.db.transaction().execute(async (trx) => {
      const folders: Array<{ id: number; name: string }> = [];
      for (let f = 0; f < 100; f++) {
        const name = `folder-${f}`;
        const row = await trx
          .insertInto('nodes')
          .values({ ...base, parent_id: 0, type: 'folder', name, name_key: name, path: '', checksum: null, size: 0 })
          .returning('id')
          .executeTakeFirstOrThrow();
        folders.push({ id: row.id, name });
      }
      const rows = [];
      for (let i = 0; i < NODES - folders.length; i++) {
        const folder = folders[i % folders.length];
        const isDoc = i % 3 !== 0;
        const name = isDoc ? `doc-${i}.html` : `file-${i}.png`;
        rows.push({
          ...base,
          parent_id: folder.id,
          type: isDoc ? ('site' as const) : ('upload' as const),
          name,
          name_key: name,
          path: folder.name,
          checksum: checksum(name),
          size: 1000 + i,
        });
      }
      for (let i = 0; i < rows.length; i += 500)
        await trx
          .insertInto('nodes')
          .values(rows.slice(i, i + 500))
          .execute();
      // The writers' documents, with real content.
      for (let w = 0; w < WRITERS; w++) {
        const name = `writer-${w}.html`;
        const html = Buffer.from(`<!doctype html><html><body><p>writer ${w}</p>${'x'.repeat(10_000)}</body></html>`);
        const etag = checksum(html);
        const row = await trx
          .insertInto('nodes')
          .values({
            ...base,
            parent_id: 0,
            type: 'site',
            name,
            name_key: name,
            path: '',
            checksum: etag,
            size: html.length,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await trx.insertInto('node_contents').values({ node_id: row.id, base: html }).execute();
        docs.push({ id: row.id, etag });
      }
    });
    return { key, docs };
  } finally {
    await closeServices(s);
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];

async function run(label: string, env: Record<string, string>) {
  const { key, docs } = await populate(env);
  const kiln = await spawnKiln({ ...env, ROOT_DOMAIN, LOG_LEVEL: 'silent' });
  try {
    // Listing.
    let count = 0;
    for (let i = 0; i < 3; i++) {
      const r = await call(kiln.port, 'GET', '/_/sync/nodes', key);
      if (r.status !== 200) throw new Error(`listing answered ${r.status}: ${r.text.slice(0, 200)}`);
      count = JSON.parse(r.text).nodes.length;
    }
    const times: number[] = [];
    let bytes = 0;
    const cpu0 = cpuMs(kiln.child.pid);
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      const r = await call(kiln.port, 'GET', '/_/sync/nodes', key);
      times.push(performance.now() - t0);
      bytes = r.text.length;
    }
    const cpu1 = cpuMs(kiln.child.pid);
    times.sort((a, b) => a - b);
    const median = pct(times, 0.5);
    const cpu =
      cpu0 !== null && cpu1 !== null
        ? ` Kiln's CPU time per listing ${((cpu1 - cpu0) / ROUNDS).toFixed(0)} ms (what an idle machine's latency approaches);`
        : '';
    console.log(
      `${label}: listing of ${count.toLocaleString('en')} nodes (${(bytes / 1024 / 1024).toFixed(1)} MB JSON): median ${median.toFixed(1)} ms, p95 ${pct(times, 0.95).toFixed(1)} ms, best ${times[0].toFixed(1)} ms over ${ROUNDS} rounds;${cpu} goal ≤ ${GOAL_MS} ms: ${median <= GOAL_MS ? 'met' : 'NOT met'}`,
    );

    // Conditional PUT throughput: each tool rewrites its own document with the If-Match its last answer gave.
    const etags = docs.map((d) => d.etag);
    const p = await phase({ pid: kiln.child.pid, workers: docs.length, seconds: SECONDS }, async (w, n) => {
      const content = `<!doctype html><html><body><p>writer ${w} edit ${n}</p>${'x'.repeat(10_000)}</body></html>`;
      const r = await call(
        kiln.port,
        'PUT',
        `/_/sync/nodes/${docs[w].id}/content`,
        key,
        { content },
        { 'if-match': `"${etags[w]}"` },
      );
      if (r.status !== 200) return r.status;
      etags[w] = JSON.parse(r.text).etag;
      return true;
    });
    console.log(
      `${label}: conditional PUT of a 10 KB document: ${p.perSecond.toFixed(0)} writes/s (${p.calls} writes by ${docs.length} tools in ${p.seconds.toFixed(1)} s, each with If-Match; ${refusals(p) || '0 refused'})${p.cpuPerCall === null ? '' : `, Kiln's CPU ${p.cpuPerCall.toFixed(2)} ms per write`}`,
    );
  } finally {
    await kiln.kill();
  }
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-sync-'));
console.log(machineLine());
try {
  await run('SQLite', { DATA_DIR: dataDir });
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

if (PG_URL !== 'none') {
  const name = `kiln_bench_sync_${randomBytes(4).toString('hex')}`;
  let admin: pg.Client | null = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    console.log(`PostgreSQL: skipped (${(err as Error).message})`);
    admin = null;
  }
  if (admin) {
    const pgDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-sync-pg-'));
    try {
      await run('PostgreSQL', { DATA_DIR: pgDir, DATABASE_URL: PG_URL.replace(/\/[^/]*$/, `/${name}`) });
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      rmSync(pgDir, { recursive: true, force: true });
    }
  }
}
closeConnections();
