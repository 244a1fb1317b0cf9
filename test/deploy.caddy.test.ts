// Custom domains over TLS, for real: Caddy (Debian's package) in front of Kiln with on-demand TLS from
// Caddy's own CA, its `ask` at /_/domains/ask, configured by deploy/Caddyfile (the README's). An active
// custom domain gets a certificate and its document over HTTPS (curl --resolve, trusting Caddy's
// root); an unknown or pending domain gets no certificate at all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { freePort, REPO } from './support/child.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { signDomainWebhook } from '../src/domains/webhook.ts';

const CADDY = '/usr/bin/caddy';
const skip = !existsSync(CADDY) && 'Caddy is not installed (.ci/run installs it)';
const SECRET = 'caddy-test-webhook-secret';
let kiln: TestKiln;
let caddy: ChildProcess;
let dir: string;
let httpsPort: number;
let out = '';

before(async () => {
  if (skip) return;
  kiln = await startKiln({
    env: { ROOT_DOMAIN: 'kiln.test', TRUST_PROXY: 'true', DOMAIN_WEBHOOK_SECRET: SECRET },
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-caddy-'));
  httpsPort = await freePort();
  const httpPort = await freePort();
  caddy = spawn(CADDY, ['run', '--config', path.join(REPO, 'deploy/Caddyfile'), '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      XDG_DATA_HOME: path.join(dir, 'data'),
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      KILN_UPSTREAM: `127.0.0.1:${new URL(kiln.url).port}`,
      KILN_ASK: `127.0.0.1:${new URL(kiln.url).port}`,
      CADDY_GLOBAL_OPTIONS: [
        'admin off',
        'local_certs',
        'skip_install_trust',
        `http_port ${httpPort}`,
        `https_port ${httpsPort}`,
      ].join('\n'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  caddy.stdout!.on('data', (d) => (out += d));
  caddy.stderr!.on('data', (d) => (out += d));
  for (let t = 0; t < 100 && !out.includes('serving initial configuration'); t++)
    await new Promise((r) => setTimeout(r, 100));
  assert.match(out, /serving initial configuration/, out);
});
after(async () => {
  caddy?.kill('SIGTERM');
  await kiln?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** curl over HTTPS to `host` on Caddy's port, trusting only Caddy's own root. */
function curl(host: string, p = '/'): Promise<{ code: number; body: string; err: string }> {
  const root = path.join(dir, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  return new Promise((resolve) => {
    execFile(
      'curl',
      [
        '-sS',
        '--max-time',
        '20',
        '--resolve',
        `${host}:${httpsPort}:127.0.0.1`,
        ...(existsSync(root) ? ['--cacert', root] : []),
        `https://${host}:${httpsPort}${p}`,
      ],
      (err, stdout, stderr) =>
        resolve({ code: (err as { code?: number } | null)?.code ?? 0, body: stdout, err: stderr }),
    );
  });
}

function webhook(type: string, domain: string) {
  const raw = JSON.stringify({ id: `evt_${Date.now()}_${Math.random()}`, type, domain });
  return kiln.client().post('/_/webhooks/domains', raw, {
    headers: { 'content-type': 'application/json', 'x-kiln-signature': signDomainWebhook(SECRET, raw) },
  });
}

test('an active custom domain gets a certificate from Caddy and serves its document over HTTPS; others get none', {
  skip,
}, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'index.html',
    html: '<html><body>over tls</body></html>',
  });
  const active = 'docs.customer.test';
  const pending = 'pending.customer.test';
  for (const d of [active, pending]) assert.equal((await main.post('/_/dashboard/domains', { domain: d })).status, 201);
  assert.equal((await webhook('dns.verified', active)).status, 200);

  const ok = await curl(active);
  assert.equal(ok.code, 0, `${ok.err}\n${out}`);
  assert.equal(ok.body, '<html><body>over tls</body></html>');
  // The owner's own host (an existing account) is Kiln's too.
  const own = await curl(`${me.username}.kiln.test`);
  assert.equal(own.code, 0, own.err);

  for (const refused of [pending, 'unknown.example.org', 'nobody.kiln.test']) {
    const r = await curl(refused);
    assert.notEqual(r.code, 0, `${refused} must get no certificate`);
    assert.match(r.err, /SSL|TLS|alert/i, r.err);
  }
});

test('the README shows the Caddyfile this test runs', () => {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  assert.ok(readme.includes(readFileSync(path.join(REPO, 'deploy/Caddyfile'), 'utf8')));
});
