// Health probes as load balancers and orchestrators send them (#26.4): Kubernetes names the pod by IP:port,
// a cloud balancer may send a name Kiln does not serve, an HTTP/1.0 check sends no Host at all. /_/health
// and /_/ready answer all of them; nothing else becomes reachable that way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startKiln, type TestKiln } from './support/kiln.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

/** One raw request (the exact request line and headers given), its status and body. */
function raw(lines: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

const hosts: Array<[string, string[]]> = [
  ['an IP and port', ['Host: 10.1.2.3:8080']],
  ['a name Kiln does not serve', ['Host: lb-check.internal']],
  ['an empty Host', ['Host: ']],
  ['no Host (HTTP/1.1)', []],
];

for (const [what, headers] of hosts) {
  test(`/_/health and /_/ready answer with ${what}; other paths stay unreachable`, async () => {
    for (const version of ['HTTP/1.1', 'HTTP/1.0']) {
      const health = await raw([`GET /_/health ${version}`, ...headers, 'Connection: close']);
      assert.equal(health.status, 200, `${version} ${what}: ${health.body}`);
      assert.match(health.body, /"status":"ok"/);
      const ready = await raw([`GET /_/ready ${version}`, ...headers, 'Connection: close']);
      assert.equal(ready.status, 200, `${version} ${what}: ${ready.body}`);
      assert.match(ready.body, /"database":"ok"/);
      // The main app's and a document host's routes are not reached through such a Host.
      for (const path of ['/_/login', '/_/dashboard', '/', '/_/meta', '/_/sync/nodes']) {
        const other = await raw([`GET ${path} ${version}`, ...headers, 'Connection: close']);
        assert.ok(
          other.status === 404 || other.status === 400,
          `${path} with ${what} (${version}) answered ${other.status}`,
        );
      }
    }
  });
}

test('a probe on the real host answers as before', async () => {
  assert.equal((await kiln.client().get('/_/health')).status, 200);
  assert.equal((await kiln.client(kiln.hostOf('nobody')).get('/_/ready')).status, 200);
});
