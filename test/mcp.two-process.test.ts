// The MCP door behind a balancer (#47 "Show it"): two `kiln serve` processes on one PostgreSQL and one Redis, and
// one client of the official SDK whose requests go to the two in turn. The door keeps nothing between requests, so
// either process answers any call: a 2025-11-25 client's handshake on one and its calls on the other, a
// 2026-07-28 client's calls with no handshake at all; a document created through one is edited through the other,
// read back through the first, and a stale etag is refused whichever process hears it.
// A 2025 client names itself only in its `initialize`: the process that answers it keeps the name with the
// credential in the database (src/mcp/agent.ts), so the other names the agent alike; the 2026-07-28 client names
// itself in every request. Runs only with KILN_TEST_STORAGE=postgres (which brings Redis).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as McpClient, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import { storage, freshPostgres } from './support/kiln.ts';
import { spawnKilns, type ChildKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { call, refused } from './support/mcp.ts';
import { newPerson } from './support/people.ts';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';

const REDIS_URL = process.env.KILN_TEST_REDIS_URL;
const skip =
  storage === 'postgres' && REDIS_URL
    ? false
    : 'two processes need PostgreSQL and Redis: run with KILN_TEST_STORAGE=postgres (bash scripts/test.sh)';

const ROOT = 'kiln.localhost:8080';
const page = (items: string[]) =>
  `<!DOCTYPE html><html><body><h1>List</h1><ul id="items">${items.map((i) => `<li>${i}</li>`).join('')}</ul></body></html>`;

let a: ChildKiln;
let b: ChildKiln;
let dropDb: (() => Promise<void>) | undefined;
const dirs: string[] = [];
let username: string;
let key: string;
let pgUrl: string;
const env = (dir: string) => ({
  DATABASE_URL: pgUrl,
  REDIS_URL: REDIS_URL!,
  DATA_DIR: dir,
  ROOT_DOMAIN: ROOT,
  LOG_LEVEL: 'error',
});

before(async () => {
  if (skip) return;
  const pgdb = await freshPostgres();
  dropDb = pgdb.drop;
  pgUrl = pgdb.url;
  for (let i = 0; i < 3; i++) dirs.push(mkdtempSync(path.join(os.tmpdir(), 'kiln-mcp2p-')));
  // The database (migrations, a person, a sync key) is set up from this process.
  const setup = await createServices(loadConfig(env(dirs[2])));
  try {
    const person = await createPerson(setup, newPerson({ plan: 'personal' }));
    username = person.username;
    key = (await createSyncKey(setup, person.id)).key;
  } finally {
    await closeServices(setup);
  }
  [a, b] = await spawnKilns([env(dirs[0]), env(dirs[1])]);
});

after(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await dropDb?.();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The processes in turn, as a round-robin balancer would send one client's requests; `heard` says which process
 *  answered each JSON-RPC message (by its method, and the tool's name for a call). */
class Balancer {
  turn = 0;
  heard: Array<{ process: 'a' | 'b'; what: string }> = [];
  /** The process the next request goes to. */
  next = (): 'a' | 'b' => (this.turn % 2 === 0 ? 'a' : 'b');
  fetch: FetchLike = async (url, init = {}) => {
    const which = this.next();
    this.turn++;
    const kiln = which === 'a' ? a : b;
    const u = new URL(String(url));
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    const msg = body ? JSON.parse(body) : {};
    this.heard.push({ process: which, what: msg.params?.name ?? msg.method ?? init.method ?? 'GET' });
    // The main app's Host, whichever port: both processes serve the same Kiln.
    const res = await new Client(kiln.port, u.host).request(init.method ?? 'GET', u.pathname + u.search, {
      headers,
      body,
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
    const nullBody = res.status === 202 || res.status === 204;
    return new Response(nullBody ? null : new Uint8Array(res.body), { status: res.status, headers: out });
  };
}

async function connect(name: string, protocolVersion: '2025-11-25' | '2026-07-28') {
  const balancer = new Balancer();
  const transport = new StreamableHTTPClientTransport(new URL(`http://${ROOT}/_/mcp`), {
    fetch: balancer.fetch,
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const modern = protocolVersion === '2026-07-28';
  const client = new McpClient(
    { name, version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : { supportedProtocolVersions: [protocolVersion] },
  );
  await client.connect(transport);
  // Listed once, so the SDK checks every structured answer against the tool's output schema.
  await client.listTools();
  return { client, balancer };
}

/** A tool call that the balancer sends to `on` (asserted before it is sent). */
async function callOn(c: Awaited<ReturnType<typeof connect>>, on: 'a' | 'b', name: string, args: object) {
  assert.equal(c.balancer.next(), on, `${name} goes to process ${on}`);
  return call(c.client, name, args as Record<string, unknown>);
}

/** One client's document through both processes in turn: created on b, edited on a, a stale edit refused on b,
 *  read back on a, listed on b, its versions listed on a and on b (alike). The versions, newest first. */
async function roundTrip(c: Awaited<ReturnType<typeof connect>>, docPath: string) {
  const listed = await callOn(c, 'a', 'list_documents', {});
  assert.ok(!listed.items.some((i: { path: string }) => i.path === docPath), 'not there yet');
  const made = await callOn(c, 'b', 'create_document', { path: docPath, html: page(['milk']) });
  const edited = await callOn(c, 'a', 'edit_document', {
    path: docPath,
    etag: made.etag,
    edits: [{ op: 'replaceText', find: '<li>milk</li>', replace: '<li>oat milk</li>' }],
  });
  assert.equal(edited.changed, true);
  assert.notEqual(edited.etag, made.etag);
  // The etag read before the edit on a is stale on b too: refused with the current one, nothing changed.
  assert.equal(c.balancer.next(), 'b');
  const stale = await refused(c.client, 'edit_document', {
    path: docPath,
    etag: made.etag,
    edits: [{ op: 'replaceText', find: '<li>milk</li>', replace: '<li>rice milk</li>' }],
  });
  assert.equal(stale.code, 'conflict');
  assert.equal(stale.status, 412);
  const read = await callOn(c, 'a', 'read_document', { path: docPath });
  assert.equal(read.html, page(['oat milk']));
  assert.equal(read.etag, edited.etag);
  const again = await callOn(c, 'b', 'list_documents', {});
  const item = again.items.find((i: { path: string }) => i.path === docPath);
  assert.ok(item, `listed on b: ${JSON.stringify(again.items)}`);
  assert.equal(item.etag, edited.etag);
  const onA = await callOn(c, 'a', 'list_versions', { path: docPath });
  const onB = await callOn(c, 'b', 'list_versions', { path: docPath });
  assert.deepEqual(onB, onA, 'both processes list the same versions');
  assert.equal(onA.total, 2, 'the refused edit saved nothing');
  return onA.versions as Array<{ number: number; savedBy: string; username: string }>;
}

test('2025-11-25: the handshake on one process, the calls on both in turn; both name the agent as its handshake did', {
  skip,
}, async () => {
  const c = await connect('Claude Code', '2025-11-25');
  try {
    assert.deepEqual(
      c.balancer.heard.map((h) => `${h.process}:${h.what}`),
      // The SDK's GET (a stream for the server's messages) is answered 405 (stateless: none) and it goes on.
      ['a:initialize', 'b:notifications/initialized', 'a:GET', 'b:tools/list'],
      'the handshake on a, the calls after it on both',
    );
    const versions = await roundTrip(c, `2025-${username}.html`);
    const grant = `sync key ${key.slice(0, 12)}…`;
    // Version 1 was saved by b, which never saw the handshake, version 2 by a, which answered it: both name the
    // client as it named itself there.
    assert.deepEqual(
      versions.map((v) => [v.number, v.savedBy, v.username]),
      [
        [2, `Claude Code via ${grant}`, username],
        [1, `Claude Code via ${grant}`, username],
      ],
    );
  } finally {
    await c.client.close();
  }
});

test('2026-07-28: no handshake, the calls on both in turn; both processes name the agent alike', { skip }, async () => {
  const c = await connect('Cursor', '2026-07-28');
  try {
    assert.deepEqual(
      c.balancer.heard.map((h) => `${h.process}:${h.what}`),
      // The SDK asks server/discover first (its pin mode): a request like any other, no session.
      ['a:server/discover', 'b:tools/list'],
      'no handshake',
    );
    const versions = await roundTrip(c, `2026-${username}.html`);
    const agent = `Cursor via sync key ${key.slice(0, 12)}…`;
    assert.deepEqual(
      versions.map((v) => [v.number, v.savedBy]),
      [
        [2, agent],
        [1, agent],
      ],
    );
  } finally {
    await c.client.close();
  }
});
