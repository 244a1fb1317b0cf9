// `kiln mcp` as an agent runs it: the SDK's StdioClientTransport starts `node bin/kiln.js mcp` with KILN_URL and
// KILN_KEY, and talks MCP over its standard input and output (2025-06-18 and 2025-11-25 with the handshake,
// 2026-07-28 negotiated); the bridge forwards to the test Kiln's `/_/mcp`, and the local client's name names its
// writes. Nothing but protocol messages on stdout; a missing key, a refused key and an unreachable Kiln are said on
// stderr with exit code 1. (Run `npm run build` first: a stale dist/ starts slowly.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder } from './support/sync-client.ts';
import { freePort, kilnRun, REPO } from './support/child.ts';
import { listVersions } from '../src/save/history.ts';
import { findByPath } from '../src/nodes/find.ts';
import type { ProtocolVersion } from './support/mcp.ts';

let kiln: TestKiln;
let holder: Awaited<ReturnType<typeof keyHolder>>;
let kilnUrl: string;
before(async () => {
  kiln = await startKiln();
  holder = await keyHolder(kiln);
  kilnUrl = `http://127.0.0.1:${new URL(kiln.url).port}`;
});
after(() => kiln.stop());

const env = (over: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  KILN_URL: kilnUrl,
  KILN_KEY: holder.key,
  ...over,
});

async function stdioClient(version: ProtocolVersion, name: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(REPO, 'bin', 'kiln.js'), 'mcp'],
    env: env(),
    cwd: REPO,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const modern = version === '2026-07-28';
  const client = new Client(
    { name, version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: version } } } : { supportedProtocolVersions: [version] },
  );
  await client.connect(transport);
  await client.listTools();
  return { client, stderr: () => stderr };
}

for (const version of ['2025-06-18', '2025-11-25', '2026-07-28'] as ProtocolVersion[]) {
  test(`kiln mcp at ${version}: the tools of the Kiln at KILN_URL, writes named for the local client`, async () => {
    const name = `Desktop ${version}`;
    const { client, stderr } = await stdioClient(version, name);
    assert.equal(client.getNegotiatedProtocolVersion(), version);
    assert.equal(client.getServerVersion()?.name, 'kiln');
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'edit_document' && t.outputSchema));
    const docPath = `stdio-${version}-${holder.person.username}.html`;
    const made = await client.callTool({
      name: 'create_document',
      arguments: { path: docPath, html: '<!DOCTYPE html><html><body><p>one</p></body></html>' },
    });
    assert.ok(!made.isError, JSON.stringify(made.content));
    const edited = await client.callTool({
      name: 'edit_document',
      arguments: { path: docPath, edits: [{ op: 'replaceText', find: 'one', replace: 'two' }] },
    });
    assert.ok(!edited.isError, JSON.stringify(edited.content));
    const refused = await client.callTool({ name: 'read_document', arguments: { path: 'nothing.html' } });
    assert.equal(refused.isError, true);
    assert.equal((refused.structuredContent as any).error.code, 'not-found');
    const resources = await client.listResources();
    assert.ok(resources.resources.some((r) => r.uri.endsWith(docPath)));
    const node = await findByPath(kiln.services, holder.person.id, docPath);
    const [newest] = await listVersions(kiln.services.database.db, node!.id);
    assert.equal(newest.savedByAgent, `${name} via sync key ${holder.key.slice(0, 12)}…`);
    await client.close();
    assert.equal(stderr(), '', 'nothing went wrong');
  });
}

test('kiln mcp says what is wrong on stderr and exits 1: no key, a refused key, no Kiln there; stdout stays empty', async () => {
  const noKey = await kilnRun(env({ KILN_KEY: '' }), ['mcp']);
  assert.equal(noKey.code, 1);
  assert.equal(noKey.stdout, '');
  assert.match(noKey.stderr, /^kiln mcp: no key: set KILN_KEY/);
  const refused = await kilnRun(env({ KILN_KEY: `hcsk_${'0'.repeat(64)}` }), ['mcp']);
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /refused the key in KILN_KEY \(invalid-key\)/);
  const nobody = await kilnRun(env({ KILN_URL: `http://127.0.0.1:${await freePort()}` }), ['mcp']);
  assert.equal(nobody.code, 1);
  assert.equal(nobody.stdout, '');
  assert.match(nobody.stderr, /cannot reach Kiln at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  const notKiln = await kilnRun(env({ KILN_URL: 'not a url' }), ['mcp']);
  assert.equal(notKiln.code, 1);
  assert.match(notKiln.stderr, /KILN_URL is not a URL/);
});

test('kiln --help names kiln mcp, KILN_URL and KILN_KEY', async () => {
  const help = await kilnRun(env(), ['--help']);
  assert.match(help.stdout, /^ {2}kiln mcp\s/m);
  assert.match(help.stdout, /^ {2}KILN_URL\s/m);
  assert.match(help.stdout, /^ {2}KILN_KEY\s/m);
});
