// Operations figures (#14):
//  1. GET requests/s of a 100 KB document with `kiln serve --workers 1` and `--workers 2` (SQLite +
//     Redis, then PostgreSQL + Redis), and their ratio (goal ≥ 1.6 on 2 cores). autocannon runs in this process, on the same
//     machine: on 2 cores it takes CPU from the workers, which the ratio includes.
//  2. Upload throughput per blob store (filesystem, PostgreSQL, S3 through s3rver on loopback): 1 MB
//     files through POST /_/upload, 4 at a time.
//  3. Backup time and size for 1,000 documents (and 100 uploads), SQLite and PostgreSQL.
//
// Settings: BENCH_SECONDS (10), BENCH_CONNECTIONS (50), BENCH_UPLOADS (60).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { spawnKiln } from '../test/support/child.ts';
import { freshPostgres, startKiln, type TestKiln } from '../test/support/kiln.ts';
import { startS3 } from '../test/support/s3.ts';
import { signedIn, newPerson, actingAs } from '../test/support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createPerson } from '../src/accounts/people.ts';
import { storeUpload } from '../src/uploads/upload.ts';
import { loadConfig } from '../src/config.ts';
import { closeServices, createServices } from '../src/server.ts';
import { takeBackup } from '../src/backup/backup.ts';
import { cpuSeconds, document100k } from './http.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 60);
const REDIS = process.env.KILN_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function workers(storage: 'sqlite' | 'postgres') {
  const pg = storage === 'postgres' ? await freshPostgres() : null;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-workers-'));
  const env = { DATA_DIR: dataDir, REDIS_URL: REDIS, LOG_LEVEL: 'silent', ...(pg ? { DATABASE_URL: pg.url } : {}) };
  const s = await createServices(loadConfig(env));
  const person = await createPerson(s, newPerson({ plan: 'maker' }));
  await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'w.html',
    html: document100k(),
  });
  await closeServices(s);
  const host = `${person.username}.kiln.localhost:8080`;
  const results: Record<number, number> = {};
  const cpu: Record<number, { server: number; generator: number }> = {};
  try {
    for (const n of [1, 2]) {
      const kiln = await spawnKiln(env, { args: ['--workers', String(n)] });
      try {
        const run = (duration: number) =>
          autocannon({
            url: `http://127.0.0.1:${kiln.port}/w.html`,
            headers: { host },
            connections: CONNECTIONS,
            duration,
          });
        await run(3);
        // CPU counted per process (Kiln's primary and its workers from /proc; the load generator is this
        // process): on 2 cores the generator takes a share, so requests/s alone cannot say whether a second
        // worker adds capacity, but the server's CPU per request can.
        const server0 = cpuSeconds(kiln.child.pid!);
        const gen0 = process.cpuUsage();
        const r = await run(SECONDS);
        const gen = process.cpuUsage(gen0);
        if (r.non2xx > 0) throw new Error(`${r.non2xx} answers were not 2xx`);
        results[n] = r.requests.average;
        cpu[n] = {
          server: ((cpuSeconds(kiln.child.pid!) - server0) / r.requests.total) * 1e6,
          generator: (gen.user + gen.system) / 1e6 / SECONDS,
        };
        console.log(
          `GET 100 KB (${storage} + Redis), ${n} worker${n > 1 ? 's' : ''}: ${Math.round(r.requests.average)} req/s (p99 ${r.latency.p99} ms); ` +
            `server CPU ${cpu[n].server.toFixed(0)} µs/req (all its processes), ${((cpu[n].server * r.requests.average) / 1e6).toFixed(2)} cores busy; load generator ${cpu[n].generator.toFixed(2)} cores`,
        );
      } finally {
        await kiln.kill();
      }
    }
    const ratio = results[2] / results[1];
    const perRequest = cpu[2].server / cpu[1].server;
    // What the server could answer on this machine's cores if the generator were elsewhere.
    const capacity = (n: number) => (Math.min(n, os.cpus().length) * 1e6) / cpu[n].server;
    console.log(
      `workers, CPU per request (${storage}): 2 ÷ 1 = ${perRequest.toFixed(2)}× (a second worker adds capacity while this stays near 1); ` +
        `capacity with the generator elsewhere: 1 worker ${capacity(1).toFixed(0)} req/s (one core), 2 workers ${capacity(2).toFixed(0)} req/s (two cores)`,
    );
    console.log(
      `workers 2 ÷ 1 (${storage}): ${ratio.toFixed(2)}× (goal ≥ 1.6×; ${ratio >= 1.6 ? 'met' : 'NOT met'}); load average ${os.loadavg()[0].toFixed(2)}`,
    );
  } finally {
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function uploads() {
  const s3 = await startS3('bench');
  try {
    for (const [name, env] of [
      ['filesystem', {}],
      ['postgres', { BLOB_STORE: 'postgres' }],
      ['s3', s3.env],
    ] as Array<[string, Record<string, string>]>) {
      const pg = name === 'postgres' ? await freshPostgres() : null;
      let kiln: TestKiln | null = null;
      try {
        kiln = await startKiln({ env: { ...env, ...(pg ? { DATABASE_URL: pg.url } : {}) } });
        const main = kiln.client();
        const me = await signedIn(kiln, main, { plan: 'maker' });
        await createNode(await actingAs(kiln.services, me.id), {
          ownerId: me.id,
          parentId: 0,
          type: 'site',
          name: `u-${me.username}.html`,
          html: '<html></html>',
        });
        const host = kiln.hostOf(me.username);
        const doc = main.on(host);
        const page = `http://${host}/u-${me.username}.html`;
        const files = Array.from({ length: UPLOADS }, () => randomBytes(1024 * 1024).toString('base64'));
        const t0 = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            while (next < files.length) {
              const body = files[next++];
              const r = await doc.post(
                '/_/upload',
                { fileName: 'f.bin', fileBody: body },
                { headers: { 'page-url': page } },
              );
              if (r.status !== 200) throw new Error(`upload: ${r.status} ${r.text}`);
            }
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        console.log(
          `upload 1 MB files to ${name}: ${(UPLOADS / seconds).toFixed(1)} files/s, ${(UPLOADS / seconds).toFixed(1)} MB/s`,
        );
      } finally {
        await kiln?.stop();
        await pg?.drop();
      }
    }
  } finally {
    await s3.stop();
  }
}

async function backups() {
  for (const kind of ['sqlite', 'postgres']) {
    const pg = kind === 'postgres' ? await freshPostgres() : null;
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-backup-'));
    const dest = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-backups-'));
    const s = await createServices(
      loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...(pg ? { DATABASE_URL: pg.url } : {}) }),
    );
    try {
      const person = await createPerson(s, newPerson({ plan: 'maker' }));
      const page = (i: number) =>
        `<!DOCTYPE html><html><body><h1>Document ${i}</h1>${'<p>Some words of a page.</p>'.repeat(100)}</body></html>`;
      for (let i = 0; i < 1000; i++)
        await createNode(await actingAs(s, person.id), {
          ownerId: person.id,
          parentId: 0,
          type: 'site',
          name: `b-${person.username}-${i}.html`,
          html: page(i),
        });
      for (let i = 0; i < 100; i++)
        await storeUpload(s, {
          ownerId: person.id,
          plan: 'maker',
          parentId: 0,
          parentPath: '',
          fileName: `f${i}.bin`,
          bytes: randomBytes(20_000),
        });
      const t0 = performance.now();
      const { manifest } = await takeBackup(s, dest);
      const ms = performance.now() - t0;
      console.log(
        `backup of 1,000 documents + 100 uploads (${kind}): ${Math.round(ms)} ms, ${(manifest.bytes / 1024 / 1024).toFixed(1)} MB`,
      );
    } finally {
      await closeServices(s);
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(dest, { recursive: true, force: true });
    }
  }
}

await workers('sqlite');
await workers('postgres');
await uploads();
await backups();
