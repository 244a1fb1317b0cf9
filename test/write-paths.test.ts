// One write path per kind of content: every writer of a document's HTML stores what a save would
// store (the same normalization, one version per change), a refused create leaves nothing behind,
// and an upload's If-Match holds under concurrency (the check is in the statement that writes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createSyncKey } from '../src/sync/keys.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

/** A document that opts in to re-indenting, sent unindented. */
const UNFORMATTED =
  '<!DOCTYPE html><html formathtml="true"><head><title>f</title></head><body><div><p>one</p><p>two</p></div></body></html>';

async function syncClient(plan: 'personal' | 'maker' = 'personal') {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan });
  const { key } = await createSyncKey(kiln.services, me.id);
  const call = (method: string, path: string, body?: object, headers: Record<string, string> = {}) =>
    kiln.client().request(method, `/_/sync${path}`, { headers: { 'x-api-key': key, ...headers }, body });
  return { me, main, call };
}

async function versionCount(nodeId: number) {
  const rows = await kiln.services.database.db
    .selectFrom('versions')
    .select('id')
    .where('node_id', '=', nodeId)
    .execute();
  return rows.length;
}

test('a document created with HTML is stored as a save stores it: saving the same bytes again changes nothing', async () => {
  const { call } = await syncClient();
  const made = await call('POST', '/nodes', { type: 'site', name: `fmt-${Date.now()}.html`, content: UNFORMATTED });
  assert.equal(made.status, 201, made.text);
  const id = made.json.node.id;
  const stored = await call('GET', `/nodes/${id}/content`);
  assert.notEqual(stored.json.content, UNFORMATTED, 'formathtml documents are re-indented on creation too');
  assert.match(stored.json.content, /\n\s+<p>one<\/p>/);
  const again = await call(
    'PUT',
    `/nodes/${id}/content`,
    { content: UNFORMATTED },
    { 'if-match': `"${stored.json.etag ?? stored.json.checksum}"` },
  );
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.changed, false, 'the same bytes, normalized the same way, are no change');
  assert.equal(await versionCount(id), 1);

  // Creation from the dashboard (no sync key) goes the same way.
  const { me } = await syncClient();
  const node = await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: `fmt2-${me.username}.html`,
    html: UNFORMATTED,
  });
  const host = kiln.hostOf(me.username);
  assert.equal((await kiln.client(host).get(`/${node.name}`)).text, stored.json.content);
});

test('a refused create of a nested path leaves no folder behind', async () => {
  const owner = await syncClient();
  const taken = `taken-${owner.me.username}.html`;
  assert.equal(
    (await owner.call('POST', '/nodes', { type: 'site', name: taken, content: '<html></html>' })).status,
    201,
  );
  const other = await syncClient();
  const refused = await other.call('POST', '/nodes', { type: 'site', name: `x/y/${taken}`, content: '<html></html>' });
  assert.equal(refused.status, 409, refused.text);
  const listing = await other.call('GET', '/nodes');
  assert.deepEqual(
    listing.json.nodes.map((n: { name: string }) => n.name).filter((n: string) => n === 'x' || n === 'y'),
    [],
    'no folder x or x/y was left behind',
  );
});

test('an upload saved from the code editor with If-Match: concurrent saves from one base, one wins', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const page = await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: `up-${me.username}.html`,
    html: '<html></html>',
  });
  const host = kiln.hostOf(me.username);
  const doc = main.on(host);
  const up = await doc.post(
    '/_/upload',
    { fileName: 'notes.md', fileBody: Buffer.from('# base').toString('base64') },
    { headers: { 'page-url': `http://${host}/${page.name}` } },
  );
  assert.equal(up.status, 200, up.text);
  const row = await kiln.services.database.db
    .selectFrom('nodes')
    .select('checksum')
    .where('owner_id', '=', me.id)
    .where('name', '=', 'notes.md')
    .executeTakeFirstOrThrow();
  const docUrl = `http://${kiln.config.rootDomain}/_/edit/uploads/${me.username}/notes.md`;
  const attempts = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      main.post('/_/save', `# edit ${i} ${'x'.repeat(200_000 + i)}`, {
        headers: { 'content-type': 'text/plain', 'document-url': docUrl, 'if-match': `"${row.checksum}"` },
      }),
    ),
  );
  const statuses = attempts.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 412, 412, 412, 412, 412, 412, 412], `one save wins, the rest are told: ${statuses}`);
  const winner = attempts.findIndex((r) => r.status === 200);
  assert.equal((await kiln.client(host).get('/notes.md')).text, `# edit ${winner} ${'x'.repeat(200_000 + winner)}`);
});
