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

/** How long a slow client keeps dripping before it gives up: far less than the defaults (30 s for headers,
 *  10 minutes for a request), far more than the small timeouts set here. A connection the server closed
 *  before that was closed by one of those. */
const GIVE_UP_MS = 20_000;

/** Opens a raw connection, sends `first`, then `drip` every `everyMs` until the server closes it (or the
 *  client gives up); resolves with what the server sent and whether it was the server that closed it. */
function slowClient(
  first: string,
  drip: string,
  everyMs: number,
  giveUpMs = GIVE_UP_MS,
): Promise<{ answer: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout;
    const end = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ answer, closed });
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
  assert.ok(r.closed, 'the server closed the connection (the headers timeout set here, not the 30 s default)');
  assert.match(r.answer, /^(HTTP\/1\.1 408|$)/);
});

test('a body sent slowly is cut after the request timeout', async () => {
  const body = `{"email":"x@example.com","password":"${'p'.repeat(200)}"}`;
  const head = `POST /_/login HTTP/1.1\r\nHost: ${kiln.config.rootDomain}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const r = await slowClient(head, 'p', 200);
  assert.ok(r.closed, 'the server closed the connection (the request timeout set here, not the 10 min default)');
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
  try {
    // A body sent slowly on a connection opened after the stream's: once the server has cut it, both timeouts
    // have passed for the stream too (each is counted from a request's start, and checked for every
    // connection at once).
    const late = await slowClient(
      `POST /_/login HTTP/1.1\r\nHost: ${kiln.config.rootDomain}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
      'p',
      200,
    );
    assert.ok(late.closed, 'the slow request opened after the stream was cut');
    // (A round trip, so that a close of the stream's connection sent at the same time has reached us.)
    assert.equal((await kiln.client().get('/_/health')).status, 200);
    assert.equal(sse.ended, false, 'the stream is still open');
  } finally {
    sse.close();
  }
});
