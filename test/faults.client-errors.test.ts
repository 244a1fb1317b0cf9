// Requests Node cannot parse get an answer a client can read: Kiln's JSON shape, `Connection: close`,
// and the connection ended after it (no reset before the answer arrives).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startKiln, type TestKiln } from './support/kiln.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

/** Sends raw bytes, reads until the server ends the connection; `reset` when it was reset instead. */
function raw(bytes: string): Promise<{ text: string; reset: boolean }> {
  const port = Number(new URL(kiln.url).port);
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('end', () => resolve({ text, reset: false }));
    socket.on('error', () => resolve({ text, reset: true }));
    socket.write(bytes);
  });
}

test('a malformed request line answers 400 with Connection: close, and the answer arrives whole', async () => {
  const res = await raw('GARBAGE\r\n\r\n');
  assert.equal(res.reset, false, 'ended, not reset');
  assert.match(res.text, /^HTTP\/1\.1 400 /);
  assert.match(res.text, /\r\nConnection: close\r\n/i);
  assert.equal(JSON.parse(res.text.split('\r\n\r\n')[1]).msgType, 'error');
});

test('headers over the limit answer 431, read whole by the client', async () => {
  const res = await raw(`GET / HTTP/1.1\r\nHost: ${kiln.config.rootDomain}\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
  assert.equal(res.reset, false);
  assert.match(res.text, /^HTTP\/1\.1 431 /);
  assert.match(res.text, /\r\nConnection: close\r\n/i);
});
