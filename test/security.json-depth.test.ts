// Deeply nested JSON (security review #22, finding 7): a JSON body nested deeper than Kiln takes answers
// 400 `invalid-body` on every route that reads JSON (collections, the dashboard, the live relay, contact
// messages, the sync API), never 500; so does malformed JSON. A record file that came in some other way
// (synced) and nests too deep to send back as JSON reads as its text instead of failing the listing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { SyncApi } from './support/sync-client.ts';
import type { Client } from './support/client.ts';
import { markedCollection } from './support/collections.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const JSON_HEADERS = { accept: 'application/json', 'content-type': 'application/json' };

/** `[[[…]]]` nested `depth` levels. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** A raw JSON text body (the client would stringify an object; this one is too deep to build as one). */
const postRaw = (c: Client, path: string, body: string, headers: Record<string, string> = {}) =>
  c.post(path, body, { headers: { ...JSON_HEADERS, ...headers } });

function assertRefused(r: { status: number; text: string; json: any }, what: string) {
  assert.equal(r.status, 400, `${what}: ${r.text}`);
  assert.equal(r.json?.code, 'invalid-body', `${what}: ${r.text}`);
  assert.match(r.json.msg, /nest|JSON/, what);
}

const collection = () => markedCollection(kiln, { person: { plan: 'maker' } });

test('a collection record nested 100 000 deep is 400 invalid-body; one nested 50 deep is kept', async () => {
  const c = await collection();
  const submit = { 'x-submit-token': c.token };
  const deep = await postRaw(c.visitor, c.records, `{"data":${nested(100_000)}}`, submit);
  assertRefused(deep, 'a record 100 000 deep');
  const objects = await postRaw(c.visitor, c.records, `{"data":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`, submit);
  assertRefused(objects, 'objects 5000 deep');
  const fine = await postRaw(c.visitor, c.records, `{"data":${nested(50)}}`, submit);
  assert.equal(fine.status, 201, fine.text);
  // Brackets inside strings are text, not nesting.
  const text = await c.visitor.post(c.records, { data: { note: '['.repeat(10_000) } }, { headers: submit });
  assert.equal(text.status, 201, text.text);
  const listed = await c.owner.get(c.records, { headers: { accept: 'application/json' } });
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.json.total, 2);
});

test('deep JSON is 400 invalid-body on the dashboard, the live relay, contact messages and the sync API; malformed JSON too', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.hostOf(me.username);
  const deep = nested(100_000);

  assertRefused(await postRaw(main, '/_/dashboard/nodes', `{"type":"folder","name":${deep}}`), 'dashboard');

  const name = `deep-${me.username}.html`;
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: '<html>x</html>',
  });
  const sameOrigin = {
    origin: `http://${host}`,
    'sec-fetch-site': 'same-origin',
    'document-url': `http://${host}/${name}`,
  };
  const relay = await postRaw(
    main.on(host),
    '/_/sync',
    `{"snapshot":"<html>y</html>","sender":"s","identityMap":${deep}}`,
    sameOrigin,
  );
  assertRefused(relay, 'live relay');

  const message = await postRaw(kiln.client(host), '/_/message', `{"message":"hi","behaviorData":${nested(10_000)}}`, {
    origin: `http://${host}`,
    'sec-fetch-site': 'same-origin',
  });
  assertRefused(message, 'contact message');

  const { key } = await createSyncKey(kiln.services, me.id);
  const sync = await postRaw(main, '/_/sync/nodes', `{"type":"folder","name":"x","parentId":0,"extra":${deep}}`, {
    'x-api-key': key,
  });
  assertRefused(sync, 'sync API');

  const malformed = await postRaw(main, '/_/dashboard/nodes', '{"type": "folder",');
  assert.equal(malformed.status, 400, malformed.text);
  assert.equal(malformed.json.code, 'invalid-body');
  // Ordinary JSON still works.
  const ok = await main.post('/_/dashboard/nodes', { type: 'folder', name: 'fine' }, { headers: JSON_HEADERS });
  assert.equal(ok.status, 201, ok.text);
});

test('a synced record file nested too deep to send back as JSON reads as its text', async () => {
  const c = await collection();
  const { key } = await createSyncKey(kiln.services, c.me.id);
  const api = new SyncApi({ port, host: kiln.config.rootDomain, apiKey: key });
  const records = (await api.list()).nodes.find((n) => n.path === 'contact' && n.name === 'records');
  assert.ok(records, 'the records folder is listed');
  const deep = `{"data":${nested(100_000)}}`;
  await api.create({ type: 'upload', name: '7.json', parentId: records.id, content: Buffer.from(deep) });
  const listed = await c.owner.get(c.records, { headers: { accept: 'application/json' } });
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.json.records[0].data, deep);
  const one = await c.owner.get(`${c.records}/7`, { headers: { accept: 'application/json' } });
  assert.equal(one.status, 200, one.text);
  assert.equal(one.json.data, deep);
});
