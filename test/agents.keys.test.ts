// Agent keys (#47): made, listed and revoked on the account page (shown once, hash only, with the lines to
// connect each client); resolved on the doors that take keys (`Authorization: Bearer hcak_…` or X-API-Key) into
// the key's person narrowed to its scope, here through the sync API: a read-only key changes nothing (403
// read-only-key), a folder key stays in its folder, a team viewer's key never writes the team's files, revoked
// and expired keys answer 401, a suspended person's 403, another account's key finds nothing here; the doors
// that cannot narrow (the sync stream, its control lane, the bus) refuse agent keys. The operator's switch
// (`mcp-off`) and the per-credential call limit the MCP door asks.
import { actingAs } from './support/people.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn } from './support/people.ts';
import { SyncApi, keyHolder } from './support/sync-client.ts';
import { until } from './support/wait.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createTeam, removeMember, setMember } from '../src/teams/teams.ts';
import { createPath } from '../src/nodes/tree.ts';
import { activityFeed } from '../src/nodes/activity.ts';
import { contextOf } from '../src/context.ts';
import { personCaller } from '../src/access/caller.ts';
import { actorOfPerson } from '../src/accounts/actors.ts';
import { personRow } from '../src/store/accounts.ts';
import { createAgentKey, resolveAgentKey } from '../src/agents/keys.ts';
import { assertMcpOn, countMcpCall } from '../src/agents/gate.ts';
import { limits } from '../src/limits.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const KEY = /^hcak_[0-9a-f]{64}$/;
const json = { headers: { 'x-requested-with': 'fetch' } };

/** The sync API with the key as `Authorization: Bearer` (no X-API-Key). */
class BearerApi extends SyncApi {
  override headers(extra: Record<string, string> = {}) {
    const h = super.headers(extra);
    delete h['x-api-key'];
    h.authorization = `Bearer ${this.conn.apiKey}`;
    return h;
  }
}
const port = () => Number(new URL(kiln.url).port);
const bearer = (key: string, team?: { id: number; username: string }) =>
  new BearerApi({
    port: port(),
    host: kiln.config.rootDomain,
    apiKey: key,
    ...(team ? { protocol: 2 as const, accountId: team.id, syncBase: `/_/team/${team.username}/sync` } : {}),
  });

/** A ctx signed in as the person (a session), for making keys without the page's hourly limit. */
async function sessionCtx(personId: number) {
  const row = await personRow(kiln.services.database.db, { id: personId });
  const actor = actorOfPerson(row!, 'session:0')!;
  return contextOf(kiln.services, personCaller('session', actor, null));
}

/** A key of the person (read-write, their own account, 90 days unless said). */
async function keyOf(personId: number, over: { readOnly?: boolean; accountId?: number; folder?: string } = {}) {
  const ctx = await sessionCtx(personId);
  const made = await createAgentKey(ctx, { name: 'test', readOnly: false, accountId: personId, days: 90, ...over });
  return made.key;
}

/** A paid person with `notes/in-<name>.html` and `out-<name>.html` (document names are unique across Kiln). */
async function withFiles() {
  const person = await createPerson(kiln.services, newPerson({ plan: 'personal' }));
  const inside = await createPath(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    path: `notes/in-${person.username}.html`,
    html: '<html><body>in</body></html>',
  });
  const outside = await createPath(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    path: `out-${person.username}.html`,
    html: '<html><body>out</body></html>',
  });
  return { person, inside, outside, folderId: inside.parent_id };
}

test('the account page makes a key (201, shown once, hash only, chosen expiry, the lines to connect each client), lists it and revokes it', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c, { plan: 'personal' });
  const res = await c.post(
    '/_/account/agent-keys',
    { name: 'laptop', access: 'write', account: me.id, days: 30 },
    json,
  );
  assert.equal(res.status, 201, res.text);
  const key: string = res.json.key;
  assert.match(key, KEY);
  assert.equal(res.json.name, 'laptop');
  assert.equal(res.json.readOnly, false);
  assert.deepEqual(res.json.account, { id: me.id, username: me.username, kind: 'personal' });
  const days = (Date.parse(res.json.expiresAt) - Date.now()) / 86_400_000;
  assert.ok(days > 29 && days <= 30, String(days));
  const root = kiln.config.baseUrl.replace(/\/$/, '');
  assert.equal(res.json.connect.url, `${root}/_/mcp`);
  assert.equal(
    res.json.connect.claudeCode,
    `claude mcp add --transport http kiln ${root}/_/mcp --header "Authorization: Bearer ${key}"`,
  );
  // Never `npx kiln`: the npm package of that name is someone else's, and would be handed the key. The test Kiln
  // is on a *.localhost address, the same machine: the bridge is this checkout's.
  assert.match(res.json.connect.claudeCodeStdio, new RegExp(`KILN_KEY=${key} -- node ".*/bin/kiln\\.js" mcp$`));
  assert.doesNotMatch(JSON.stringify(res.json.connect), /npx/);
  assert.equal(JSON.parse(res.json.connect.claudeDesktop).mcpServers.kiln.env.KILN_KEY, key);
  assert.equal(JSON.parse(res.json.connect.cursor).mcpServers.kiln.headers.Authorization, `Bearer ${key}`);

  // Only the SHA-256 of the key is stored.
  const rows = await kiln.services.database.db
    .selectFrom('agent_keys')
    .selectAll()
    .where('account_id', '=', me.id)
    .execute();
  assert.equal(rows.length, 1);
  assert.equal(rows[0].key_hash, createHash('sha256').update(key).digest('hex'));
  assert.ok(!JSON.stringify(rows).includes(key.slice(5)));

  // It works (Bearer and X-API-Key alike); "last used" is recorded.
  assert.equal((await bearer(key).raw('GET', '/nodes')).status, 200);
  const viaHeader = new SyncApi({ port: port(), host: kiln.config.rootDomain, apiKey: key });
  assert.equal((await viaHeader.raw('GET', '/status')).json.username, me.username);
  const listed = async () => (await c.get('/_/account', json)).json.agents.keys;
  await until(async () => (await listed())[0].lastUsedAt !== null, { what: 'last used recorded' });
  const [k] = await listed();
  assert.deepEqual(
    { id: k.id, name: k.name, prefix: k.prefix, readOnly: k.readOnly, folder: k.folder, state: k.state },
    { id: res.json.id, name: 'laptop', prefix: key.slice(0, 12), readOnly: false, folder: null, state: 'active' },
  );
  assert.ok(!(await c.get('/_/account', json)).text.includes(key), 'the list never holds the key');

  // Someone else cannot revoke it.
  const other = kiln.client();
  await signedIn(kiln, other, { plan: 'personal' });
  assert.equal((await other.post(`/_/account/agent-keys/${k.id}/revoke`, {}, json)).status, 404);
  // Its person can: the next call is refused.
  const revoked = await c.post(`/_/account/agent-keys/${k.id}/revoke`, {}, json);
  assert.equal(revoked.status, 200, revoked.text);
  assert.match(revoked.json.msg, /Revoked the agent key “laptop”/);
  const refused = await bearer(key).raw('GET', '/nodes');
  assert.equal(refused.status, 401);
  assert.equal(refused.json.code, 'revoked-key');
  assert.equal((await listed())[0].state, 'revoked');
  const again = await c.post(`/_/account/agent-keys/${k.id}/revoke`, {}, json);
  assert.match(again.json.msg, /already revoked/);
});

test('a browser makes a key with the form: POST-redirect-GET to the agents section, the key and the lines shown once; revoking answers there', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c, { plan: 'personal' });
  const html = { form: true, headers: { accept: 'text/html' } };
  const res = await c.post(
    '/_/account/agent-keys',
    { name: 'desk', access: 'read', account: String(me.id), days: '7' },
    html,
  );
  assert.equal(res.status, 303);
  assert.equal(res.headers.location, '/_/account?at=agents#agents');
  const shown = await c.page('/_/account?at=agents');
  const key = /hcak_[0-9a-f]{64}/.exec(shown.text)?.[0];
  assert.ok(key, 'the page shows the key');
  assert.match(shown.text, /shown only once/);
  assert.ok(shown.text.includes(`claude mcp add --transport http kiln`));
  assert.ok(shown.text.includes('claude_desktop_config.json'));
  assert.ok(shown.text.includes('.cursor/mcp.json'));
  assert.match(String(shown.headers['cache-control']), /no-store/);
  const again = await c.page('/_/account');
  assert.ok(!again.text.includes(key!), 'a reload shows it no more');
  assert.match(again.text, /desk/);
  assert.match(again.text, /read only/);

  const id = (await c.get('/_/account', json)).json.agents.keys[0].id;
  const revoked = await c.post(`/_/account/agent-keys/${id}/revoke`, {}, html);
  assert.equal(revoked.status, 303);
  assert.match(String(revoked.headers.location), /^\/_\/account\?msg=.*&at=agents#agents$/);
  const page = await c.page(String(revoked.headers.location).replace(/#.*/, ''));
  assert.match(page.text, /Revoked the agent key “desk”/);
  // A refusal comes back to the section too.
  const bad = await c.post('/_/account/agent-keys', { name: '', access: 'write', account: String(me.id) }, html);
  assert.equal(bad.status, 302);
  assert.match(String(bad.headers.location), /msgType=error.*&at=agents#agents$/);
});

test('what a key may be made for: a name, a lifetime offered, an account of the person (own or a team of theirs), a folder that is there', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c, { plan: 'personal' });
  const make = (body: Record<string, unknown>) =>
    c.post('/_/account/agent-keys', { name: 'k', access: 'write', account: me.id, ...body }, json);
  const noName = await make({ name: '  ' });
  assert.equal(noName.status, 400);
  assert.equal(noName.json.code, 'invalid');
  assert.equal((await make({ days: 5 })).json.code, 'invalid');
  assert.equal((await make({ name: 'x'.repeat(61) })).json.code, 'too-long');
  const notMine = await createTeam(kiln.services, {
    username: `nm-${me.username}`,
    ownerId: (await createPerson(kiln.services, newPerson())).id,
    plan: 'personal',
  });
  assert.equal((await make({ account: notMine.id })).status, 404);
  const noFolder = await make({ folder: 'nowhere' });
  assert.equal(noFolder.status, 400);
  assert.match(noFolder.json.msg, /no folder "nowhere"/);
  // Unsigned: 401.
  assert.equal(
    (await kiln.client().post('/_/account/agent-keys', { name: 'k', access: 'write', account: me.id }, json)).status,
    401,
  );
});

test('a read-only key reads and changes nothing: 403 read-only-key on write, create, rename, move and delete', async () => {
  const { person, inside, folderId } = await withFiles();
  const api = bearer(await keyOf(person.id, { readOnly: true }));
  const read = await api.raw('GET', `/nodes/${inside.id}/content`);
  assert.equal(read.status, 200, read.text);
  assert.match(read.json.content, /in/);
  const attempts = [
    await api.raw('PUT', `/nodes/${inside.id}/content`, { body: { content: '<html><body>x</body></html>' } }),
    await api.raw('POST', '/nodes', {
      body: { type: 'site', name: `new-${person.username}.html`, parentId: folderId, content: '<html></html>' },
    }),
    await api.raw('PATCH', `/nodes/${inside.id}/rename`, { body: { newName: 'other.html' } }),
    await api.raw('PATCH', `/nodes/${inside.id}/move`, { body: { targetParentId: 0 } }),
    await api.raw('DELETE', `/nodes/${inside.id}`),
  ];
  for (const r of attempts) {
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.code, 'read-only-key');
  }
  assert.match((await api.raw('GET', `/nodes/${inside.id}/content`)).json.content, /in/);
});

test('a folder key lists, reads and writes its folder only: outside is not there, the top level is not its to add to', async () => {
  const { person, inside, outside, folderId } = await withFiles();
  const api = bearer(await keyOf(person.id, { folder: 'NOTES/' }));
  const listed = (await api.list()).nodes.map((n) => (n.path ? `${n.path}/${n.name}` : n.name)).sort();
  assert.deepEqual(listed, ['notes', `notes/in-${person.username}.html`]);
  const out = await api.raw('GET', `/nodes/${outside.id}/content`);
  assert.equal(out.status, 404);
  assert.equal(out.json.code, 'node-not-found');
  const write = await api.raw('PUT', `/nodes/${outside.id}/content`, { body: { content: '<html>x</html>' } });
  assert.equal(write.status, 404);
  const top = await api.raw('POST', '/nodes', {
    body: { type: 'site', name: `top-${person.username}.html`, parentId: 0, content: '<html></html>' },
  });
  assert.equal(top.status, 403, top.text);
  assert.equal(top.json.code, 'key-scope');
  const away = await api.raw('PATCH', `/nodes/${inside.id}/move`, { body: { targetParentId: 0 } });
  assert.equal(away.status, 403);
  assert.equal(away.json.code, 'key-scope');
  // Inside, it writes like its person.
  const put = await api.raw('PUT', `/nodes/${inside.id}/content`, {
    body: { content: '<html><body>new</body></html>' },
  });
  assert.equal(put.status, 200, put.text);
  const made = await api.raw('POST', '/nodes', {
    body: { type: 'site', name: `more-${person.username}.html`, parentId: folderId, content: '<html></html>' },
  });
  assert.equal(made.status, 201, made.text);
  // A working key is a credential: the general limiter of anonymous writes does not count it.
  assert.equal(made.headers['ratelimit-limit'], undefined);
  assert.ok(top.headers['ratelimit-limit'] === undefined);
  // The activity names the key.
  const feed = await activityFeed(await sessionCtx(person.id), { ownerId: person.id });
  assert.ok(
    feed.some((f) => f.client === 'agent key “test”' && f.by === person.username),
    JSON.stringify(feed.slice(0, 3)),
  );

  // It follows its folder when renamed; when the folder is deleted it is refused.
  const whole = bearer(await keyOf(person.id));
  const renamed = await whole.raw('PATCH', `/nodes/${folderId}/rename`, { body: { newName: 'kept' } });
  assert.equal(renamed.status, 200, renamed.text);
  const now = (await api.list()).nodes.map((n) => (n.path ? `${n.path}/${n.name}` : n.name)).sort();
  assert.deepEqual(now, ['kept', `kept/in-${person.username}.html`, `kept/more-${person.username}.html`]);
  assert.equal((await api.raw('GET', `/nodes/${inside.id}/content`)).status, 200);
  assert.equal((await whole.raw('DELETE', `/nodes/${folderId}?cascade=true`)).status, 200);
  const gone = await api.raw('GET', '/nodes');
  assert.equal(gone.status, 401);
  assert.equal(gone.json.code, 'revoked-key');
  assert.match(gone.json.msg, /folder .* is gone/);
});

test("team keys: a viewer's key never writes the team's files; an editor's writes them; leaving the team ends it; another base is out of scope", async () => {
  const owner = await createPerson(kiln.services, newPerson({ plan: 'personal' }));
  const viewer = await createPerson(kiln.services, newPerson({ plan: 'personal' }));
  const editor = await createPerson(kiln.services, newPerson({ plan: 'free' }));
  const team = await createTeam(kiln.services, {
    username: `tk-${owner.username}`,
    ownerId: owner.id,
    plan: 'personal',
  });
  await setMember(await actingAs(kiln.services, owner.id), {
    teamId: team.id,
    username: viewer.username,
    role: 'viewer',
  });
  await setMember(await actingAs(kiln.services, owner.id), {
    teamId: team.id,
    username: editor.username,
    role: 'editor',
  });
  const doc = await createPath(await actingAs(kiln.services, owner.id), {
    ownerId: team.id,
    path: `team-${team.username}.html`,
    html: '<html><body>t</body></html>',
  });

  const viewerKey = bearer(await keyOf(viewer.id, { accountId: team.id }), team);
  const refused = await viewerKey.raw('PUT', `/nodes/${doc.id}/content`, {
    body: { content: '<html>v</html>' },
    headers: { 'if-match': `"${doc.checksum}"` },
  });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.code, 'viewer');

  const editorKey = await keyOf(editor.id, { accountId: team.id });
  const current = await bearer(editorKey, team).raw('GET', `/nodes/${doc.id}/content`);
  assert.equal(current.status, 200, current.text);
  const wrote = await bearer(editorKey, team).raw('PUT', `/nodes/${doc.id}/content`, {
    body: { content: '<html><body>e</body></html>' },
    headers: { 'if-match': `"${current.json.etag}"` },
  });
  assert.equal(wrote.status, 200, wrote.text);
  // The team's key does not reach its person's own files.
  const own = await bearer(editorKey).raw('GET', '/nodes');
  assert.equal(own.status, 403);
  assert.equal(own.json.code, 'key-scope');
  // Nor does a key of one's own account reach the team.
  const ownKey = bearer(await keyOf(editor.id), team);
  assert.equal((await ownKey.raw('GET', '/nodes')).json.code, 'key-scope');

  await removeMember(await actingAs(kiln.services, owner.id), { teamId: team.id, personId: editor.id });
  const gone = await bearer(editorKey, team).raw('GET', '/nodes');
  assert.equal(gone.status, 401);
  assert.equal(gone.json.code, 'revoked-key');
});

test("expired, unknown and malformed keys answer 401; a suspended person's 403; another account's key finds nothing of this account", async () => {
  const { person, inside } = await withFiles();
  const key = await keyOf(person.id);
  await kiln.services.database.db
    .updateTable('agent_keys')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('key_hash', '=', createHash('sha256').update(key).digest('hex'))
    .execute();
  const expired = await bearer(key).raw('GET', '/nodes');
  assert.equal(expired.status, 401);
  assert.equal(expired.json.code, 'expired-key');
  assert.equal((await bearer(`hcak_${'0'.repeat(64)}`).raw('GET', '/nodes')).json.code, 'invalid-key');
  assert.equal((await bearer('hcak_nope').raw('GET', '/nodes')).json.code, 'invalid-key');

  const stranger = await createPerson(kiln.services, newPerson({ plan: 'personal' }));
  const theirs = bearer(await keyOf(stranger.id));
  const read = await theirs.raw('GET', `/nodes/${inside.id}/content`);
  assert.equal(read.status, 404);
  assert.equal(read.json.code, 'node-not-found');
  assert.equal(
    (await theirs.raw('PUT', `/nodes/${inside.id}/content`, { body: { content: '<html></html>' } })).status,
    404,
  );
  assert.equal((await theirs.raw('DELETE', `/nodes/${inside.id}`)).status, 404);

  const live = await keyOf(person.id);
  await kiln.services.database.db
    .updateTable('accounts')
    .set({ suspended_at: new Date().toISOString() })
    .where('id', '=', person.id)
    .execute();
  const suspended = await bearer(live).raw('GET', '/nodes');
  assert.equal(suspended.status, 403);
  assert.equal(suspended.json.code, 'account-suspended');
});

test('the sync stream, its control lane and the message bus take no agent key (403 key-scope); a sync key still works there', async () => {
  const { person } = await withFiles();
  const key = await keyOf(person.id);
  const api = bearer(key);
  const stream = await api.raw('GET', '/_/sync/stream');
  assert.equal(stream.status, 403, stream.text);
  assert.equal(stream.json.code, 'key-scope');
  const control = await api.raw('POST', '/_/sync/control', { body: { type: 'x', v: 1, payload: {} } });
  assert.equal(control.json.code, 'key-scope');
  const bus = await kiln
    .client(kiln.hostOf(person.username))
    .post('/_/bus/send', { channel: 'c', data: {} }, { headers: { 'x-api-key': key } });
  assert.equal(bus.status, 403, bus.text);
  assert.equal(bus.json.code, 'key-scope');
  const sync = await keyHolder(kiln);
  assert.equal((await sync.api.raw('POST', '/_/sync/control', { body: { type: 'x', v: 1, payload: {} } })).status, 200);
});

test('the operator turns agents off for the instance or a plan: keys are not made (403 mcp-off), the page says why, assertMcpOn refuses', async () => {
  const admin = kiln.client();
  await signedIn(kiln, admin, { isSuperadmin: true });
  const c = kiln.client();
  const me = await signedIn(kiln, c, { plan: 'personal' });
  const key = await keyOf(me.id);
  const { actor } = await resolveAgentKey(kiln.services, key);
  const keyCtx = contextOf(kiln.services, personCaller('key', actor, null));
  assert.doesNotThrow(() => assertMcpOn(keyCtx));
  try {
    const off = await admin.post('/_/admin/mcp', { on: '1', free: '1', maker: '1' }, json);
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.json.mcp, { on: true, plans: { free: true, personal: false, maker: true } });
    assert.throws(
      () => assertMcpOn(keyCtx),
      (e: any) => e.status === 403 && e.code === 'mcp-off' && /personal plan/.test(e.message),
    );
    const refused = await c.post('/_/account/agent-keys', { name: 'k', access: 'write', account: me.id }, json);
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, 'mcp-off');
    assert.match((await c.page('/_/account')).text, /not included in the personal plan/);
    await admin.post('/_/admin/mcp', { free: '1', personal: '1', maker: '1' }, json);
    assert.throws(
      () => assertMcpOn(keyCtx),
      (e: any) => e.code === 'mcp-off' && /off on this Kiln/.test(e.message),
    );
    const page = await admin.page('/_/admin');
    assert.match(page.text, /Agents \(MCP\)/);
  } finally {
    await admin.post('/_/admin/mcp', { on: '1', free: '1', personal: '1', maker: '1' }, json);
  }
  assert.doesNotThrow(() => assertMcpOn(keyCtx));
  // Only administrators switch it.
  assert.equal((await c.post('/_/admin/mcp', { on: '1' }, json)).status, 403);
});

test('each credential has its own MCP calls a minute (429 rate-limited past limits.mcpCalls)', async () => {
  const person = await createPerson(kiln.services, newPerson({ plan: 'personal' }));
  const [a, b] = [await keyOf(person.id), await keyOf(person.id)];
  const ctxOf = async (key: string) =>
    contextOf(kiln.services, personCaller('key', (await resolveAgentKey(kiln.services, key)).actor, null));
  const ctxA = await ctxOf(a);
  for (let i = 0; i < limits.mcpCalls.max; i++) assert.ok((await countMcpCall(ctxA)).allowed);
  await assert.rejects(
    countMcpCall(ctxA),
    (e: any) => e.status === 429 && e.code === 'rate-limited' && e.extra.retryAfter > 0,
  );
  assert.equal((await countMcpCall(await ctxOf(b))).remaining, limits.mcpCalls.max - 1, 'the other key counts apart');
});
