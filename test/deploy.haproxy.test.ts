// Several processes behind a real load balancer: three Kiln processes on one PostgreSQL and one Redis
// (blobs in PostgreSQL, so every process reads every upload), HAProxy (Debian's package) in front with
// health-checked backends. One backend is killed (SIGKILL) in the middle of a stream of saves: every
// acknowledged save is kept, clients see at most retried requests, and a saved-lane stream that loses
// its process reconnects through HAProxy to another and, with Last-Event-ID, gets every save once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { spawnKiln, freePort, type ChildKiln } from './support/child.ts';
import { instance } from './support/instance.ts';
import { storage } from './support/kiln.ts';
import { Client } from './support/client.ts';
import { SseClient } from './support/sse.ts';
import { until } from './support/wait.ts';
import { closeServices, createServices } from '../src/server.ts';

const HAPROXY = '/usr/sbin/haproxy';
const skip =
  storage !== 'postgres'
    ? 'several processes need PostgreSQL + Redis (the scale-out configuration)'
    : !existsSync(HAPROXY) && 'HAProxy is not installed (.ci/run installs it)';

function haproxyConfig(port: number, backends: number[]) {
  return `global
  maxconn 2000
defaults
  mode http
  timeout connect 1s
  timeout client 60s
  timeout server 60s
  timeout tunnel 1h
  option http-buffer-request
  option redispatch
  retries 3
  retry-on conn-failure empty-response response-timeout
frontend kiln
  bind 127.0.0.1:${port}
  default_backend kilns
backend kilns
  balance roundrobin
  option httpchk
  http-check send meth GET uri /_/health hdr Host localhost
  default-server inter 200ms fall 2 rise 2
${backends.map((p, i) => `  server k${i + 1} 127.0.0.1:${p} check`).join('\n')}
`;
}

test('three processes behind HAProxy: a backend killed mid-load loses no acknowledged save; streams catch up elsewhere', {
  skip,
  timeout: 120_000,
}, async () => {
  const i = await instance({ BLOB_STORE: 'postgres' });
  const kilns: ChildKiln[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-haproxy-'));
  let haproxy: ReturnType<typeof spawn> | undefined;
  try {
    for (let n = 0; n < 3; n++) kilns.push(await spawnKiln(i.env));
    const port = await freePort();
    writeFileSync(
      path.join(dir, 'haproxy.cfg'),
      haproxyConfig(
        port,
        kilns.map((k) => k.port),
      ),
    );
    haproxy = spawn(HAPROXY, ['-f', path.join(dir, 'haproxy.cfg'), '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let hout = '';
    haproxy.stdout!.on('data', (d) => (hout += d));
    haproxy.stderr!.on('data', (d) => (hout += d));
    const front = i.owner(port);
    await until(
      async () => (await new Client(port, i.config.rootDomain).get('/_/health').catch(() => null))?.status === 200,
      { what: 'HAProxy to answer with a healthy backend', every: 100 },
    ).catch((err) => assert.fail(`${(err as Error).message}\n${hout}`));

    // An upload written through one process is served by each of the others.
    const bytes = randomBytes(200_000);
    const up = await i
      .owner(kilns[0].port)
      .post(
        '/_/upload',
        { fileName: 'shared.bin', fileBody: bytes.toString('base64') },
        { headers: { 'page-url': `http://${i.host}${i.doc}` } },
      );
    assert.equal(up.status, 200, up.text);
    const upPath = new URL(up.json.urls[0]).pathname;
    for (const k of kilns.slice(1)) assert.deepEqual((await new Client(k.port, i.host).get(upPath)).body, bytes);

    // A saved-lane stream through HAProxy that reconnects with Last-Event-ID whenever it ends.
    const url = `http://${i.host}${i.doc}`;
    const seen: Array<{ id: number; marker: string }> = [];
    let reconnects = 0;
    let opened = 0;
    const journal: string[] = [];
    let following = true;
    const follow = (async () => {
      let last: string | undefined;
      while (following) {
        const s = await SseClient.open({
          port,
          host: i.host,
          path: `/_/sync?document-url=${encodeURIComponent(url)}&lane=saved`,
          headers: last ? { 'last-event-id': last } : {},
        }).catch(() => null);
        journal.push(`open(last=${last ?? '-'}) → ${s?.status ?? 'failed'}`);
        // (Its headers come once its subscription is live: every later save reaches it.)
        if (s?.status === 200) opened++;
        if (s?.status !== 200) {
          s?.close();
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        try {
          while (following) {
            const f = await s.next({ timeoutMs: 500 }).catch((e: Error) => (s.ended ? null : e));
            if (f === null) break;
            if (f instanceof Error) continue;
            last = f.id;
            seen.push({ id: Number(f.id), marker: /save (\d+)/.exec(f.json.html)?.[1] ?? '?' });
            if (seen.length > 1 && journal.at(-1)?.startsWith('open(last=1'))
              journal.push(`first: ${seen.at(-1)?.marker} ${f.json.sender}`);
          }
        } finally {
          s.close();
        }
        if (following) reconnects++;
        journal.push(`ended after ${last} (${seen.at(-1)?.marker})`);
      }
    })();
    await until(() => opened > 0, { what: 'the stream to open through HAProxy' });

    // Saves one after another; a failed request is sent again (the same bytes: a retried request).
    const acknowledged: string[] = [];
    let retried = 0;
    let saving = true;
    const saves = (async () => {
      for (let n = 1; saving; n++) {
        const body = `<html><body><p>save ${n}</p></body></html>`;
        for (let attempt = 0; ; attempt++) {
          const res = await front
            .post('/_/save', body, { headers: { 'content-type': 'text/plain', 'document-url': url } })
            .catch(() => null);
          if (res?.status === 200) {
            acknowledged.push(String(n));
            break;
          }
          assert.ok(attempt < 20, `save ${n} never succeeded (last: ${res?.status} ${res?.text})`);
          retried++;
          await new Promise((r) => setTimeout(r, 100));
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // (A save that never succeeds ends the waits below at once.)
    let saveError: unknown = null;
    saves.catch((err) => (saveError = err));
    const saved = (n: number) => {
      if (saveError) throw saveError;
      return acknowledged.length >= n;
    };
    // Saves go on for a while through every backend before one is killed,
    await until(() => saved(10), { what: '10 saves acknowledged before the kill' });
    // The process the stream is on is the one killed (its metrics count one open stream).
    const holder = await (async () => {
      for (const k of kilns) {
        const m = await new Client(k.port, i.config.rootDomain).get('/_/metrics');
        if (/^kiln_open_streams 1$/m.test(m.text)) return k;
      }
      return kilns[0];
    })();
    await holder.kill('SIGKILL');
    // and after it, while HAProxy finds the backend down and the stream comes back through another.
    const atKill = acknowledged.length;
    await until(() => saved(atKill + 10) && opened >= 2, {
      what: '10 saves acknowledged after the kill, and the stream back',
    }).catch((err) => assert.fail(`${(err as Error).message}; journal: ${journal.join('; ')}\n${hout}`));
    saving = false;
    await saves;
    // The stream catches up to the last acknowledged save, then stops.
    const lastMarker = acknowledged.at(-1);
    for (let t = 0; t < 100 && !seen.some((f) => f.marker === lastMarker); t++)
      await new Promise((r) => setTimeout(r, 100));
    following = false;
    await follow;

    assert.ok(acknowledged.length >= 20, `saves went on: ${acknowledged.length}\n${hout}`);
    // Every acknowledged save is stored, as a version.
    const s = await createServices(i.config);
    try {
      const hashes = new Set(
        (await s.database.db.selectFrom('versions').select('content_hash').execute()).map((v) => v.content_hash),
      );
      for (const n of acknowledged) {
        const body = `<html><body><p>save ${n}</p></body></html>`;
        assert.ok(hashes.has(createHash('sha256').update(body).digest('hex')), `acknowledged save ${n} was lost`);
      }
    } finally {
      await closeServices(s);
    }
    // The stream got every save once, in order, across its reconnects.
    const markers = seen.map((f) => f.marker);
    assert.equal(new Set(markers).size, markers.length, `no frame twice: ${markers.join(' ')}`);
    for (const n of acknowledged)
      assert.ok(
        markers.includes(n),
        `save ${n} reached the stream (journal: ${journal.join('; ')}; seen: ${seen.map((f) => `${f.marker}@${f.id}`).join(' ')}; haproxy: ${hout})`,
      );
    assert.ok(
      seen.every((f, k) => k === 0 || f.id > seen[k - 1].id),
      'ids only grow',
    );
    assert.equal(reconnects, 1, 'the stream lost its process once, and came back through HAProxy');
    console.log(
      `# ${acknowledged.length} saves acknowledged, ${retried} requests retried, ${reconnects} stream reconnects`,
    );
  } finally {
    haproxy?.kill('SIGTERM');
    for (const k of kilns) await k.kill();
    await i.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
