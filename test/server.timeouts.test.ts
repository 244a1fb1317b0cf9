// Server timeouts against slow clients: headers sent slowly (slowloris) and bodies sent slowly are cut
// (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, here small), while an open live stream is never cut.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder } from './support/sync-client.ts';
import { SseClient } from './support/sse.ts';
import { loadConfig } from '../src/config.ts';
import { limits } from '../src/limits.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln({ env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500' } });
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

/** Opens a raw connection, sends `first`, then `drip` every `everyMs` until the server answers or
 *  closes; resolves with what the server sent and how long it took. */
function slowClient(
  first: string,
  drip: string,
  everyMs: number,
  giveUpMs = 8000,
): Promise<{ answer: string; closedAfterMs: number | null }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout;
    const end = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ answer, closedAfterMs: closed ? Date.now() - started : null });
    };
    const giveUp = setTimeout(() => end(false), giveUpMs);
    socket.on('connect', () => {
      socket.write(first);
      timer = setInterval(() => socket.write(drip), everyMs);
    });
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('close', () => end(true));
    socket.on('error', () => {});
  });
}

test('defaults: 30 s for headers, 10 minutes for a whole request', () => {
  const c = loadConfig({});
  assert.equal(c.headersTimeoutMs, limits.serverTimeouts.headersMs);
  assert.equal(c.headersTimeoutMs, 30_000);
  assert.equal(c.requestTimeoutMs, 10 * 60_000);
});

test('headers sent slowly (slowloris) are cut after the headers timeout', async () => {
  const r = await slowClient(`GET /_/login HTTP/1.1\r\nHost: ${kiln.config.rootDomain}\r\n`, 'X-Slow: 1\r\n', 200);
  assert.notEqual(r.closedAfterMs, null, 'the server closed the connection');
  assert.ok(r.closedAfterMs! < 4000, `closed after ${r.closedAfterMs} ms`);
  assert.match(r.answer, /^(HTTP\/1\.1 408|$)/);
});

test('a body sent slowly is cut after the request timeout', async () => {
  const body = `{"email":"x@example.com","password":"${'p'.repeat(200)}"}`;
  const head = `POST /_/login HTTP/1.1\r\nHost: ${kiln.config.rootDomain}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const r = await slowClient(head, 'p', 200);
  assert.notEqual(r.closedAfterMs, null, 'the server closed the connection');
  assert.ok(r.closedAfterMs! < 5000, `closed after ${r.closedAfterMs} ms`);
});

test('an open live stream outlives both timeouts', async () => {
  const { key } = await keyHolder(kiln);
  const sse = await SseClient.open({
    port,
    host: kiln.config.rootDomain,
    path: '/_/sync/stream',
    headers: { 'x-api-key': key },
  });
  assert.equal(sse.status, 200);
  await new Promise((r) => setTimeout(r, 3500));
  assert.equal(sse.ended, false, 'the stream is still open');
  sse.close();
});
