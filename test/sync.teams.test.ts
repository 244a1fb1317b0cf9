// Teams through the sync API and the dashboard: discovery (roles, sync bases, enabled/reason), the
// team base's protocol-2 identity (428 account-identity-required, 409 account-changed, 404 for
// strangers, 403 viewer), conditional team writes (428 precondition-required), scopes kept apart,
// a team's plan (402), and teams made from the dashboard and the shell.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { keyHolder, kilnCmd, SyncApi, checksum } from './support/sync-client.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { channels, type KilnEvent } from '../src/events/bus.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

/** A team with a paid plan, its owner, an editor and a viewer (each with a key), and a stranger. */
async function crew(plan: 'personal' | 'free' = 'personal') {
  const owner = await keyHolder(kiln);
  const editor = await keyHolder(kiln, { plan: 'free' }); // a team-role person without a plan of their own
  const viewer = await keyHolder(kiln);
  const stranger = await keyHolder(kiln);
  const team = await createTeam(kiln.services, {
    username: `t-${owner.person.username}`,
    ownerId: owner.person.id,
    plan,
  });
  await setMember(await actingAs(kiln.services, owner.person.id), {
    teamId: team.id,
    username: editor.person.username,
    role: 'editor',
  });
  await setMember(await actingAs(kiln.services, owner.person.id), {
    teamId: team.id,
    username: viewer.person.username,
    role: 'viewer',
  });
  const base = `/_/team/${team.username}/sync`;
  const on = (h: { api: SyncApi }) => new SyncApi({ ...h.api.conn, protocol: 2, accountId: team.id, syncBase: base });
  return { owner, editor, viewer, stranger, team, base, on };
}

test('discovery lists the personal account and every team with role, numeric id, sync base and whether it syncs', async () => {
  const { owner, editor, viewer, team } = await crew();
  const free = await createTeam(kiln.services, {
    username: `f-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'free',
  });
  const d = await owner.api.accounts();
  assert.equal(d.accounts.length, 3);
  const t = d.accounts.find((a: any) => a.id === team.id);
  assert.deepEqual(
    { id: t.id, kind: t.kind, username: t.username, role: t.role, syncBase: t.syncBase, sync: t.sync },
    {
      id: team.id,
      kind: 'team',
      username: team.username,
      role: 'owner',
      syncBase: `/_/team/${team.username}/sync`,
      sync: { enabled: true, reason: null },
    },
  );
  assert.match(t.syncBase, /^\/_\/[a-z0-9/_-]*sync$/i);
  assert.deepEqual(d.accounts.find((a: any) => a.id === free.id).sync, { enabled: false, reason: 'payment-required' });
  // An editor without a plan of their own: personal paused, the team syncs.
  const de = await editor.api.accounts();
  assert.deepEqual(de.accounts.find((a: any) => a.kind === 'personal').sync, {
    enabled: false,
    reason: 'payment-required',
  });
  assert.deepEqual(de.accounts.find((a: any) => a.id === team.id).sync, { enabled: true, reason: null });
  assert.equal(de.accounts.find((a: any) => a.id === team.id).role, 'editor');
  const dv = await viewer.api.accounts();
  assert.deepEqual(dv.accounts.find((a: any) => a.id === team.id).sync, { enabled: false, reason: 'viewer' });
});

test("team routes need X-Sync-Protocol: 2 and X-Sync-Account-ID (428 account-identity-required); the id must be the team's", async () => {
  const { owner, team, base } = await crew();
  const plain = new SyncApi({ ...owner.api.conn, syncBase: base });
  for (const headers of [
    {},
    { 'x-sync-protocol': '2' },
    { 'x-sync-account-id': String(team.id) },
    { 'x-sync-protocol': '1', 'x-sync-account-id': String(team.id) },
  ] as Record<string, string>[]) {
    for (const suffix of ['/nodes', '/status']) {
      const r = await plain.raw('GET', suffix, { headers });
      assert.equal(r.status, 428, `${suffix} ${JSON.stringify(headers)}`);
      assert.equal(r.json.code, 'account-identity-required');
      assert.equal(r.json.msgType, 'error');
    }
  }
  const wrongId = await plain.raw('GET', '/nodes', {
    headers: { 'x-sync-protocol': '2', 'x-sync-account-id': String(owner.person.id) },
  });
  assert.equal(wrongId.status, 409);
  assert.equal(wrongId.json.code, 'account-changed');
  const ok = await plain.raw('GET', '/nodes', {
    headers: { 'x-sync-protocol': '2', 'x-sync-account-id': String(team.id) },
  });
  assert.equal(ok.status, 200);
  assert.equal(ok.json.complete, true);
  const status = await plain.raw('GET', '/status', {
    headers: { 'x-sync-protocol': '2', 'x-sync-account-id': String(team.id) },
  });
  assert.equal(status.json.username, team.username);
  // A bad key is still 401 first.
  const badKey = await new SyncApi({ ...plain.conn, apiKey: 'nope' }).raw('GET', '/nodes');
  assert.equal(badKey.status, 401);
});

test('strangers get 404 not-found; viewers get 403 viewer on every route; unknown teams 404', async () => {
  const { owner, viewer, stranger, on, team } = await crew();
  const doc = await on(owner).create({
    type: 'site',
    name: `v-${team.username}.html`,
    parentId: 0,
    content: '<html><p>t</p></html>',
  });
  const s = await on(stranger).raw('GET', '/nodes');
  assert.equal(s.status, 404);
  assert.equal(s.json.code, 'not-found');
  const v = on(viewer);
  for (const [method, suffix, body] of [
    ['GET', '/nodes', undefined],
    ['GET', `/nodes/${doc.id}/content`, undefined],
    ['PUT', `/nodes/${doc.id}/content`, { content: 'x' }],
    ['POST', '/nodes', { type: 'folder', name: 'x', parentId: 0 }],
    ['DELETE', `/nodes/${doc.id}?expectedVersion=${doc.structureVersion}`, undefined],
  ] as const) {
    const r = await v.raw(method, suffix, { body, headers: { 'if-match': `"${doc.etag}"` } });
    assert.equal(r.status, 403, `${method} ${suffix}`);
    assert.equal(r.json.code, 'viewer');
  }
  assert.equal((await on(owner).download(doc.id)).content, '<html><p>t</p></html>');
  const unknown = await new SyncApi({
    ...owner.api.conn,
    protocol: 2,
    accountId: 1,
    syncBase: '/_/team/no-such-team-x/sync',
  }).raw('GET', '/nodes');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.code, 'not-found');
});

test("an editor (without a plan of their own) writes the team's files: create without If-Match; edits, renames, moves and deletes must be conditional (428)", async () => {
  const { editor, on, team } = await crew();
  const api = on(editor);
  const folder = await api.create({ type: 'folder', name: 'shared', parentId: 0 });
  const doc = await api.create({
    type: 'site',
    name: `e-${team.username}.html`,
    parentId: 0,
    content: '<html><p>1</p></html>',
  });
  assert.equal(doc.etag, checksum('<html><p>1</p></html>'));

  const unconditional = await api.raw('PUT', `/nodes/${doc.id}/content`, {
    body: { content: '<html><p>2</p></html>' },
  });
  assert.equal(unconditional.status, 428);
  assert.equal(unconditional.json.code, 'precondition-required');
  for (const [method, suffix, body] of [
    ['PATCH', `/nodes/${doc.id}/rename`, { newName: `r-${team.username}.html` }],
    ['PATCH', `/nodes/${doc.id}/move`, { targetParentId: folder.id }],
    ['DELETE', `/nodes/${doc.id}`, undefined],
  ] as const) {
    const r = await api.raw(method, suffix, { body });
    assert.equal(r.status, 428, `${method} ${suffix}`);
    assert.equal(r.json.code, 'precondition-required');
  }
  assert.equal((await api.download(doc.id)).content, '<html><p>1</p></html>');
  assert.equal((await api.list()).nodes.length, 2);

  // Creating a name the team already has never overwrites it blindly.
  const body = (content: string) => ({ type: 'site', name: doc.name, parentId: 0, content });
  const blind = await api.raw('POST', '/nodes', { body: body('<html><p>other</p></html>') });
  assert.equal(blind.status, 409);
  assert.equal(blind.json.code, 'name-conflict');
  assert.match(blind.json.msg, /already taken/);
  const same = await api.raw('POST', '/nodes', { body: body('<html><p>1</p></html>') });
  assert.equal(same.status, 200);
  assert.equal(same.json.node.id, doc.id);
  assert.equal((await api.download(doc.id)).content, '<html><p>1</p></html>');

  const put = await api.upload(doc.id, '<html><p>2</p></html>', { ifMatch: doc.etag! });
  assert.equal(put.etag, checksum('<html><p>2</p></html>'));
  const stale = await api.raw('PUT', `/nodes/${doc.id}/content`, {
    body: { content: '<html><p>3</p></html>' },
    headers: { 'if-match': `"${doc.etag}"` },
  });
  assert.equal(stale.status, 412);
  assert.equal(stale.json.etag, put.etag);
  const renamed = await api.rename(doc.id, `r-${team.username}.html`, put.structureVersion);
  assert.equal(renamed.newName, `r-${team.username}.html`);
  const listed = (await api.list()).nodes.find((n) => n.id === doc.id)!;
  const moved = await api.move(doc.id, folder.id, null, listed.structureVersion);
  assert.equal(moved.toPath, `shared/r-${team.username}.html`);
  const folderNow = (await api.list()).nodes.find((n) => n.id === folder.id)!;
  await api.delete(folder.id, { cascade: true, expectedVersion: folderNow.structureVersion });
  assert.deepEqual((await api.list()).nodes, []);
  // The team's files are served on the team's host.
  await api.create({
    type: 'site',
    name: `served-${team.username}.html`,
    parentId: 0,
    content: '<html><p>team page</p></html>',
  });
  assert.equal(
    (await kiln.client(kiln.hostOf(team.username)).get(`/served-${team.username}.html`)).text,
    '<html><p>team page</p></html>',
  );
});

test('scopes stay apart: a team node is not reachable on the personal base, nor a personal node on the team base', async () => {
  const { owner, on } = await crew();
  const teamDoc = await on(owner).create({ type: 'upload', name: 'team.txt', parentId: 0, content: Buffer.from('t') });
  const mine = await owner.api.create({ type: 'upload', name: 'mine.txt', parentId: 0, content: Buffer.from('m') });
  assert.deepEqual(
    (await owner.api.list()).nodes.map((n) => n.id),
    [mine.id],
  );
  assert.deepEqual(
    (await on(owner).list()).nodes.map((n) => n.id),
    [teamDoc.id],
  );
  const a = await owner.api.raw('GET', `/nodes/${teamDoc.id}/content`);
  assert.equal(a.status, 404);
  assert.equal(a.json.code, 'node-not-found');
  const b = await on(owner).raw('GET', `/nodes/${mine.id}/content`);
  assert.equal(b.status, 404);
  // Nor can a team node be used as a parent from the personal base.
  const folder = await on(owner).create({ type: 'folder', name: 'tf', parentId: 0 });
  assert.equal(
    (await owner.api.raw('POST', '/nodes', { body: { type: 'folder', name: 'x', parentId: folder.id } })).status,
    404,
  );
});

test("team changes are published on the team's account channel", async () => {
  const { editor, on, team } = await crew();
  const got: KilnEvent[] = [];
  const stop = kiln.services.events.subscribe(channels.account(team.id), (e) => got.push(e));
  await kiln.services.events.subscribed(channels.account(team.id));
  const doc = await on(editor).create({
    type: 'site',
    name: `pub-${team.username}.html`,
    parentId: 0,
    content: '<html><p>p</p></html>',
  });
  for (let i = 0; i < 200 && !got.some((e) => e.type === 'node-saved'); i++)
    await new Promise((r) => setTimeout(r, 10));
  stop();
  const saved = got.find((e) => e.type === 'node-saved');
  assert.ok(saved && saved.type === 'node-saved');
  assert.equal(saved.nodeId, doc.id);
  assert.equal(saved.path, `pub-${team.username}.html`);
});

test('a team whose plan does not include sync: editors list, read and delete; create, edit, rename, move answer 402', async () => {
  const { owner, editor, on, team } = await crew();
  const doc = await on(owner).create({
    type: 'site',
    name: `l-${team.username}.html`,
    parentId: 0,
    content: '<html><p>l</p></html>',
  });
  const tmp = await on(owner).create({ type: 'upload', name: 'tmp.txt', parentId: 0, content: Buffer.from('x') });
  await kiln.services.database.db
    .updateTable('accounts')
    .set({ has_active_subscription: 0 })
    .where('id', '=', team.id)
    .execute();
  const api = on(editor);
  assert.equal((await api.raw('GET', '/nodes')).status, 200);
  assert.equal((await api.raw('GET', `/nodes/${doc.id}/content`)).status, 200);
  for (const [method, suffix, body] of [
    ['POST', '/nodes', { type: 'folder', name: 'n', parentId: 0 }],
    ['PUT', `/nodes/${doc.id}/content`, { content: 'x' }],
    ['PATCH', `/nodes/${doc.id}/rename`, { newName: `z-${team.username}.html`, expectedVersion: doc.structureVersion }],
    ['PATCH', `/nodes/${doc.id}/move`, { targetParentId: 0, expectedVersion: doc.structureVersion }],
  ] as const) {
    const r = await api.raw(method, suffix, { body, headers: { 'if-match': `"${doc.etag}"` } });
    assert.equal(r.status, 402, `${method} ${suffix}: ${r.text}`);
    assert.equal(r.json.code, 'payment-required');
  }
  assert.equal(
    (await api.raw('DELETE', `/nodes/${tmp.id}?expectedVersion=${encodeURIComponent(tmp.structureVersion)}`)).status,
    200,
  );
});

test('teams from the dashboard: create (owner), add members with roles, owners only, the last owner stays', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c, { plan: 'personal' });
  const friendClient = kiln.client();
  const friend = await signedIn(kiln, friendClient, { plan: 'free' });
  const ajax = { headers: { 'x-requested-with': 'fetch' } };
  const made = await c.post('/_/dashboard/teams', { username: `dash-${me.username}` }, ajax);
  assert.equal(made.status, 200, made.text);
  assert.equal(made.json.msgType, 'success');
  const teamId = made.json.team.id;
  assert.equal(made.json.team.plan, 'personal');
  const dup = await c.post('/_/dashboard/teams', { username: `dash-${me.username}` }, ajax);
  assert.equal(dup.status, 409);
  const add = await c.post(`/_/dashboard/teams/${teamId}/members`, { username: friend.username, role: 'viewer' }, ajax);
  assert.equal(add.status, 200, add.text);
  let teams = (await c.get('/_/dashboard/teams')).json.teams;
  assert.deepEqual(
    teams[0].members.map((m: any) => [m.username, m.role]),
    [
      [me.username, 'owner'],
      [friend.username, 'viewer'],
    ],
  );
  assert.equal(
    (await c.post(`/_/dashboard/teams/${teamId}/members`, { username: friend.username, role: 'editor' }, ajax)).status,
    200,
  );
  teams = (await c.get('/_/dashboard/teams')).json.teams;
  assert.equal(teams[0].members.find((m: any) => m.username === friend.username).role, 'editor');
  // The friend (editor) can generate a key now, and sees the team without its members.
  const theirs = (await friendClient.get('/_/dashboard/teams')).json.teams;
  assert.equal(theirs[0].role, 'editor');
  assert.equal(theirs[0].members, null);
  assert.equal((await friendClient.post('/_/dashboard/keys', {}, ajax)).status, 201);
  // Only owners change members.
  const notOwner = await friendClient.post(
    `/_/dashboard/teams/${teamId}/members`,
    { username: friend.username, role: 'owner' },
    ajax,
  );
  assert.equal(notOwner.status, 403);
  // The last owner cannot step down.
  const last = await c.post(`/_/dashboard/teams/${teamId}/members`, { username: me.username, role: 'viewer' }, ajax);
  assert.equal(last.status, 409);
  assert.equal(last.json.code, 'last-owner');
  // Remove a member; the page lists the team.
  assert.equal((await c.post(`/_/dashboard/teams/${teamId}/members/${friend.id}/remove`, {}, ajax)).status, 200);
  const page = await c.page('/_/dashboard/teams');
  assert.equal(page.status, 200);
  assert.ok(page.text.includes(`dash-${me.username}`));
  assert.ok(!page.text.includes(friend.email));
  // A team name follows the username rules.
  assert.equal((await c.post('/_/dashboard/teams', { username: 'Bad Name!' }, ajax)).status, 400);
});

test('kiln team add and kiln team member add', async () => {
  const owner = await keyHolder(kiln);
  const member = await keyHolder(kiln, { plan: 'free' });
  const name = `cli-${owner.person.username}`;
  const made = await kilnCmd(kiln, ['team', 'add', '--name', name, '--owner', owner.person.username]);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, new RegExp(`Created team ${name} \\(id \\d+, plan personal\\)`));
  const added = await kilnCmd(kiln, [
    'team',
    'member',
    'add',
    '--team',
    name,
    '--user',
    member.person.username,
    '--role',
    'editor',
  ]);
  assert.equal(added.code, 0, added.stderr);
  const d = await member.api.accounts();
  const team = d.accounts.find((a: any) => a.username === name);
  assert.equal(team.role, 'editor');
  assert.deepEqual(team.sync, { enabled: true, reason: null });
  const missing = await kilnCmd(kiln, ['team', 'add', '--name', 'x']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing --owner/);
});
