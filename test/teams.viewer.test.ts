// One refusal per access question (security review #22, finding 9): a team viewer who tries to change
// the team's files (create, rename, move, delete, change visibility, make an app or a collection,
// duplicate, restore or purge from the trash, upload, sync a write) gets 403 `viewer` whatever the door:
// the dashboard, uploads, the team sync API, or the use cases themselves. Nothing changes. Saves on the
// team's host are not a viewer's door: the viewer's session never reaches that host, so a save there is
// a stranger's (401). Strangers keep their own answers (they do not learn what a viewer may).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { sessionsFor, storeSessions } from './support/people.ts';
import { keyHolder, SyncApi } from './support/sync-client.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { createNode, createPath, deleteNode, moveNode, renameNode, setVisibility } from '../src/nodes/tree.ts';
import { emptyTrash, purgeFromTrash, restoreFromTrash } from '../src/nodes/trash.ts';
import { storeUpload } from '../src/uploads/upload.ts';
import { KilnError } from '../src/errors.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const ajax = { headers: { 'x-requested-with': 'fetch', accept: 'application/json' } };

/** A person with a sync key and a dashboard session. */
async function member(plan: 'personal' | 'maker' = 'personal') {
  const k = await keyHolder(kiln, { plan });
  const main = kiln.client();
  storeSessions(
    main.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, k.person.id, k.person.username),
  );
  return { ...k, main };
}

function multipart(fields: Record<string, string>, file: { name: string; content: string }) {
  const boundary = `----kilnviewer${Date.now()}`;
  const parts = Object.entries(fields).map(
    ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/plain\r\n\r\n${file.content}\r\n`,
  );
  return {
    body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' },
  };
}

/** Everything about the team's tree that a change would touch, live and trashed. */
async function treeOf(teamId: number) {
  return kiln.services.database.db
    .selectFrom('nodes')
    .select(['id', 'name', 'path', 'parent_id', 'type', 'visibility', 'checksum', 'trashed_at', 'enable_signups'])
    .where('owner_id', '=', teamId)
    .orderBy('id')
    .execute();
}

const isViewerRefusal = (err: unknown) => err instanceof KilnError && err.status === 403 && err.code === 'viewer';

test('a team viewer changing the team’s files gets 403 viewer through every door, and nothing changes', async () => {
  const owner = await member('maker');
  const viewer = await member();
  const team = await createTeam(kiln.services, {
    username: `v-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'maker',
  });
  await setMember(kiln.services, owner.person.id, {
    teamId: team.id,
    username: viewer.person.username,
    role: 'viewer',
  });
  const s = kiln.services;
  const by = owner.person.id;
  const folder = await createNode(s, by, { ownerId: team.id, parentId: 0, type: 'folder', name: 'docs' });
  const doc = await createNode(s, by, {
    ownerId: team.id,
    parentId: folder.id,
    type: 'site',
    name: `plan-${team.id}.html`,
    html: '<html><p>plan</p></html>',
  });
  const other = await createNode(s, by, { ownerId: team.id, parentId: 0, type: 'folder', name: 'archive' });
  const upload = await storeUpload(s, {
    ownerId: team.id,
    parentId: 0,
    parentPath: '',
    plan: 'maker',
    fileName: 'notes.txt',
    bytes: Buffer.from('notes'),
  });
  const gone = await createNode(s, by, {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `gone-${team.id}.html`,
    html: '<html><p>gone</p></html>',
  });
  await deleteNode(s, by, gone.id);
  const before = await treeOf(team.id);

  const refusals: Array<[string, { status: number; json: any }]> = [];
  const door = (what: string, r: { status: number; json: any }) => refusals.push([what, r]);

  // The dashboard.
  const dash = (path: string, body: object) => viewer.main.post(path, body, ajax);
  door('create', await dash('/_/dashboard/nodes', { type: 'site', name: 'new.html', ownerId: team.id }));
  door('create folder', await dash('/_/dashboard/nodes', { type: 'folder', name: 'new', ownerId: team.id }));
  door('create a path', await dash('/_/dashboard/nodes', { type: 'site', name: 'a/b.html', ownerId: team.id }));
  door(
    'create in a folder',
    await dash('/_/dashboard/nodes', { type: 'site', name: 'in.html', parentId: folder.id, ownerId: team.id }),
  );
  door('rename', await dash(`/_/dashboard/nodes/${doc.id}/rename`, { name: 'renamed.html' }));
  door('move', await dash(`/_/dashboard/nodes/${doc.id}/move`, { parentId: other.id }));
  door('delete', await dash(`/_/dashboard/nodes/${doc.id}/delete`, {}));
  door('delete a folder', await dash(`/_/dashboard/nodes/${folder.id}/delete`, { cascade: true }));
  door('visibility', await dash(`/_/dashboard/nodes/${doc.id}/visibility`, { visibility: 'private' }));
  door('upload visibility', await dash(`/_/dashboard/nodes/${upload.id}/visibility`, { visibility: 'private' }));
  door('make an app', await dash(`/_/dashboard/nodes/${doc.id}/app`, { enableSignups: true }));
  door('make a collection', await dash(`/_/dashboard/nodes/${folder.id}/collection`, { collection: true }));
  door('duplicate', await dash(`/_/dashboard/nodes/${doc.id}/duplicate`, {}));
  door('restore', await dash(`/_/dashboard/trash/${gone.id}/restore`, {}));
  door('purge', await dash(`/_/dashboard/trash/${gone.id}/purge`, {}));
  door('empty the trash', await dash('/_/dashboard/trash/empty', { ownerId: team.id }));

  // Uploads (multipart from the dashboard, into the team's top level or one of its folders).
  for (const [what, fields] of [
    ['upload', { parentId: '0', ownerId: String(team.id) }],
    ['upload into a folder', { parentId: String(folder.id) }],
  ] as const) {
    const up = multipart(fields, { name: 'sneaky.txt', content: 'no' });
    door(what, await viewer.main.post('/_/upload', up.body, { headers: up.headers }));
  }

  // The team sync API (the desktop client's protocol 2).
  const sync = new SyncApi({
    ...viewer.api.conn,
    protocol: 2,
    accountId: team.id,
    syncBase: `/_/team/${team.username}/sync`,
  });
  const etag = `"${doc.checksum}"`;
  door('sync create', await sync.raw('POST', '/nodes', { body: { type: 'folder', name: 'x', parentId: 0 } }));
  door(
    'sync save',
    await sync.raw('PUT', `/nodes/${doc.id}/content`, { body: { content: 'x' }, headers: { 'if-match': etag } }),
  );
  door(
    'sync rename',
    await sync.raw('PATCH', `/nodes/${doc.id}/rename`, { body: { newName: 'r.html' }, headers: { 'if-match': etag } }),
  );
  door(
    'sync move',
    await sync.raw('PATCH', `/nodes/${doc.id}/move`, {
      body: { targetParentId: other.id },
      headers: { 'if-match': etag },
    }),
  );
  door('sync delete', await sync.raw('DELETE', `/nodes/${doc.id}`, { headers: { 'if-match': etag } }));

  for (const [what, r] of refusals) {
    assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json?.code, 'viewer', `${what}: ${JSON.stringify(r.json)}`);
  }

  // The use cases themselves give the same refusal (a handler that forgot to ask would still get it).
  const v = viewer.person.id;
  const useCases: Array<[string, () => Promise<unknown>]> = [
    ['createNode', () => createNode(s, v, { ownerId: team.id, parentId: 0, type: 'site', name: 'uc.html' })],
    ['createPath', () => createPath(s, v, { ownerId: team.id, path: 'uc/x.html' })],
    ['renameNode', () => renameNode(s, v, doc.id, 'uc.html')],
    ['moveNode', () => moveNode(s, v, doc.id, other.id)],
    ['deleteNode', () => deleteNode(s, v, doc.id)],
    ['setVisibility', () => setVisibility(s, v, doc.id, 'private')],
    ['restoreFromTrash', () => restoreFromTrash(s, v, gone.id)],
    ['purgeFromTrash', () => purgeFromTrash(s, v, gone.id)],
    ['emptyTrash', () => emptyTrash(s, v, team.id)],
  ];
  for (const [name, run] of useCases)
    await assert.rejects(run, isViewerRefusal, `${name} refuses the viewer with 403 viewer`);

  // A save on the team's host: the viewer has a session there (members do, to read the team's private files),
  // and the save is refused like every other door.
  const host = kiln.hostOf(team.username);
  await viewer.main.enter(host);
  const save = await viewer.main.on(host).post('/_/save', '<html><p>viewer was here</p></html>', {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': `http://${host}/docs/${doc.name}`,
      origin: `http://${host}`,
      'sec-fetch-site': 'same-origin',
    },
  });
  assert.equal(save.status, 403, save.text);
  assert.equal(save.json.code, 'viewer');

  assert.deepEqual(await treeOf(team.id), before, 'nothing changed in the team’s tree or trash');
  // And the team's document is served as it was.
  assert.equal((await kiln.client(host).get(`/docs/${doc.name}`)).text, '<html><p>plan</p></html>');
});

test('strangers keep their answers: a missing node for the use cases, no team for the sync API', async () => {
  const owner = await member('maker');
  const stranger = await member();
  const team = await createTeam(kiln.services, {
    username: `s-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'maker',
  });
  const doc = await createNode(kiln.services, owner.person.id, {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `own-${team.id}.html`,
  });
  await assert.rejects(
    renameNode(kiln.services, stranger.person.id, doc.id, 'x.html'),
    (err) => err instanceof KilnError && err.status === 404,
  );
  const sync = new SyncApi({
    ...stranger.api.conn,
    protocol: 2,
    accountId: team.id,
    syncBase: `/_/team/${team.username}/sync`,
  });
  const r = await sync.raw('DELETE', `/nodes/${doc.id}`);
  assert.equal(r.status, 404);
  const up = multipart({ parentId: '0', ownerId: String(team.id) }, { name: 'x.txt', content: 'x' });
  assert.equal((await stranger.main.post('/_/upload', up.body, { headers: up.headers })).status, 404);
});

test('the sharing door asks the same question: a team’s owners and editors share its documents, a viewer gets 403 viewer, a stranger 400 not-owner (as on the dashboard)', async () => {
  const owner = await member('maker');
  const editor = await member();
  const viewer = await member();
  const stranger = await member();
  const team = await createTeam(kiln.services, {
    username: `sh-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'maker',
  });
  for (const [who, role] of [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ] as const)
    await setMember(kiln.services, owner.person.id, { teamId: team.id, username: who.person.username, role });
  const doc = await createNode(kiln.services, owner.person.id, {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `shared-${team.id}.html`,
    html: '<html><p>team page</p></html>',
  });
  const sharing = `/_/dashboard/nodes/${doc.id}/sharing`;
  const json = { headers: { accept: 'application/json' } };
  for (const who of [owner, editor]) {
    assert.equal((await who.main.get(sharing, json)).status, 200);
    const on = await who.main.post(sharing, { enabled: 'true' }, ajax);
    assert.equal(on.status, 200, on.text);
    assert.equal(on.json.shareEnabled, true);
  }
  for (const [req, what] of [
    [viewer.main.get(sharing, json), 'read'],
    [viewer.main.post(sharing, { enabled: 'false' }, ajax), 'change'],
  ] as const) {
    const r = await req;
    assert.equal(r.status, 403, `${what}: ${r.text}`);
    assert.equal(r.json.code, 'viewer');
  }
  for (const r of [
    await stranger.main.get(sharing, json),
    await stranger.main.post(sharing, { enabled: 'false' }, ajax),
  ]) {
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'not-owner');
  }
  assert.equal((await owner.main.get(sharing, json)).json.shareEnabled, true, 'the refusals changed nothing');
});
