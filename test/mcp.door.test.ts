// The MCP door (`/_/mcp`) with the official SDK's client: each protocol version connects (2025-06-18 and
// 2025-11-25 with the initialize handshake, 2026-07-28 stateless); tools/list declares every tool with its
// schemas and annotations; the reading tools answer what the key's person may see; the door refuses a request
// without a key, with a refused key, from another site's page, under another Host, and GET/DELETE; each message
// is routed to the era the SDK classifies it in (the door decides the common ones without the SDK, src/mcp/http.ts).
import { contextOf } from '../src/context.ts';
import { SYSTEM } from '../src/access/caller.ts';
import { actingAs } from './support/people.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder } from './support/sync-client.ts';
import { call, mcpClient, mcpUrl, refused, type ProtocolVersion } from './support/mcp.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { createPath } from '../src/nodes/tree.ts';
import { TOOLS } from '../src/mcp/tools/index.ts';

let kiln: TestKiln;
let key: string;
let username: string;
let otherKey: string;
let team: string;
before(async () => {
  kiln = await startKiln();
  const holder = await keyHolder(kiln);
  key = holder.key;
  username = holder.person.username;
  const a = async (path: string, html?: string) =>
    createPath(await actingAs(kiln.services, holder.person.id), {
      ownerId: holder.person.id,
      path,
      ...(html ? { html } : {}),
    });
  await a(
    `notes/todo-${username}.html`,
    '<!DOCTYPE html><html><body><h1>Todo</h1><ul id="items"><li>milk</li><li>bread</li></ul></body></html>',
  );
  await a(`notes/2026/plan-${username}.html`, '<!DOCTYPE html><html><body><p>The plan: buy milk.</p></body></html>');
  await a(`home-${username}.html`);
  const other = await keyHolder(kiln);
  otherKey = other.key;
  team = `team${other.person.username}`;
  const t = await createTeam(kiln.services, { username: team, ownerId: other.person.id, plan: 'personal' });
  await setMember(contextOf(kiln.services, SYSTEM), { teamId: t.id, username, role: 'viewer' });
  await createPath(await actingAs(kiln.services, other.person.id), { ownerId: t.id, path: `shared-${team}.html` });
  await createPath(await actingAs(kiln.services, other.person.id), {
    ownerId: other.person.id,
    path: `mine-${team}.html`,
  });
});
after(() => kiln.stop());

for (const version of ['2025-06-18', '2025-11-25', '2026-07-28'] as ProtocolVersion[]) {
  test(`a client connects at ${version} and lists the tools with their schemas and annotations`, async () => {
    const client = await mcpClient(kiln, key, { protocolVersion: version });
    assert.equal(client.getNegotiatedProtocolVersion(), version);
    assert.equal(client.getServerVersion()?.name, 'kiln');
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      TOOLS.map((t) => t.name),
    );
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.outputSchema?.type, 'object', `${t.name} declares its output`);
      assert.ok((t.description ?? '').length > 60, `${t.name} is described for a model`);
      assert.equal(typeof t.annotations?.readOnlyHint, 'boolean', `${t.name} says whether it only reads`);
    }
    const listed = await call(client, 'list_documents', { glob: '**/*.html' });
    assert.ok(listed.items.some((i: any) => i.path === `notes/todo-${username}.html`));
    await client.close();
  });
}

test('list_documents: the caller’s tree and its teams, filtered by folder or glob, paginated', async () => {
  const client = await mcpClient(kiln, key);
  const all = await call(client, 'list_documents');
  assert.deepEqual(
    all.accounts.map((a: any) => [a.account, a.kind, a.role]),
    [
      [username, 'personal', 'owner'],
      [team, 'team', 'viewer'],
    ],
  );
  const paths = all.items.map((i: any) => `${i.account}/${i.path}`);
  assert.ok(paths.includes(`${team}/shared-${team}.html`), 'a team’s files are listed');
  assert.ok(!paths.some((p: string) => p.includes(`mine-${team}`)), 'another person’s files are not');
  const doc = all.items.find((i: any) => i.path === `notes/todo-${username}.html`);
  assert.equal(doc.kind, 'document');
  assert.match(doc.etag, /^[0-9a-f]{16}$/);
  assert.equal(doc.url, `http://${kiln.hostOf(username)}/notes/todo-${username}.html`);
  const folder = await call(client, 'list_documents', { folder: 'notes/2026' });
  assert.deepEqual(
    folder.items.map((i: any) => i.path),
    [`notes/2026/plan-${username}.html`],
  );
  const glob = await call(client, 'list_documents', { glob: 'notes/*.html' });
  assert.deepEqual(
    glob.items.map((i: any) => i.path),
    [`notes/todo-${username}.html`],
  );
  const first = await call(client, 'list_documents', { limit: 2 });
  assert.equal(first.items.length, 2);
  const second = await call(client, 'list_documents', { limit: 2, cursor: first.nextCursor });
  assert.notDeepEqual(second.items[0], first.items[0]);
  await client.close();
});

test('read_document: the HTML and etag, elements by selector, a team’s file; another account is not there', async () => {
  const client = await mcpClient(kiln, key);
  const path = `notes/todo-${username}.html`;
  const whole = await call(client, 'read_document', { path });
  assert.match(whole.html, /<li>milk<\/li>/);
  assert.equal(whole.truncated, false);
  const listed = await call(client, 'list_documents', { glob: path });
  assert.equal(whole.etag, listed.items[0].etag);
  const items = await call(client, 'read_document', { path, selector: '#items > li' });
  assert.deepEqual(items.elements, ['<li>milk</li>', '<li>bread</li>']);
  assert.equal(items.matched, 2);
  const cut = await call(client, 'read_document', { path, maxChars: 20 });
  assert.equal(cut.html.length, 20);
  assert.equal(cut.truncated, true);
  const rest = await call(client, 'read_document', { path, offset: cut.nextOffset });
  assert.equal(cut.html + rest.html, whole.html);
  const teamFile = await call(client, 'read_document', { account: team, path: `shared-${team}.html` });
  assert.match(teamFile.html, /<html/i);
  const stranger = await refused(client, 'read_document', { account: team.slice(4), path: `mine-${team}.html` });
  assert.equal(stranger.code, 'not-found');
  const missing = await refused(client, 'read_document', { path: 'nothing-here.html' });
  assert.deepEqual([missing.code, missing.status], ['not-found', 404]);
  await client.close();
});

test('search_documents: the documents containing a text, with snippets', async () => {
  const client = await mcpClient(kiln, key);
  const found = await call(client, 'search_documents', { query: 'MILK' });
  assert.deepEqual(found.results.map((r: any) => r.path).sort(), [
    `notes/2026/plan-${username}.html`,
    `notes/todo-${username}.html`,
  ]);
  assert.match(found.results[0].snippets[0], /milk/i);
  assert.equal(found.complete, true);
  const inFolder = await call(client, 'search_documents', { query: 'milk', folder: 'notes/2026' });
  assert.equal(inFolder.results.length, 1);
  await client.close();
});

/** A raw POST to the door. */
function post(headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) {
  const url = mcpUrl(kiln);
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; json: any }>((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, json: text ? JSON.parse(text) : null }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test('the door: 401 without a key or with a refused one (WWW-Authenticate), 403 from another site or Host, 405 on GET', async () => {
  const none = await post({});
  assert.equal(none.status, 401);
  assert.equal(none.json.code, 'missing-key');
  assert.match(String(none.headers['www-authenticate']), /^Bearer/);
  const wrong = await post({ authorization: `Bearer hcsk_${'0'.repeat(64)}` });
  assert.deepEqual([wrong.status, wrong.json.code], [401, 'invalid-key']);
  const viaHeader = await post({ 'x-api-key': key });
  assert.equal(viaHeader.status, 200);
  assert.ok(viaHeader.json.result.tools.length > 0);
  const evil = await post({ authorization: `Bearer ${key}`, origin: 'https://evil.example' });
  assert.deepEqual([evil.status, evil.json.code], [403, 'cross-origin']);
  const own = await post({ authorization: `Bearer ${key}`, origin: `http://${kiln.config.rootDomain}` });
  assert.equal(own.status, 200);
  const docHost = await post({ authorization: `Bearer ${key}`, origin: `http://${kiln.hostOf(username)}` });
  assert.equal(docHost.status, 403, 'a document host’s page is another site');
  const rebound = await post({ authorization: `Bearer ${key}`, host: `${kiln.hostOf(username)}` });
  assert.equal(rebound.status, 404, 'the door is on the main app only');
  const get = await fetch(mcpUrl(kiln), { headers: { authorization: `Bearer ${key}` } });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  void otherKey;
});

test('an answer as a client reading text only gets it: the JSON of the rest, then the page as it is stored; the structured answer has the page too', async () => {
  const path = `notes/todo-${username}.html`;
  const stored = (await kiln.client(kiln.hostOf(username)).get(`/${path}`)).text;
  const r = await post(
    { authorization: `Bearer ${key}` },
    { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'read_document', arguments: { path } } },
  );
  assert.equal(r.status, 200);
  const { content, structuredContent } = r.json.result;
  assert.deepEqual(
    content.map((c: any) => c.type),
    ['text', 'text'],
  );
  const meta = JSON.parse(content[0].text);
  assert.equal(meta.path, path);
  assert.equal(meta.etag, structuredContent.etag);
  assert.equal(meta.html, undefined, 'the page is not a JSON string inside the JSON');
  assert.match(stored, /<li>milk<\/li>/);
  assert.equal(content[1].text, stored);
  assert.equal(structuredContent.html, stored);
  const refusedCall = await post(
    { authorization: `Bearer ${key}` },
    { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'read_document', arguments: { path: 7 } } },
  );
  assert.equal(refusedCall.json.result.isError, true);
  assert.equal(refusedCall.json.result.structuredContent.error.code, 'invalid');
  assert.match(refusedCall.json.result.content[0].text, /^invalid: Invalid arguments for read_document: path: /);
});

test('each request is answered for its own caller: two keys’ calls and handshakes interleaved never cross', async () => {
  const ask = (k: string, id: number, method: string, params: Record<string, unknown>) =>
    post({ authorization: `Bearer ${k}` }, { jsonrpc: '2.0', id, method, params });
  const hello = (name: string) => ({
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name, version: '1' },
  });
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) => {
      const mine = i % 2 === 0;
      const k = mine ? key : otherKey;
      return i % 3 === 0
        ? ask(k, i, 'initialize', hello(mine ? 'Mine' : 'Theirs'))
        : ask(k, i, 'tools/call', { name: 'list_documents', arguments: {} });
    }),
  );
  answers.forEach((a, i) => {
    assert.equal(a.status, 200);
    assert.equal(a.json.id, i);
    if (i % 3 === 0) return;
    const accounts = a.json.result.structuredContent.accounts.map((x: any) => x.account);
    if (i % 2 === 0) assert.equal(accounts[0], username);
    else assert.notEqual(accounts[0], username);
  });
});

test('/_/meta says where agents connect', async () => {
  const res = await kiln.client().get('/_/meta');
  assert.equal(res.status, 200);
  assert.ok(res.json.extensions.includes('mcp'));
  assert.deepEqual(res.json.mcp, {
    endpoint: `${kiln.config.baseUrl}/_/mcp`,
    transport: 'streamable-http',
    protocolVersions: ['2025-06-18', '2025-11-25', '2026-07-28'],
    credentials: ['Authorization: Bearer <key>', 'X-API-Key: <key>'],
    stdio: 'node <a Kiln checkout>/bin/kiln.js mcp',
  });
});

test('the door routes each message as the SDK classifies it: a 2025 one to the handshake era, a 2026-07-28 one (envelope and headers) to the modern handler, the rest refused as the SDK refuses them', async () => {
  const auth = { authorization: `Bearer ${key}` };
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  const envelope = (version: string) => ({
    ...list,
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': version,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  /** The status and what the answer is: a result, or its error's JSON-RPC code. */
  const seen = async (headers: Record<string, string>, body: unknown) => {
    const r = await post({ ...auth, ...headers }, body);
    return [r.status, r.json?.result ? 'result' : (r.json?.error?.code ?? null)];
  };
  const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
  assert.deepEqual(
    {
      legacy: await seen({}, list),
      emptyVersion: await seen({ 'mcp-protocol-version': '' }, list),
      modern: await seen(modern, envelope('2026-07-28')),
      modernWithoutMethodHeader: await seen({ 'mcp-protocol-version': '2026-07-28' }, envelope('2026-07-28')),
      modernHeaderWithoutClaim: await seen(modern, list),
      claimUnder2025Header: await seen({}, envelope('2026-07-28')),
      claimWithoutHeader: await seen({ 'mcp-protocol-version': '' }, envelope('2026-07-28')),
      response: await seen(modern, { jsonrpc: '2.0', id: 1, result: {} }),
      notification: await seen({}, { jsonrpc: '2.0', method: 'notifications/initialized' }),
      notJsonRpc: await seen({}, { id: 1, method: 'tools/list' }),
      batch: await seen({}, [list]),
    },
    {
      legacy: [200, 'result'],
      emptyVersion: [400, -32000],
      modern: [200, 'result'],
      modernWithoutMethodHeader: [400, -32020],
      modernHeaderWithoutClaim: [400, -32602],
      claimUnder2025Header: [400, -32020],
      claimWithoutHeader: [400, -32020],
      response: [400, -32000],
      notification: [202, null],
      notJsonRpc: [400, -32600],
      batch: [200, 'result'],
    },
  );
});
