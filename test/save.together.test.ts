// Saves that arrive together (they share one commit: src/store/writes.ts, on PostgreSQL those of one document): each is answered for
// itself, a refused one (stale If-Match, not HTML) changes nothing while the others land, every accepted save
// has its version, and each version reconstructs to the bytes of its save. Saves that share a commit write the
// document's content row once, with the last of them (src/store/group-state.ts): the row holds the newest save's bytes, and a
// version that follows a non-UTF-8 save inside the group diffs against that save. Reads go on while a write is open.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { versionContent } from '../src/save/history.ts';
import { storedContent } from '../src/store/nodes.ts';
import { saveDocument } from '../src/save/pipeline.ts';
import { exactly } from '../src/core/conditional.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const sha = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');
const page = (title: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body>${'<p>line</p>\n'.repeat(300)}</body></html>`;

test('concurrent saves to two documents, some refused: the refused change nothing, every accepted one has its version', async () => {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const names = ['together-a.html', 'together-b.html'];
  for (const name of names) {
    await createNode(await actingAs(kiln.services, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name,
      html: page('start'),
    });
  }
  const host = kiln.hostOf(person.username);
  const doc = main.on(host);
  const save = (name: string, body: Buffer, headers: Record<string, string> = {}) =>
    doc.post('/_/save', body, {
      headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/${name}`, ...headers },
    });

  const sent: Array<{ name: string; body: Buffer; kind: 'plain' | 'stale' | 'not-html' }> = [];
  for (let i = 0; i < 30; i++) {
    const name = names[i % 2];
    const kind = i % 5 === 3 ? 'stale' : i % 7 === 6 ? 'not-html' : 'plain';
    // Every fourth page is Latin-1 (é as the one byte 0xE9): stored as sent, never diffed as text.
    const body = Buffer.from(
      kind === 'not-html' ? `just text ${i}` : page(`${name} ${i}${i % 4 === 1 ? ' caf\u00e9' : ''}`),
      i % 4 === 1 ? 'latin1' : 'utf8',
    );
    sent.push({ name, body, kind });
  }
  const answers = await Promise.all(
    sent.map((s) => save(s.name, s.body, s.kind === 'stale' ? { 'if-match': '"0000000000000000"' } : {})),
  );
  for (const [i, res] of answers.entries()) {
    const expected = { plain: 200, stale: 412, 'not-html': 422 }[sent[i].kind];
    assert.equal(res.status, expected, `save ${i} (${sent[i].kind}): ${res.text}`);
  }

  for (const name of names) {
    const accepted = sent.filter((s) => s.name === name && s.kind === 'plain').map((s) => s.body);
    const versions = (await doc.get(`/_/versions?path=${name}`)).json.versions as Array<{
      id: number;
      contentHash: string;
    }>;
    // The creation, then one version per accepted save, newest first.
    assert.equal(versions.length, accepted.length + 1, name);
    const saved: string[] = [];
    for (const v of versions.slice(0, -1)) {
      const { bytes } = await versionContent(kiln.services.database.db, v.id);
      assert.equal(sha(bytes), v.contentHash);
      saved.push(bytes.toString('hex'));
    }
    assert.deepEqual(
      saved.sort(),
      accepted.map((b) => b.toString('hex')).sort(),
      `${name}: the versions are the accepted saves`,
    );
    // The stored row (what a restart serves) is the newest version's bytes.
    const node = await kiln.services.database.db
      .selectFrom('nodes')
      .select('id')
      .where('owner_id', '=', person.id)
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    const stored = await storedContent(kiln.services.database.db, node.id);
    assert.equal(sha(stored!.html), versions[0].contentHash, `${name}: the stored row is the newest save`);
    // The document serves the newest version's bytes.
    const served = await kiln.client().on(host).get(`/${name}`);
    assert.equal(served.status, 200);
    assert.equal(sha(served.body), versions[0].contentHash);
  }
});

test('saves queued together share one commit: each has its version, the row ends as the last, a save after a Latin-1 one diffs against it', async () => {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const node = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'queued.html',
    html: page('start'),
  });
  // Queued in one turn of the event loop, so they share a transaction (src/store/writes.ts): each but the last
  // leaves its content row to the last, which writes it. The third must diff against the Latin-1 second's
  // bytes (not text: a snapshot), never against the row as the first left it.
  const bodies = [
    Buffer.from(page('one')),
    Buffer.from(page('two caf\u00e9'), 'latin1'),
    Buffer.from(page('three')),
    Buffer.from(page('four')),
  ];
  const by = { kind: 'sync' as const, accountId: person.id, writer: 'test' };
  const results = await Promise.all(bodies.map((bytes) => saveDocument(kiln.services, { nodeId: node.id, bytes, by })));
  assert.ok(results.every((r) => r.changed));
  const doc = main.on(kiln.hostOf(person.username));
  const versions = (await doc.get('/_/versions?path=queued.html')).json.versions as Array<{
    id: number;
    contentHash: string;
  }>;
  assert.equal(versions.length, bodies.length + 1);
  const saved = [];
  for (const v of versions.slice(0, -1).reverse())
    saved.push((await versionContent(kiln.services.database.db, v.id)).bytes);
  assert.deepEqual(
    saved.map((b) => b.toString('hex')),
    bodies.map((b) => b.toString('hex')),
    'each version is its save, in order',
  );
  const stored = await storedContent(kiln.services.database.db, node.id);
  assert.equal(stored!.html.toString(), bodies[3].toString(), 'the stored row is the last save');
});

test('the last save of a group changes nothing, or is refused: the row still ends as the newest save that took', async () => {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const by = { kind: 'sync' as const, accountId: person.id, writer: 'test' };
  // The group's last save writes the content row itself (src/store/group-state.ts); when it writes nothing, what
  // the saves before it left pending is written before the COMMIT.
  for (const last of ['unchanged', 'refused'] as const) {
    const node = await createNode(await actingAs(kiln.services, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name: `last-${last}.html`,
      html: page('start'),
    });
    const bodies = [Buffer.from(page('one')), Buffer.from(page('two')), Buffer.from(page('three'))];
    const answers = await Promise.allSettled([
      ...bodies.map((bytes) => saveDocument(kiln.services, { nodeId: node.id, bytes, by })),
      last === 'unchanged'
        ? saveDocument(kiln.services, { nodeId: node.id, bytes: bodies[2], by })
        : saveDocument(kiln.services, {
            nodeId: node.id,
            bytes: Buffer.from(page('four')),
            by,
            ifMatch: exactly('stale'),
          }),
    ]);
    assert.deepEqual(
      answers.map((a) => (a.status === 'fulfilled' ? (a.value.changed ? 'saved' : 'unchanged') : 'refused')),
      ['saved', 'saved', 'saved', last],
    );
    const stored = await storedContent(kiln.services.database.db, node.id);
    assert.equal(stored!.html.toString(), bodies[2].toString(), `${last}: the stored row is the third save`);
    const served = await main.on(kiln.hostOf(person.username)).get(`/last-${last}.html`);
    assert.equal(served.body.toString(), bodies[2].toString(), `${last}: the document serves the third save`);
  }
});

test('a read outside a transaction does not wait for an open write, and sees the last commit', async () => {
  const db = kiln.services.database.db;
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  let seenDuring: string | undefined;
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('people').set({ email: 'during@example.com' }).where('account_id', '=', person.id).execute();
    // Before, SQLite's one connection made this read wait for the transaction: it never ended.
    const row = await db
      .selectFrom('people')
      .select('email')
      .where('account_id', '=', person.id)
      .executeTakeFirstOrThrow();
    seenDuring = row.email;
  });
  assert.notEqual(seenDuring, 'during@example.com');
  const after = await db
    .selectFrom('people')
    .select('email')
    .where('account_id', '=', person.id)
    .executeTakeFirstOrThrow();
  assert.equal(after.email, 'during@example.com');
});
