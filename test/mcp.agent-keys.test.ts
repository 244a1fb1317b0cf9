// The MCP door with agent keys (#47): the key made on the account page is the agent's credential at `/_/mcp`, as
// `Authorization: Bearer hcak_…`. Its scope holds on every tool (read-only writes nothing, a folder key sees and
// changes only its folder), its writes are named "<client> via agent key “<name>”" in the versions list and the
// activity feed, every answer carries the credential's RateLimit headers, and the operator's switch closes the
// door (403 mcp-off) for the instance or the person's plan.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { call, mcpClient, rawMcp, refused } from './support/mcp.ts';
import type { Client } from './support/client.ts';
import { createPath } from '../src/nodes/tree.ts';
import { contextOf } from '../src/context.ts';
import { SYSTEM } from '../src/access/caller.ts';
import { keyHolder } from './support/sync-client.ts';
import { until } from './support/wait.ts';

let kiln: TestKiln;
let owner: Client;
let username: string;
let accountId: number;
before(async () => {
  kiln = await startKiln();
  owner = kiln.client();
  const me = await signedIn(kiln, owner, { plan: 'personal' });
  username = me.username;
  accountId = me.id;
  const make = (path: string, html: string) =>
    createPath(contextOf(kiln.services, SYSTEM), { ownerId: me.id, path, html });
  await make(`notes/todo-${username}.html`, '<!DOCTYPE html><html><body><h1>Todo</h1><p>milk</p></body></html>');
  await make(`top-${username}.html`, '<!DOCTYPE html><html><body><p>top</p></body></html>');
});
after(() => kiln.stop());

const json = { headers: { 'x-requested-with': 'fetch' } };

/** A key made on the account page, as its person makes one. */
async function agentKey(name: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await owner.post('/_/account/agent-keys', { name, access: 'write', account: accountId, ...body }, json);
  assert.equal(res.status, 201, res.text);
  return res.json.key;
}

test('a read-write agent key edits a page: the version and the activity feed name the client and the key', async () => {
  const key = await agentKey('laptop');
  const agent = await mcpClient(kiln, key, { name: 'Claude Code' });
  const path = `notes/todo-${username}.html`;
  const edited = await call(agent, 'edit_document', {
    path,
    edits: [{ op: 'replaceText', find: '<p>milk</p>', replace: '<p>milk</p><p>eggs</p>' }],
  });
  assert.match(edited.etag, /\S/);
  const read = await call(agent, 'read_document', { path });
  assert.match(read.html, /<p>eggs<\/p>/);
  const versions = await call(agent, 'list_versions', { path });
  assert.equal(versions.versions[0].savedBy, 'Claude Code via agent key “laptop”');
  const feed = await owner.get('/_/activity');
  assert.equal(feed.status, 200, feed.text);
  const line = feed.json.activity.find((a: { path: string }) => a.path === path);
  assert.equal(line.client, 'Claude Code via agent key “laptop”');
  await agent.close();
});

test('an agent’s tree changes are named in the activity feed as its saves are: create, folders made, rename, move, upload, delete', async () => {
  const agent = await mcpClient(kiln, await agentKey('tree'), { name: 'Claude Code' });
  const named = 'Claude Code via agent key “tree”';
  const dir = `plans-${username}`;
  await call(agent, 'create_document', { path: `${dir}/a.html`, starter: 'notes' });
  await call(agent, 'rename_document', { path: `${dir}/a.html`, newName: 'b.html' });
  await call(agent, 'move_document', { path: `${dir}/b.html`, toFolder: `${dir}/old` });
  await call(agent, 'upload_file', { path: `${dir}/style.css`, text: 'body { color: navy }' });
  await call(agent, 'delete_document', { path: dir, recursive: true });
  await agent.close();
  const expected = [
    ['created', dir, null],
    ['saved', `${dir}/a.html`, null],
    ['renamed', `${dir}/b.html`, `${dir}/a.html`],
    ['created', `${dir}/old`, null],
    ['moved', `${dir}/old/b.html`, `${dir}/b.html`],
    ['saved', `${dir}/style.css`, null],
    ['deleted', dir, null],
  ];
  type Line = { kind: string; path: string; oldPath: string | null; client: string };
  // The lines of tree changes are written beside their events, after the answer.
  const lines = await until(
    async () => {
      const feed = await owner.get('/_/activity');
      assert.equal(feed.status, 200, feed.text);
      const mine = (feed.json.activity as Line[]).filter((a) => a.path.startsWith(dir)).reverse();
      return (
        expected.every(([kind, path, oldPath]) =>
          mine.some((l) => l.kind === kind && l.path === path && l.oldPath === oldPath),
        ) && mine
      );
    },
    { what: 'the activity lines of the agent’s tree changes' },
  );
  for (const l of lines) assert.equal(l.client, named, `${l.kind} ${l.path}`);
});

test('a read-only agent key reads and is refused every write (read-only-key)', async () => {
  const agent = await mcpClient(kiln, await agentKey('reader', { access: 'read' }));
  const path = `top-${username}.html`;
  assert.match((await call(agent, 'read_document', { path })).html, /top/);
  const no = await refused(agent, 'edit_document', {
    path,
    edits: [{ op: 'replaceText', find: '<p>top</p>', replace: '<p>changed</p>' }],
  });
  assert.deepEqual([no.status, no.code], [403, 'read-only-key']);
  const none = await refused(agent, 'create_document', { path: `new-${username}.html` });
  assert.deepEqual([none.status, none.code], [403, 'read-only-key']);
  await agent.close();
});

test('a folder key lists and reads only its folder, and makes nothing outside it', async () => {
  const agent = await mcpClient(kiln, await agentKey('notes only', { folder: 'notes' }));
  const listed = await call(agent, 'list_documents', {});
  const paths = listed.items.map((d: { path: string }) => d.path);
  assert.ok(paths.includes(`notes/todo-${username}.html`), paths.join());
  assert.ok(!paths.includes(`top-${username}.html`), 'the top level is outside the folder');
  const hidden = await refused(agent, 'read_document', { path: `top-${username}.html` });
  assert.equal(hidden.status, 404);
  const outside = await refused(agent, 'create_document', { path: `elsewhere-${username}.html` });
  assert.equal(outside.status, 403);
  await call(agent, 'create_document', { path: `notes/new-${username}.html` });
  await agent.close();
});

test('every answer carries the credential’s RateLimit headers; the operator’s switch closes the door (403 mcp-off)', async () => {
  const key = await agentKey('counted');
  const ask = () =>
    rawMcp(kiln, key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
  const first = await ask();
  assert.equal(first.status, 200, await first.text());
  const second = await ask();
  await second.text();
  const left = (r: Response) => Number(r.headers.get('ratelimit-remaining'));
  assert.ok(left(second) < left(first), `${left(first)} then ${left(second)} calls left`);

  const admin = kiln.client();
  await signedIn(kiln, admin, { isSuperadmin: true });
  try {
    assert.equal((await admin.post('/_/admin/mcp', { free: '1', personal: '1', maker: '1' }, json)).status, 200);
    const off = await ask();
    assert.equal(off.status, 403);
    assert.equal((await off.json()).code, 'mcp-off');
    assert.equal((await admin.post('/_/admin/mcp', { on: '1', free: '1', maker: '1' }, json)).status, 200);
    const plan = await ask();
    assert.equal(plan.status, 403);
    assert.match((await plan.json()).msg, /personal plan/);
  } finally {
    await admin.post('/_/admin/mcp', { on: '1', free: '1', personal: '1', maker: '1' }, json);
  }
  assert.equal((await ask()).status, 200);
});

test('MCP_CALLS_PER_MINUTE sets each credential’s calls a minute: with 2, the third call is 429 and the admin page says 2', async () => {
  const small = await startKiln({ env: { MCP_CALLS_PER_MINUTE: '2' } });
  try {
    const { key } = await keyHolder(small);
    const ask = () => rawMcp(small, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const r = await ask();
      answers.push({ status: r.status, limit: r.headers.get('ratelimit-limit'), code: (await r.json()).code });
    }
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 429],
    );
    assert.equal(answers[0].limit, '2');
    assert.equal(answers[2].code, 'rate-limited');
    const admin = small.client();
    await signedIn(small, admin, { isSuperadmin: true });
    assert.equal((await admin.get('/_/admin', json)).json.mcp.callsPerMinute, 2);
  } finally {
    await small.stop();
  }
});
