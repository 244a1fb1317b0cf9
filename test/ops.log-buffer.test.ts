// A log reader that stalls costs log lines, never unbounded memory (#44.6): nobody reads Kiln's stdout while
// requests with long URLs each log a line. What waits to be written stays under the bound (the metrics
// say how much waits), lines past it are dropped and counted in the metrics, and once the reader is back
// the log says how many were lost: the same number.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnKiln } from './support/child.ts';
import { storage } from './support/kiln.ts';
import { until } from './support/wait.ts';
import { limits } from '../src/limits.ts';

const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });

function get(port: number, url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { port, host: '127.0.0.1', path: url, agent, headers: { host: 'kiln.localhost:8080' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
  });
}

/** One sample of a metric without labels (or NaN). */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : Number.NaN;
}

test('a stalled log reader: lines past the bound are dropped and counted, in the metrics and then in the log', {
  timeout: 300_000,
  skip: storage === 'postgres' && 'the log pipe does not depend on the storage: once, in the SQLite pass',
}, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-logbuf-'));
  const kiln = await spawnKiln({ DATA_DIR: dir, LOG_LEVEL: 'info' });
  try {
    const metrics = async () => {
      const r = await get(kiln.port, '/_/metrics');
      assert.equal(r.status, 200, r.text);
      return r.text;
    };
    const before = await metrics();
    assert.equal(metric(before, 'kiln_log_lines_dropped_total'), 0, 'nothing dropped yet');

    // Nobody reads the log from now on.
    kiln.child.stdout!.removeAllListeners('data');
    kiln.child.stdout!.pause();
    // Each request logs a line of about 8 KB (its URL): 2000 of them are four times the bound.
    const pad = 'x'.repeat(8000);
    let most = 0;
    for (let round = 0; round < 40; round++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => get(kiln.port, `/_/health?round=${round}&i=${i}&pad=${pad}`)),
      );
      assert.ok(
        answers.every((a) => a.status === 200),
        'requests are answered while the log waits',
      );
      if (round % 5 === 4) most = Math.max(most, metric(await metrics(), 'kiln_log_buffered_bytes'));
    }
    const stalled = await metrics();
    const dropped = metric(stalled, 'kiln_log_lines_dropped_total');
    const buffered = metric(stalled, 'kiln_log_buffered_bytes');
    most = Math.max(most, buffered);
    t.diagnostic(
      `RSS ${Math.round(metric(before, 'kiln_process_resident_memory_bytes') / 2 ** 20)} MB before, ${Math.round(
        metric(stalled, 'kiln_process_resident_memory_bytes') / 2 ** 20,
      )} MB with the log stalled; at most ${most} bytes waited; ${dropped} lines dropped`,
    );
    assert.ok(dropped > 0, `lines were dropped (${dropped})`);
    assert.ok(most <= limits.logBufferBytes, `what waits stays under the bound: ${most} ≤ ${limits.logBufferBytes}`);
    // Most of the bound is used before anything is dropped.
    assert.ok(most > limits.logBufferBytes / 2, `the buffer filled before dropping (${most})`);

    // The reader is back: the buffer drains, and one line says how many were lost.
    let out = '';
    kiln.child.stdout!.on('data', (d) => (out += d));
    kiln.child.stdout!.resume();
    const reports = await until(
      () => {
        const lines = out
          .split('\n')
          .filter((l) => l.includes('"dropped"'))
          .map((l) => JSON.parse(l) as { dropped: number; msg: string; level: number });
        return lines.length > 0 && lines;
      },
      { what: 'the log to say how many lines were dropped', timeout: 60_000, every: 50 },
    );
    assert.equal(reports.length, 1, 'said once');
    assert.match(reports[0].msg, /log lines were dropped/);
    assert.equal(reports[0].level, 40, 'a warning');
    const after = await metrics();
    assert.equal(metric(after, 'kiln_log_lines_dropped_total'), reports[0].dropped, 'the log and the metrics agree');
    assert.ok(reports[0].dropped >= dropped);
    // Lines are written again.
    await get(kiln.port, '/_/health?after=drain');
    await until(() => out.includes('after=drain'), { what: 'a request line after the drain', timeout: 30_000 });
  } finally {
    agent.destroy();
    await kiln.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
