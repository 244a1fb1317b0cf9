// Collection records are private data (issue #22, finding 1): a record file `records/<n>.json` answers
// exactly like a missing file (status, body, headers) to everyone but the collection's owner, on every
// path of the owner's host: a plain GET, HEAD, a byte range, `?data=`, `/_/api`, the upload editor, a
// share guest's cookie or `?token=`. Whatever is put into records/ (a submission, a synced file, a move)
// is private, and existing records are made private by a migration. The owner still reads the files,
// and they still sync; a submitter reads its own record through the API with its edit token.
// Also: each collection bounds what anonymous submitters may store (finding 3).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import type { Client, Res } from './support/client.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { SyncApi } from './support/sync-client.ts';
import { makeRecordsPrivate } from '../src/store/migrations/015_private_records.ts';
import { markedCollection } from './support/collections.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const JSON_HEADERS = { accept: 'application/json' };
const HOME = '<!DOCTYPE html><html><body><h1>home</h1></body></html>';

/** An owner with a home page and a folder `contact` marked as a collection (as a person does it). */
const collection = () => markedCollection(kiln, { person: { plan: 'maker' }, homePage: HOME });
type Collection = Awaited<ReturnType<typeof collection>>;

const submit = (c: Collection, data: unknown, from: Client = c.visitor) =>
  from.post(c.records, { data }, { headers: { 'x-submit-token': c.token } });

/** Headers that differ between any two answers (the clock, the connection). */
const VOLATILE = new Set(['date', 'connection', 'keep-alive']);
function sameAnswer(a: Res, b: Res, what: string) {
  assert.equal(a.status, b.status, `${what}: status`);
  assert.equal(a.text, b.text, `${what}: body`);
  const headers = (r: Res) => Object.entries(r.headers).filter(([k]) => !VOLATILE.has(k));
  assert.deepEqual(headers(a), headers(b), `${what}: headers`);
}

/** Every way a visitor can ask the owner's host for the file at `path`. */
function asks(c: Collection, who: Client, path: string): Array<[string, () => Promise<Res>]> {
  return [
    ['GET', () => who.get(`/${path}`)],
    ['HEAD', () => who.request('HEAD', `/${path}`)],
    ['browser page', () => who.page(`/${path}`)],
    ['image request', () => who.get(`/${path}`, { headers: { 'sec-fetch-dest': 'image' } })],
    ['range', () => who.get(`/${path}`, { headers: { range: 'bytes=0-3' } })],
    ['data query', () => who.get(`/${path}?data=${encodeURIComponent('{"a":"body"}')}`)],
    ['data api', () => who.get(`/_/api/${path}`)],
    ['upload editor', () => who.get(`/_/edit/uploads/${c.me.username}/${path}`)],
  ];
}

test('a record file answers like a missing file to visitors, strangers and share guests, on every path', async () => {
  const c = await collection();
  const sent = await submit(c, { email: 'ada@example.com', secret: 'the answer' });
  assert.equal(sent.status, 201, sent.text);
  assert.equal(sent.json.id, '1');

  // A share guest of the home page (its share cookie) is nobody to the records.
  const share = await c.main.post(
    `/_/dashboard/nodes/${c.homeId!}/sharing`,
    { enabled: true },
    { headers: JSON_HEADERS },
  );
  assert.equal(share.status, 200, share.text);
  const shareToken = new URL(share.json.shareUrl).searchParams.get('token');
  assert.equal(typeof shareToken, 'string', share.text);
  const guest = kiln.client(c.host);
  const visit = await guest.get(`/?token=${shareToken}`);
  assert.equal(visit.status, 302, 'the share link sets its cookie');
  const stranger = kiln.client();
  await signedIn(kiln, stranger);

  for (const [who, client] of [
    ['visitor', c.visitor],
    ['stranger', stranger.on(c.host)],
    ['share guest', guest],
  ] as const) {
    const hidden = asks(c, client, 'contact/records/1.json');
    const missing = asks(c, client, 'contact/records/999.json');
    for (let i = 0; i < hidden.length; i++) {
      // Both asked with the same cookies (an answer may set one the next request would carry).
      const cookies = client.jar.cookies.map((k) => ({ ...k }));
      const a = await hidden[i][1]();
      client.jar.cookies = cookies;
      const b = await missing[i][1]();
      sameAnswer(a, b, `${who} ${hidden[i][0]}`);
      assert.doesNotMatch(a.text, /the answer|ada@example/, `${who} ${hidden[i][0]}: nothing of the record`);
    }
    // The share token on the record's own URL is no key either.
    const withToken = await client.get(`/contact/records/1.json?token=${shareToken}`);
    assert.doesNotMatch(withToken.text, /the answer/);
    // The folder itself lists nothing.
    assert.doesNotMatch((await client.get('/contact/records/')).text, /1\.json|the answer/);
  }

  // The owner reads the file; the submitter reads its own record through the API, and only its own.
  const own = await c.owner.get('/contact/records/1.json');
  assert.equal(own.status, 200);
  assert.deepEqual(JSON.parse(own.text), { email: 'ada@example.com', secret: 'the answer' });
  assert.match(String(own.headers['cache-control']), /private/, 'no shared cache keeps it');
  const mine = await c.visitor.get(`${c.records}/1`, { headers: { 'x-record-token': sent.json.editToken } });
  assert.equal(mine.status, 200);
  assert.equal(mine.json.data.secret, 'the answer');
  const second = await submit(c, { n: 2 });
  const notMine = await c.visitor.get(`${c.records}/1`, { headers: { 'x-record-token': second.json.editToken } });
  assert.notEqual(notMine.status, 200, 'one record’s token reads no other');
});

test('records/ and its files are private on the dashboard, cannot be made public, and still sync', async () => {
  const c = await collection();
  await submit(c, { hello: 'sync' });
  const nodes = (await c.main.get('/_/dashboard/nodes', { headers: JSON_HEADERS })).json.nodes as Array<{
    id: number;
    name: string;
    path: string;
    visibility: string;
  }>;
  const folder = nodes.find((n) => n.path === 'contact' && n.name === 'records');
  const record = nodes.find((n) => n.path === 'contact/records' && n.name === '1.json');
  assert.equal(folder?.visibility, 'private');
  assert.equal(record?.visibility, 'private');
  const open = await c.main.post(
    `/_/dashboard/nodes/${record!.id}/visibility`,
    { visibility: 'public' },
    { headers: JSON_HEADERS },
  );
  assert.equal(open.status, 400, open.text);
  assert.equal(open.json.code, 'invalid-visibility');
  assert.match(open.json.msg, /private/);
  assert.notEqual((await c.visitor.get('/contact/records/1.json')).text, '{\n  "hello": "sync"\n}\n');

  // The desktop client lists and reads records, and a file it puts into records/ is private too.
  const { key } = await createSyncKey(kiln.services, c.me.id);
  const api = new SyncApi({ port, host: kiln.config.rootDomain, apiKey: key });
  const listed = (await api.list()).nodes.find((n) => n.path === 'contact/records' && n.name === '1.json');
  assert.ok(listed);
  assert.deepEqual(JSON.parse(String((await api.download(listed.id)).content)), { hello: 'sync' });
  await api.create({ type: 'upload', name: 'synced.json', parentId: folder!.id, content: Buffer.from('{"s":1}') });
  assert.doesNotMatch((await c.visitor.get('/contact/records/synced.json')).text, /"s"/);
  assert.equal((await c.owner.get('/contact/records/synced.json')).text, '{"s":1}');

  // A public document moved into records/ becomes private (its visitors now get the fallback).
  const doc = await c.main.post('/_/dashboard/nodes', {
    type: 'site',
    name: `moved-${c.me.username}.html`,
    html: '<!DOCTYPE html><html><body>moved words</body></html>',
  });
  assert.match((await c.visitor.get(`/moved-${c.me.username}.html`)).text, /moved words/);
  const moved = await c.main.post(`/_/dashboard/nodes/${doc.json.node.id}/move`, { parentId: folder!.id });
  assert.equal(moved.status, 200, moved.text);
  assert.doesNotMatch((await c.visitor.get(`/contact/records/moved-${c.me.username}.html`)).text, /moved words/);
  assert.match((await c.owner.get(`/contact/records/moved-${c.me.username}.html`)).text, /moved words/);
});

test('the migration makes the records of existing collections private', async () => {
  const c = await collection();
  await submit(c, { before: 'migration' });
  const db = kiln.services.database.db;
  const row = await db.selectFrom('collections').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
  // As records were before: public files in a public folder.
  await db
    .updateTable('nodes')
    .set({ visibility: 'public' })
    .where((eb) => eb.or([eb('id', '=', row.records_folder_id), eb('parent_id', '=', row.records_folder_id)]))
    .execute();
  assert.match((await c.visitor.get('/contact/records/1.json')).text, /migration/, 'public as before');
  await makeRecordsPrivate(db);
  assert.doesNotMatch((await c.visitor.get('/contact/records/1.json')).text, /migration/);
  const left = await db
    .selectFrom('nodes')
    .select('visibility')
    .where((eb) => eb.or([eb('id', '=', row.records_folder_id), eb('parent_id', '=', row.records_folder_id)]))
    .execute();
  assert.deepEqual(new Set(left.map((n) => n.visibility)), new Set(['private']));
});

test('submissions are bounded per collection: per address an hour (429), records and bytes (413), set by the owner', async () => {
  const c = await collection();
  const info = await c.main.get(`/_/dashboard/nodes/${c.folderId}/collection`, { headers: JSON_HEADERS });
  assert.deepEqual(info.json.collection.limits, {
    maxRecords: 10_000,
    maxBytes: 50 * 1024 * 1024,
    maxPerAddressHour: 30,
  });
  assert.deepEqual(info.json.collection.usage, { records: 0, bytes: 0 });

  const set = (maxRecords: number, maxMegabytes: number, maxPerAddressHour: number) =>
    c.main.post(
      `/_/dashboard/nodes/${c.folderId}/collection/limits`,
      { maxRecords, maxMegabytes, maxPerAddressHour },
      { headers: JSON_HEADERS },
    );
  assert.equal((await set(0, 1, 1)).json.code, 'invalid', 'at least one record');
  assert.equal((await set(10, 1, 100_000)).status, 400, 'no more than the maximum');
  const changed = await set(3, 1, 2);
  assert.equal(changed.status, 200, changed.text);

  // One address: two an hour, then 429 with Retry-After, and nothing stored.
  assert.equal((await submit(c, { n: 1 })).status, 201);
  assert.equal((await submit(c, { n: 2 })).status, 201);
  const third = await submit(c, { n: 3 });
  assert.equal(third.status, 429, third.text);
  assert.equal(third.json.code, 'rate-limited');
  assert.ok(Number(third.headers['retry-after']) > 0);
  assert.match(third.json.msg, /2 submissions an hour/);
  assert.equal((await c.owner.get(c.records)).json.total, 2);

  // Another address may still submit, until the collection holds its 3 records: then 413.
  const other = kiln.client(c.host);
  assert.notEqual(other.address, c.visitor.address);
  assert.equal((await submit(c, { n: 3 }, other)).status, 201);
  const full = await submit(c, { n: 4 }, other);
  assert.equal(full.status, 413, full.text);
  assert.equal(full.json.code, 'too-large');
  assert.match(full.json.msg, /3 records/);
  assert.equal((await c.owner.get(c.records)).json.total, 3);

  // Bytes: a collection of 0.1 MB takes no record that would pass it.
  assert.equal((await set(100, 0.1, 100)).status, 200);
  const big = await submit(c, { blob: 'x'.repeat(120 * 1024) }, kiln.client(c.host));
  assert.equal(big.status, 413, big.text);
  assert.match(big.json.msg, /102\.4 KB/);
  const usage = (await c.main.get(`/_/dashboard/nodes/${c.folderId}/collection`, { headers: JSON_HEADERS })).json
    .collection.usage;
  assert.equal(usage.records, 3);
  assert.ok(usage.bytes > 0);

  // The info page shows the usage and the form.
  const page = await c.main.page(`/_/dashboard/nodes/${c.folderId}/collection`);
  assert.match(page.text, /Records: 3 of 100/);
  assert.match(page.text, /name="maxPerAddressHour"/);
});
