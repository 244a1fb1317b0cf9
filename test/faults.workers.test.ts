// `kiln serve --workers 2` while workers die (#26.5): the primary holds the port, so it never refuses a
// connection while it lives; a request whose worker is killed is reset at once (never left hanging); with
// every worker down a connection waits for one, or gets a 503 `no-worker`; a crash loop backs off and is
// logged; scheduled backups go on in the replacement of the worker that took them; SIGTERM still ends
// everything. Workers need Redis: PostgreSQL + Redis pass only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnKiln, type ChildKiln } from './support/child.ts';
import { instance } from './support/instance.ts';
import { storage } from './support/kiln.ts';
import { until } from './support/wait.ts';

const skip = storage !== 'postgres' && 'workers need PostgreSQL + Redis (the scale-out configuration)';
/** A request not answered nor reset by then is hung: far beyond any answer, even on a loaded machine. */
const HUNG_MS = 20_000;

type Outcome = { kind: 'answered'; status: number; code?: string } | { kind: 'reset' | 'refused' | 'hung' };

/** One request on a connection of its own. */
function once(
  port: number,
  host: string,
  p: string,
  opts: { method?: string; body?: string; cookie?: string; documentUrl?: string } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        path: p,
        method: opts.method ?? 'GET',
        agent: false,
        headers: {
          host,
          ...(opts.cookie ? { cookie: opts.cookie } : {}),
          ...(opts.body ? { 'content-type': 'text/plain', 'document-url': `http://${host}${opts.documentUrl}` } : {}),
        },
        timeout: HUNG_MS,
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let code: string | undefined;
          try {
            code = JSON.parse(text).code;
          } catch {}
          resolve({ kind: 'answered', status: res.statusCode ?? 0, code });
        });
        res.on('error', () => resolve({ kind: 'reset' }));
      },
    );
    req.on('timeout', () => {
      resolve({ kind: 'hung' });
      req.destroy();
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ kind: err.code === 'ECONNREFUSED' ? 'refused' : 'reset' }),
    );
    req.end(opts.body);
  });
}

/** The primary's worker processes (its children). */
function workerPids(kiln: ChildKiln): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(kiln.child.pid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('kiln serve --workers 2 under load: killed workers are replaced (backups go on), no connection is refused or left hanging, every request is answered or reset', {
  skip,
  timeout: 180_000,
}, async (t) => {
  // Scheduled backups are taken by the worker in slot 0, whichever process that is by now.
  const backups = mkdtempSync(path.join(os.tmpdir(), 'kiln-worker-backups-'));
  const i = await instance({ BACKUP_DIR: backups, BACKUP_EVERY: '5s', BACKUP_KEEP: '100' });
  const kiln = await spawnKiln(i.env, { args: ['--workers', '2'] });
  // The clients stop at the end, or when the test fails (so a failure does not keep the file running).
  let stop = false;
  try {
    await until(() => kiln.output().includes('running with 2 workers'), { what: 'both workers ready' });
    const token = i.owner(kiln.port).jar.header(i.host);
    const outcomes: Outcome[] = [];
    let n = 0;
    // Four clients, each a GET of the document or a save, one after another, each on a new connection.
    const loop = async () => {
      while (!stop) {
        const save = ++n % 2 === 0;
        outcomes.push(
          await once(kiln.port, i.host, save ? '/_/save' : i.doc, {
            cookie: token,
            ...(save ? { method: 'POST', body: `<html><body>save ${n}</body></html>`, documentUrl: i.doc } : {}),
          }),
        );
      }
    };
    const loops = [loop(), loop(), loop(), loop()];
    const answered = (status: number) => outcomes.filter((o) => o.kind === 'answered' && o.status === status).length;

    // One worker killed: the other serves, and a replacement comes.
    await until(() => answered(200) >= 20, { what: 'requests served', timeout: 60_000 });
    const [first, second] = workerPids(kiln);
    const killed = [first];
    process.kill(first, 'SIGKILL');
    await until(() => workerPids(kiln).length === 2 && !workerPids(kiln).includes(first), {
      what: 'a replacement worker',
      timeout: 60_000,
    });
    // Both killed at once: nobody serves for a while, yet the port stays open; connections wait.
    const before = answered(200);
    await until(() => answered(200) >= before + 20, { what: 'the replacement serving', timeout: 60_000 });
    const bothKilledAt = Date.now();
    for (const pid of workerPids(kiln)) {
      killed.push(pid);
      process.kill(pid, 'SIGKILL');
    }
    const afterBoth = outcomes.length;
    await until(() => workerPids(kiln).length === 2 && !workerPids(kiln).includes(second), {
      what: 'two new workers',
      timeout: 60_000,
    });
    await until(() => outcomes.slice(afterBoth).filter((o) => o.kind === 'answered' && o.status === 200).length >= 20, {
      what: 'requests served after every worker died',
      timeout: 60_000,
    });
    await until(() => readdirSync(backups).some((n) => statSync(path.join(backups, n)).mtimeMs > bothKilledAt), {
      what: 'a scheduled backup after every worker was replaced',
      timeout: 60_000,
    });
    stop = true;
    await Promise.all(loops);

    const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
    const statuses = [
      ...new Set(outcomes.flatMap((o) => (o.kind === 'answered' ? [`${o.status} ${o.code ?? ''}`] : []))),
    ];
    const summary = `${outcomes.length} requests: ${count('answered')} answered (${statuses.join(', ')}), ${count('reset')} reset, ${count('refused')} refused, ${count('hung')} hung`;
    t.diagnostic(summary);
    assert.equal(count('refused'), 0, `no connection refused while the primary lives; ${summary}`);
    assert.equal(count('hung'), 0, `no request left hanging; ${summary}`);
    // Answers are the document, a save, or (every worker down for longer than a connection waits) no-worker.
    for (const o of outcomes)
      if (o.kind === 'answered')
        assert.ok(o.status === 200 || (o.status === 503 && o.code === 'no-worker'), `unexpected answer; ${summary}`);
    // Each death was logged with the pause before its replacement (the log comes through a pipe: waited for).
    const logged = (pid: number) =>
      new RegExp(`worker ${pid} ended \\(SIGKILL\\) after \\d+ s; starting another in [\\d.]+ s`).test(kiln.output());
    try {
      await until(() => killed.every(logged), { what: `the deaths of ${killed.join(', ')} in the log` });
    } finally {
      t.diagnostic(kiln.output().replace(/\n/g, ' | '));
    }

    // SIGTERM ends the primary and its workers, exiting 0 once no worker is left.
    await kiln.kill();
    assert.deepEqual({ code: kiln.child.exitCode, signal: kiln.child.signalCode }, { code: 0, signal: null });
  } finally {
    stop = true;
    await kiln.kill();
    await i.cleanup();
    rmSync(backups, { recursive: true, force: true });
  }
});

test('kiln serve --workers 2 whose workers cannot start: the port stays open and answers 503 no-worker, restarts back off, SIGTERM ends it', {
  skip,
  timeout: 300_000,
}, async () => {
  const i = await instance();
  // Workers die at start (nothing listens on port 9 for PostgreSQL); the primary itself needs no database.
  const env = { ...i.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none' };
  const kiln = await spawnKiln(env, { args: ['--workers', '2'] });
  try {
    const answer = await once(kiln.port, i.host, i.doc);
    assert.deepEqual(answer, { kind: 'answered', status: 503, code: 'no-worker' });
    // The pause before each new start grows while workers keep dying young.
    await until(() => /starting another in [2-9]\d* s \(\d+ workers in a row died/.test(kiln.output()), {
      what: 'a longer pause in the crash loop',
      // Each worker's start is a second or more of CPU: on a loaded machine the deaths that lengthen the pause come slowly.
      timeout: 240_000,
    });
    await kiln.kill();
    assert.deepEqual({ code: kiln.child.exitCode, signal: kiln.child.signalCode }, { code: 0, signal: null });
  } finally {
    await kiln.kill();
    await i.cleanup();
  }
});
