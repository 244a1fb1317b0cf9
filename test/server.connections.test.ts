// TCP connections that hold the server without sending a request (security review #43, item 6). A
// connection that sends no byte within FIRST_BYTE_TIMEOUT_MS (here 500 ms) is closed, silently: nothing
// is owed to a connection that asked nothing (a browser's pre-opened socket just goes; it opens another).
// One socket address holds at most MAX_CONNECTIONS_PER_ADDRESS (here 4) open connections in one process:
// the next is answered 429 `rate-limited` and closed at once, while other addresses are served.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { until, within } from './support/wait.ts';
import { loadConfig } from '../src/config.ts';
import { limits } from '../src/limits.ts';

const CAP = 4;
let quick: TestKiln;
let capped: TestKiln;
before(async () => {
  quick = await startKiln({ env: { FIRST_BYTE_TIMEOUT_MS: '500' } });
  // Idle connections must outlive this test's steps here: long deadlines.
  capped = await startKiln({
    env: { MAX_CONNECTIONS_PER_ADDRESS: String(CAP), FIRST_BYTE_TIMEOUT_MS: '300000', HEADERS_TIMEOUT_MS: '300000' },
  });
});
after(async () => {
  await quick?.stop();
  await capped?.stop();
});

const portOf = (kiln: TestKiln) => Number(new URL(kiln.url).port);
/** A loopback address of its own (all of 127.0.0.0/8 reaches the server): one client machine. */
const newAddress = () => {
  const b = randomBytes(3);
  return `127.${b[0]}.${b[1]}.${Math.max(2, b[2] % 255)}`;
};

/** A raw connection from `address`: what the server sends, and whether (and when) it closed. */
class Raw {
  readonly socket: net.Socket;
  answer = '';
  closed = false;
  readonly connected: Promise<void>;
  readonly ended: Promise<void>;
  constructor(kiln: TestKiln, address: string, first?: string) {
    this.socket = net.connect({ port: portOf(kiln), host: '127.0.0.1', localAddress: address });
    this.socket.on('error', () => {});
    this.socket.on('data', (d) => (this.answer += d.toString('latin1')));
    this.connected = new Promise((resolve) =>
      this.socket.once('connect', () => (first ? this.socket.write(first, () => resolve()) : resolve())),
    );
    this.ended = new Promise((resolve) =>
      this.socket.once('close', () => {
        this.closed = true;
        resolve();
      }),
    );
  }
  /** Resolves with the answer's status once the server has answered (headers and all). */
  async status(): Promise<number> {
    await until(() => /\r\n\r\n/.test(this.answer), { what: 'an answer' });
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(this.answer)?.[1]);
  }
}

/** A GET from `address` on a fresh connection; resolves with its status. */
async function getFrom(kiln: TestKiln, address: string): Promise<number> {
  const raw = new Raw(
    kiln,
    address,
    `GET /_/health HTTP/1.1\r\nHost: ${kiln.config.rootDomain}\r\nConnection: close\r\n\r\n`,
  );
  const status = await raw.status();
  raw.socket.destroy();
  return status;
}

test('defaults: 20 s for a first byte, 256 open connections per address; behind a proxy no cap unless set', () => {
  const c = loadConfig({});
  assert.equal(c.firstByteTimeoutMs, limits.serverTimeouts.firstByteMs);
  assert.equal(c.firstByteTimeoutMs, 20_000);
  assert.equal(c.maxConnectionsPerAddress, limits.connectionsPerAddress);
  assert.equal(c.maxConnectionsPerAddress, 256);
  // Behind a proxy every connection is the proxy's: the proxy bounds its visitors' connections.
  assert.equal(loadConfig({ TRUST_PROXY: 'true' }).maxConnectionsPerAddress, null);
  assert.equal(loadConfig({ TRUST_PROXY: 'true', MAX_CONNECTIONS_PER_ADDRESS: '900' }).maxConnectionsPerAddress, 900);
  // The headers' deadline bounds the first byte too: a longer first-byte deadline is the headers'.
  assert.equal(loadConfig({ HEADERS_TIMEOUT_MS: '5000', FIRST_BYTE_TIMEOUT_MS: '9000' }).firstByteTimeoutMs, 5000);
  assert.throws(() => loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '0' }), /MAX_CONNECTIONS_PER_ADDRESS/);
  assert.throws(() => loadConfig({ FIRST_BYTE_TIMEOUT_MS: 'soon' }), /FIRST_BYTE_TIMEOUT_MS/);
});

test('a connection that never sends a byte is closed after FIRST_BYTE_TIMEOUT_MS, with nothing sent', async () => {
  const address = newAddress();
  // A request under way: its first bytes arrived, so the headers' own deadline (30 s here) is what bounds it.
  const started = new Raw(quick, address, 'GET /_/health HTTP/1.1\r\n');
  await started.connected;
  const silent = new Raw(quick, address);
  await within(silent.ended, 25_000, 'the server closing a silent connection (the 30 s headers timeout is not it)');
  assert.equal(silent.answer, '', 'nothing is answered to a connection that asked nothing');
  assert.equal(started.closed, false, 'a connection that sent its first bytes is not cut by the first-byte deadline');
  started.socket.write(`Host: ${quick.config.rootDomain}\r\n\r\n`);
  assert.equal(await started.status(), 200, started.answer);
  started.socket.destroy();
});

test('one address holds at most MAX_CONNECTIONS_PER_ADDRESS open connections: the next is refused at once', async () => {
  const address = newAddress();
  const held = Array.from({ length: CAP }, () => new Raw(capped, address));
  await Promise.all(held.map((h) => h.connected));

  const extra = new Raw(capped, address);
  await within(extra.ended, 20_000, 'the server closing the connection past the cap');
  assert.match(extra.answer, /^HTTP\/1\.1 429 /, extra.answer);
  assert.match(extra.answer, /\r\nconnection: close\r\n/i);
  assert.match(extra.answer, /\r\nretry-after: \d+\r\n/i);
  assert.match(extra.answer, /"code":"rate-limited"/);
  // A request on a connection past the cap gets the same answer.
  assert.equal(await getFrom(capped, address), 429);

  assert.equal(await getFrom(capped, newAddress()), 200, 'another address is served');
  for (const h of held) assert.equal(h.closed, false, 'the connections within the cap stay open');

  // A closed connection gives its place back.
  held[0].socket.destroy();
  await until(async () => (await getFrom(capped, address)) === 200, { what: 'the freed place serving a request' });
  for (const h of held) h.socket.destroy();
});
