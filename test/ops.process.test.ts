// Running Kiln as an operator does: `kiln serve` as a real process — one log line per request, mail
// links at warn, Prometheus metrics for this machine (or a token), graceful SIGTERM (in-flight saves
// finish, streams are told to reconnect, exit within 10 s), and backups taken while serving, restored into
// an empty instance, and scheduled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, mkdirSync, rmSync, existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { kilnRun, spawnKiln } from './support/child.ts';
import { instance } from './support/instance.ts';
import { Client } from './support/client.ts';
import { SseClient } from './support/sse.ts';
import { freshPostgres, storage } from './support/kiln.ts';
import { until } from './support/wait.ts';

test('one log line per request at info; mail links at warn when there is no SMTP', { timeout: 120_000 }, async () => {
  const i = await instance();
  const kiln = await spawnKiln({ ...i.env, LOG_LEVEL: 'info' });
  try {
    const c = new Client(kiln.port, i.config.rootDomain);
    for (const p of ['/_/health', '/_/login', '/nothing-here']) await c.get(p);
    await c.post(
      '/_/reset',
      { email: i.person.email },
      { form: true, headers: { origin: `http://${i.config.rootDomain}` } },
    );
    // (The readiness probe's `GET /` is the first line.)
    const requestLines = () =>
      kiln
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"') && !l.includes('"url":"/",'));
    const resetLink = (l: string) => l.startsWith('[warn] mail to') && l.includes('/_/reset');
    // The lines reach us through a pipe, and the mail goes out after the answer: wait for both.
    await until(() => requestLines().length >= 4 && kiln.output().split('\n').some(resetLink), {
      what: 'four request lines and the reset link in the output',
    }).catch((err) => assert.fail(`${(err as Error).message}\n${kiln.output()}`));
    const lines = kiln.output().split('\n');
    const requests = requestLines();
    assert.equal(requests.length, 4, kiln.output());
    assert.ok(!lines.some((l) => l.includes('incoming request')), 'not two lines per request');
    const line = JSON.parse(requests[0]);
    assert.equal(line.level, 30);
    assert.equal(line.url, '/_/health');
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, 'number');
    assert.ok(lines.some(resetLink), `the reset link at warn:\n${kiln.output()}`);
  } finally {
    await kiln.kill();
    await i.cleanup();
  }
});

test('GET /_/metrics: Prometheus text for this machine only, or with METRICS_TOKEN', { timeout: 120_000 }, async () => {
  const i = await instance();
  const kiln = await spawnKiln(i.env);
  const token = randomBytes(16).toString('hex');
  const guarded = await spawnKiln({ ...i.env, METRICS_TOKEN: token });
  try {
    const owner = i.owner(kiln.port);
    const url = `http://${i.host}${i.doc}`;
    const saved = await owner.post('/_/save', '<html><body>metric</body></html>', {
      headers: { 'content-type': 'text/plain', 'document-url': url },
    });
    assert.equal(saved.status, 200, saved.text);
    await new Client(kiln.port, i.host).get(i.doc);
    await new Client(kiln.port, i.host).get(i.doc);
    const m = await new Client(kiln.port, i.config.rootDomain).get('/_/metrics');
    assert.equal(m.status, 200);
    assert.match(String(m.headers['content-type']), /^text\/plain/);
    assert.match(m.text, /kiln_http_requests_total\{group="save",method="POST",status="2xx"\} 1/);
    assert.match(m.text, /kiln_http_request_duration_seconds_bucket\{le="[^"]+",group="documents"\}/);
    assert.match(m.text, /kiln_saves_total\{via="browser"\} 1/);
    assert.match(m.text, /kiln_open_streams 0/);
    assert.match(m.text, /kiln_cache_lookups_total\{cache="document",result="hit"\} [1-9]/);
    assert.match(m.text, /kiln_blob_store_errors_total/);
    // What each in-process cache holds: the saved and served document is in `documents`.
    assert.match(m.text, /kiln_cache_bytes\{cache="documents"\} [1-9]/);
    for (const cache of ['hot', 'savedTexts', 'dataAnswers'])
      assert.match(m.text, new RegExp(`kiln_cache_bytes\\{cache="${cache}"\\} \\d`));
    assert.match(m.text, /kiln_log_lines_dropped_total 0/);
    assert.match(m.text, /kiln_log_buffered_bytes \d/);
    assert.match(m.text, /kiln_bus_lag_seconds_count/);
    assert.match(m.text, /kiln_process_cpu_seconds_total/);
    const proxied = await new Client(kiln.port, i.config.rootDomain).get('/_/metrics', {
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    assert.equal(proxied.status, 404, 'a request a proxy forwarded is not this machine');

    const g = new Client(guarded.port, i.config.rootDomain);
    assert.equal((await g.get('/_/metrics')).status, 404, 'with a token set, loopback is not enough');
    assert.equal((await g.get('/_/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 404);
    assert.equal((await g.get('/_/metrics', { headers: { authorization: `Bearer ${token}` } })).status, 200);
  } finally {
    await kiln.kill();
    await guarded.kill();
    await i.cleanup();
  }
});

test('SIGTERM: an in-flight save finishes, open streams are told to reconnect, the process exits in time', {
  timeout: 120_000,
}, async () => {
  const i = await instance();
  const kiln = await spawnKiln(i.env);
  try {
    const url = `http://${i.host}${i.doc}`;
    const stream = await SseClient.open({
      port: kiln.port,
      host: i.host,
      path: `/_/sync?document-url=${encodeURIComponent(url)}&lane=saved`,
    });
    await stream.comment('connected');
    // A large save, its body still arriving when the signal comes: the server has taken the request
    // (`Expect: 100-continue` is answered once its headers are read) and holds the first megabyte; the rest
    // is sent only once the server is stopping (it has ended the open stream).
    const body = `<html><body>${'x'.repeat(3_000_000)}</body></html>`;
    const cookie = i.owner(kiln.port).jar.header(i.host);
    let sendRest = () => {};
    let taken = () => {};
    const headersRead = new Promise<void>((r) => (taken = r));
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        {
          port: kiln.port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/_/save',
          headers: {
            host: i.host,
            cookie,
            expect: '100-continue',
            'content-type': 'text/plain',
            'document-url': url,
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.on('continue', () => req.write(body.slice(0, 1_000_000), () => taken()));
      sendRest = () => req.end(body.slice(1_000_000));
    });
    // (An early answer or a failed request ends the wait too, and shows below.)
    await Promise.race([headersRead, answer]);
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
      kiln.child.once('exit', (code, signal) => r({ code, signal })),
    );
    kiln.child.kill('SIGTERM');
    // Stopping begins by telling open streams to reconnect elsewhere and ending them.
    await stream.end(30_000);
    assert.match(stream.raw, /retry: 1000/);
    sendRest();
    const saved = await answer;
    assert.equal(saved.status, 200, saved.text);
    // Exit code 0: the server closed everything itself. Its own 10 s deadline ends it with code 1 instead
    // (src/workers.ts), and the test's helper would kill it (a signal, no code) only after 15 s.
    assert.deepEqual(await exited, { code: 0, signal: null });
    // The save is there after the restart.
    const again = await spawnKiln(i.env);
    try {
      assert.equal((await new Client(again.port, i.host).get(i.doc)).text.length, body.length);
    } finally {
      await again.kill();
    }
  } finally {
    await kiln.kill();
    await i.cleanup();
  }
});

test('kiln backup while serving, kiln restore into an empty instance: documents and uploads come back', {
  timeout: 120_000,
}, async () => {
  const i = await instance();
  const kiln = await spawnKiln(i.env);
  const dest = mkdtempSync(path.join(os.tmpdir(), 'kiln-backups-'));
  const fresh = await instance();
  try {
    const backup = await kilnRun(i.env, ['backup', dest]);
    assert.equal(backup.code, 0, backup.out);
    assert.match(backup.out, /Backed up to .*kiln-backup-.*: 1 blob\(s\)/);
    const [name] = readdirSync(dest);
    assert.match(name, /^kiln-backup-[0-9TZ-]+$/);
    const manifest = JSON.parse(readFileSync(path.join(dest, name, 'manifest.json'), 'utf8'));
    assert.equal(manifest.database, storage === 'postgres' ? 'postgres' : 'sqlite');
    assert.equal(manifest.blobs, 1);

    // An instance that holds accounts is refused.
    const refused = await kilnRun(fresh.env, ['restore', path.join(dest, name)]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.out, /empty instance/);
    // An empty one (a new DATA_DIR, a new database) takes it.
    const emptyDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-restored-'));
    const emptyPg = storage === 'postgres' ? await freshPostgres() : null;
    const target = { ...i.env, DATA_DIR: emptyDir, ...(emptyPg ? { DATABASE_URL: emptyPg.url } : {}) };
    try {
      const restored = await kilnRun(target, ['restore', path.join(dest, name)]);
      assert.equal(restored.code, 0, restored.out);
      const back = await spawnKiln(target);
      try {
        const visitor = new Client(back.port, i.host);
        assert.equal((await visitor.get(i.doc)).text, '<html><body>ops</body></html>');
        assert.deepEqual((await visitor.get('/data.bin')).body, i.bytes);
      } finally {
        await back.kill();
      }
    } finally {
      await emptyPg?.drop();
      rmSync(emptyDir, { recursive: true, force: true });
    }
  } finally {
    await kiln.kill();
    await i.cleanup();
    await fresh.cleanup();
    rmSync(dest, { recursive: true, force: true });
  }
});

test('scheduled backups (BACKUP_EVERY) keep the newest BACKUP_KEEP', { timeout: 120_000 }, async () => {
  const dest = mkdtempSync(path.join(os.tmpdir(), 'kiln-scheduled-'));
  for (const old of ['kiln-backup-2020-01-01T00-00-00-000Z', 'kiln-backup-2020-01-02T00-00-00-000Z'])
    mkdirSync(path.join(dest, old));
  const i = await instance({ BACKUP_DIR: dest, BACKUP_EVERY: '5s', BACKUP_KEEP: '2' });
  const kiln = await spawnKiln(i.env);
  try {
    let names: string[] = [];
    for (let t = 0; t < 150; t++) {
      names = readdirSync(dest).filter((n) => !n.startsWith('kiln-backup-2020'));
      if (names.some((n) => !n.endsWith('.partial'))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const taken = names.find((n) => !n.endsWith('.partial'));
    assert.ok(taken, `a backup was taken: ${readdirSync(dest).join(', ')}\n${kiln.output()}`);
    assert.ok(existsSync(path.join(dest, taken, 'manifest.json')));
    for (let t = 0; readdirSync(dest).length > 2 && t < 50; t++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(readdirSync(dest).sort(), ['kiln-backup-2020-01-02T00-00-00-000Z', taken].sort());
  } finally {
    await kiln.kill();
    await i.cleanup();
    rmSync(dest, { recursive: true, force: true });
  }
});
