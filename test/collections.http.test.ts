// Collections over HTTP: a folder marked on the dashboard gets its form, its private dashboard and
// records/; a public form adds records with the submit token; the owner lists, reads, changes and
// deletes them; records are JSON files the sync API lists; open dashboards hear `collection-record`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { SyncApi } from './support/sync-client.ts';
import { markedCollection } from './support/collections.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const JSON_HEADERS = { accept: 'application/json' };

/** An owner with a folder marked as a collection (through the dashboard, as a person does). */
const collection = (folder = 'contact') => markedCollection(kiln, { folder });

const submit = (c: Awaited<ReturnType<typeof collection>>, data: unknown, token: string | null = c.token) =>
  c.visitor.post(`${c.records}`, { data }, { headers: token ? { 'x-submit-token': token } : {} });

test('marking a folder makes its public form, its private dashboard and records/; the id is col_…', async () => {
  const c = await collection();
  assert.match(c.id, /^col_[a-z0-9]{10}$/);
  assert.equal(c.info.formUrl, `http://${c.host}/contact/submission-form.html`);
  const nodes = (await c.main.get('/_/dashboard/nodes', { headers: JSON_HEADERS })).json.nodes as Array<{
    name: string;
    path: string;
    type: string;
    visibility: string;
  }>;
  const inside = nodes.filter((n) => n.path === 'contact').map((n) => `${n.type}:${n.name}:${n.visibility}`);
  assert.deepEqual(inside.sort(), [
    'folder:records:private',
    'site:dashboard.html:private',
    'site:submission-form.html:public',
  ]);
  const form = await c.visitor.get('/contact/submission-form.html');
  assert.equal(form.status, 200);
  assert.ok(form.text.includes(c.id) && form.text.includes(c.token), 'the form carries its id and token');
  assert.equal((await c.visitor.get('/contact/dashboard.html')).status, 404, 'the dashboard is its owner’s');
  assert.equal((await c.owner.get('/contact/dashboard.html')).status, 200);
  // Another account may have a collection too: those two page names are unique per folder, not per Kiln.
  const other = await collection();
  assert.notEqual(other.id, c.id);
  // Marking again answers the same collection.
  const again = await c.main.post(
    `/_/dashboard/nodes/${c.folderId}/collection`,
    { collection: '1' },
    { headers: JSON_HEADERS },
  );
  assert.equal(again.status, 201);
  const info = await c.main.get(`/_/dashboard/nodes/${c.folderId}/collection`, { headers: JSON_HEADERS });
  assert.equal(info.json.collection.id, c.id);
});

test('a submission with the token is a record (201, id and edit token); without it 403; elsewhere 404; over 1 MB 413', async () => {
  const c = await collection();
  const res = await submit(c, { name: 'Ada', message: 'Hello' });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.json.id, '1');
  assert.deepEqual(res.json.data, { name: 'Ada', message: 'Hello' });
  assert.equal(typeof res.json.editToken, 'string');
  assert.equal((await submit(c, { n: 2 })).json.id, '2', 'keys count up');

  const noToken = await submit(c, { x: 1 }, null);
  assert.equal(noToken.status, 403);
  assert.equal(noToken.json.code, 'bad-submit-token');
  assert.equal((await submit(c, { x: 1 }, `${c.token}x`)).status, 403);
  const bodyToken = await c.visitor.post(c.records, { data: { via: 'body' }, token: c.token });
  assert.equal(bodyToken.status, 201, 'the token may come in the body');
  const noData = await c.visitor.post(c.records, { name: 'x' }, { headers: { 'x-submit-token': c.token } });
  assert.equal(noData.status, 400);

  // A neighbour's host cannot reach this collection, token or not.
  const neighbour = await collection();
  const wrongHost = await neighbour.visitor.post(c.records, { data: {} }, { headers: { 'x-submit-token': c.token } });
  assert.equal(wrongHost.status, 404);
  assert.equal((await c.visitor.post('/_/collection/col_nothere000/records', { data: {} })).status, 404);

  const big = await submit(c, { blob: 'x'.repeat(1024 * 1024) });
  assert.equal(big.status, 413);
  assert.equal(big.json.code, 'too-large');
  const list = await c.owner.get(c.records);
  assert.equal(list.json.total, 3, 'nothing of the refused ones was stored');
});

test('the owner lists, reads, changes and deletes; the submitter reads and changes its own with the edit token; others may not', async () => {
  const c = await collection();
  const first = await submit(c, { n: 1 });
  await submit(c, { n: 2 });
  await submit(c, { n: 3 });

  const page = await c.owner.get(`${c.records}?limit=2&offset=0`);
  assert.equal(page.status, 200, page.text);
  assert.equal(page.json.total, 3);
  assert.deepEqual(
    page.json.records.map((r: { id: string; data: unknown }) => [r.id, r.data]),
    [
      ['3', { n: 3 }],
      ['2', { n: 2 }],
    ],
    'newest first',
  );
  const rest = await c.owner.get(`${c.records}?limit=2&offset=2`);
  assert.deepEqual(
    rest.json.records.map((r: { id: string }) => r.id),
    ['1'],
  );
  assert.equal((await c.owner.get(`${c.records}?limit=0`)).status, 400);

  const anon = await c.visitor.get(c.records);
  assert.equal(anon.status, 401);
  assert.equal(anon.json.code, 'login-required');
  assert.equal((await c.visitor.get(`${c.records}/1`)).status, 401);

  // The submitter, with its edit token.
  const mine = { 'x-record-token': first.json.editToken };
  const read = await c.visitor.get(`${c.records}/1`, { headers: mine });
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(read.json.data, { n: 1 });
  assert.equal((await c.visitor.get(`${c.records}/2`, { headers: mine })).status, 401, 'one record’s token only');
  const changed = await c.visitor.put(`${c.records}/1`, { data: { n: 1, fixed: true } }, { headers: mine });
  assert.equal(changed.status, 200, changed.text);
  assert.deepEqual((await c.owner.get(`${c.records}/1`)).json.data, { n: 1, fixed: true });
  assert.equal((await c.visitor.delete(`${c.records}/1`, { headers: mine })).status, 401, 'only the owner deletes');

  // The owner changes one with If-Match: a stale one is 412 and writes nothing.
  const stale = await c.owner.put(`${c.records}/2`, { data: { n: 'x' } }, { headers: { 'if-match': '"0000"' } });
  assert.equal(stale.status, 412);
  assert.deepEqual((await c.owner.get(`${c.records}/2`)).json.data, { n: 2 });

  // A page on another host cannot change a record with the owner's cookie by sending any token.
  const neighbour = await c.owner.put(
    `${c.records}/2`,
    { data: { n: 'evil' } },
    {
      headers: { origin: 'http://evil.example', 'x-record-token': 'not-the-token' },
    },
  );
  assert.equal(neighbour.status, 403);
  assert.deepEqual((await c.owner.get(`${c.records}/2`)).json.data, { n: 2 });
  // Deleting: the owner only, from this host.
  const crossSite = await c.owner.delete(`${c.records}/3`, { headers: { origin: 'http://evil.example' } });
  assert.equal(crossSite.status, 403);
  const gone = await c.owner.delete(`${c.records}/3`);
  assert.equal(gone.status, 200, gone.text);
  assert.equal((await c.owner.get(`${c.records}/3`)).status, 404);
  assert.equal((await c.owner.get(c.records)).json.total, 2);

  // A stranger signed in elsewhere is nobody here.
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  assert.equal((await stranger.on(c.host).get(c.records)).status, 401);
});

test('records are JSON files in records/: the sync API lists and reads them, and a synced file is a record', async () => {
  const c = await collection();
  await submit(c, { hello: 'sync' });
  const { key } = await createSyncKey(kiln.services, c.me.id);
  const api = new SyncApi({ port, host: kiln.config.rootDomain, apiKey: key });
  const { nodes } = await api.list();
  const record = nodes.find((n) => n.path === 'contact/records' && n.name === '1.json');
  assert.ok(record, JSON.stringify(nodes));
  assert.equal(record.type, 'upload');
  const bytes = await c.owner.get('/contact/records/1.json');
  assert.deepEqual(JSON.parse(bytes.text), { hello: 'sync' });
});

test('the collection id survives renaming and moving its folder', async () => {
  const c = await collection('survey');
  await submit(c, { before: true });
  const renamed = await c.main.post(
    `/_/dashboard/nodes/${c.folderId}/rename`,
    { name: 'poll' },
    { headers: JSON_HEADERS },
  );
  assert.equal(renamed.status, 200, renamed.text);
  const parent = await c.main.post('/_/dashboard/nodes', { type: 'folder', name: 'forms' }, { headers: JSON_HEADERS });
  const moved = await c.main.post(
    `/_/dashboard/nodes/${c.folderId}/move`,
    { parentId: parent.json.node.id },
    { headers: JSON_HEADERS },
  );
  assert.equal(moved.status, 200, moved.text);
  const after = await submit(c, { after: true });
  assert.equal(after.status, 201, after.text);
  assert.deepEqual(JSON.parse((await c.owner.get('/forms/poll/records/2.json')).text), { after: true });
  assert.equal((await c.owner.get(c.records)).json.total, 2);
});

test('stopping a collection keeps its files; its API answers 404', async () => {
  const c = await collection();
  await submit(c, { kept: true });
  const off = await c.main.post(
    `/_/dashboard/nodes/${c.folderId}/collection`,
    { collection: '0' },
    { headers: JSON_HEADERS },
  );
  assert.equal(off.status, 200, off.text);
  assert.equal((await submit(c, { late: true })).status, 404);
  assert.equal((await c.owner.get('/contact/records/1.json')).status, 200);
});

test('open dashboards hear collection-record events: created with data, updated, deleted; Last-Event-ID resumes', async () => {
  const c = await collection();
  const cookie = c.main.jar.header(c.host);
  const open = (headers: Record<string, string> = {}) =>
    SseClient.open({ port, host: c.host, path: `/_/collection/${c.id}/events`, headers: { cookie, ...headers } });
  const refused = await SseClient.open({ port, host: c.host, path: `/_/collection/${c.id}/events` });
  assert.equal(refused.status, 401, 'a visitor gets no stream');
  refused.close();

  const events = await open();
  assert.equal(events.status, 200, events.body);
  await events.comment('connected');
  const made = await submit(c, { name: 'Live' });
  const frame = await events.next();
  assert.equal(frame.event, 'collection-record');
  assert.equal(frame.json.type, 'collection-record');
  assert.equal(frame.json.op, 'create');
  assert.equal(frame.json.id, made.json.id);
  assert.deepEqual(frame.json.data, { name: 'Live' });
  assert.equal(String(frame.json.seq), frame.id);
  assert.equal(typeof frame.json.modifiedAt, 'string');

  // Other files of the account are not told.
  await c.main.post('/_/dashboard/nodes', { type: 'folder', name: 'elsewhere' }, { headers: JSON_HEADERS });
  await c.owner.put(`${c.records}/1`, { data: { name: 'Changed' } });
  const update = await events.next();
  assert.equal(update.json.op, 'update');
  assert.deepEqual(update.json.data, { name: 'Changed' });
  const lastSeen = update.id!;
  events.close();

  // Missed while closed: a delete, then a resume from the last id seen.
  await c.owner.delete(`${c.records}/1`);
  const resumed = await open({ 'last-event-id': lastSeen });
  const deleted = await resumed.next();
  assert.equal(deleted.json.op, 'delete');
  assert.equal(deleted.json.id, '1');
  assert.equal(deleted.json.data, undefined);
  resumed.close();
});
