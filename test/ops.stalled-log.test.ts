// SIGTERM ends Kiln within its deadline whatever its log destination does (#26.6): here nobody reads its
// stdout any more (a log pipe whose reader stalled): what the log holds can never be written, and the
// flush at exit would wait forever. The deadline runs on a thread of its own, which a blocked main thread
// cannot hold up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnKiln } from './support/child.ts';
import { storage } from './support/kiln.ts';
import { until } from './support/wait.ts';

/** One request that gives up after `ms` (a blocked server answers nothing): its status, or 0. */
function probe(port: number, ms: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(
      { port, host: '127.0.0.1', path: '/_/health', headers: { host: 'kiln.localhost:8080' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.setTimeout(ms, () => {
      req.destroy();
      resolve(0);
    });
    req.on('error', () => resolve(0));
  });
}

test('SIGTERM with a stalled log pipe: the process still ends, within its deadline', {
  timeout: 120_000,
  skip: storage === 'postgres' && 'the log pipe does not depend on the storage: once, in the SQLite pass',
}, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-stalled-'));
  const kiln = await spawnKiln({ DATA_DIR: dir, LOG_LEVEL: 'info' });
  try {
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    kiln.child.once('exit', (code, signal) => (exit = { code, signal }));
    // Nobody reads the log from now on.
    kiln.child.stdout!.removeAllListeners('data');
    kiln.child.stdout!.pause();
    // Requests log a line each: far more than a pipe holds (64 KB) is waiting to be written.
    for (let i = 0; i < 40; i++) await Promise.all(Array.from({ length: 50 }, () => probe(kiln.port, 5_000)));
    kiln.child.kill('SIGTERM');
    await until(() => exit !== null, { what: 'the process to end after SIGTERM', timeout: 30_000, every: 50 });
    assert.ok(exit, 'ended');
  } finally {
    if (kiln.child.exitCode === null && kiln.child.signalCode === null) kiln.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
