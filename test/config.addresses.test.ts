// Where Kiln says it is (#25.2): ROOT_DOMAIN follows PORT unless set, the start line names the addresses in use
// and warns when a `*.localhost` ROOT_DOMAIN names another port, and a browser that opened the main app at
// localhost or 127.0.0.1 is sent to its real address (API clients keep the loopback alias).
// kiln-test: once
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { freePort, spawnKiln } from './support/child.ts';
import { until } from './support/wait.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

test('ROOT_DOMAIN and BASE_URL follow PORT unless set', () => {
  assert.equal(loadConfig({}).rootDomain, 'kiln.localhost:8080');
  assert.equal(loadConfig({ PORT: '9191' }).rootDomain, 'kiln.localhost:9191');
  assert.equal(loadConfig({ PORT: '9191' }).baseUrl, 'http://kiln.localhost:9191');
  assert.equal(loadConfig({ PORT: '9191', ROOT_DOMAIN: 'pages.example' }).rootDomain, 'pages.example');
});

test('CURRENCY: an ISO 4217 code, USD by default; anything else refuses to start', () => {
  assert.equal(loadConfig({}).currency, 'USD');
  assert.equal(loadConfig({ CURRENCY: 'eur' }).currency, 'EUR');
  assert.throws(() => loadConfig({ CURRENCY: 'euro' }), /CURRENCY/);
});

test('the start line names the addresses in use, and warns when ROOT_DOMAIN names another port', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-addr-'));
  try {
    const port = await freePort();
    // ROOT_DOMAIN empty: unset, so it follows PORT.
    const plain = await spawnKiln({ DATA_DIR: path.join(dir, 'a'), PORT: String(port), ROOT_DOMAIN: '' });
    await until(() => plain.output().includes('Kiln is running'), { what: 'the start line' });
    assert.match(plain.output(), new RegExp(`main app http://kiln\\.localhost:${port}`));
    assert.doesNotMatch(plain.output(), /Warning/);
    await plain.kill();
    const other = await spawnKiln({ DATA_DIR: path.join(dir, 'b'), ROOT_DOMAIN: 'kiln.localhost:8080' });
    await until(() => other.output().includes('Warning'), { what: 'the warning' });
    assert.match(
      other.output(),
      new RegExp(`ROOT_DOMAIN is kiln\\.localhost:8080 but Kiln listens on port ${other.port}`),
    );
    await other.kill();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a browser on localhost or 127.0.0.1 goes to the main app’s address; API clients stay', async () => {
  const port = new URL(kiln.url).port;
  const navigate = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
    const page = await kiln.client(host).page('/_/login?return=%2F_%2Fdashboard', { headers: navigate });
    assert.equal(page.status, 302, host);
    assert.equal(page.headers.location, `${kiln.config.baseUrl}/_/login?return=%2F_%2Fdashboard`);
    const api = await kiln.client(host).get('/_/health');
    assert.notEqual(api.status, 302, `${host}: a script or the sync tool keeps the alias`);
  }
});
