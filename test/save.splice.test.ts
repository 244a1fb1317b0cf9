// A document's content row holds a base and its splices (src/core/splice.ts; PostgreSQL writes the spans a save
// changed, SQLite the whole content): whatever mix of saves arrives (one after another, four at a time so that
// they share commits, edits far apart, a Latin-1 save, saves this process did not make itself), and whatever the
// row held before (one splice, as stored before several were; a whole content an older process wrote over several),
// the document read back from the database and served is the newest save, and every version is its save's bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { versionContent } from '../src/save/history.ts';
import { storedContent } from '../src/store/nodes.ts';
import { SEVERAL } from '../src/core/splice.ts';
import { saveDocument } from '../src/save/pipeline.ts';
import { createServices, closeServices } from '../src/server.ts';
import { sql } from 'kysely';
import { until } from './support/wait.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const sha = (b: string | Uint8Array) => createHash('sha256').update(b).digest('hex');
const page = (items: string[]) =>
  `<!doctype html><html><head><title>List</title></head><body><ul>\n${items.map((t, i) => `<li data-id="${i}">${t}</li>\n`).join('')}</ul></body></html>`;

/** A signed-in person and their document `name`: a list of 1,200 items (~30 KB). */
async function listDocument(name: string) {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const items = Array.from({ length: 1200 }, (_, i) => `item ${i} pending`);
  const node = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html: page(items),
  });
  return { main, person, items, node };
}

test('saves one by one, four at a time, far apart, in Latin-1 and from another process: the stored and served document is the newest save', async () => {
  const { main, person, items, node } = await listDocument('list.html');
  const host = kiln.hostOf(person.username);
  const doc = main.on(host);
  const save = (body: Buffer) =>
    doc.post('/_/save', body, {
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/list.html` },
    });
  const db = kiln.services.database.db;
  const sent = new Set<string>();
  const send = async (body: Buffer) => {
    sent.add(sha(body));
    const res = await save(body);
    assert.equal(res.status, 200, res.text);
  };
  /** The bytes as stored, read from the database (not this process's cache), and as served once the cache of
   *  them is dropped. */
  const storedNow = async () => {
    const stored = await storedContent(db, node.id);
    kiln.services.documents.content.delete(node.id);
    const served = await kiln.client().on(host).get('/list.html');
    assert.equal(served.status, 200);
    assert.equal(sha(served.body), sha(stored!.html), 'served as stored');
    return stored!.html;
  };

  // A person working down the list: each save changes one item next to the last.
  for (let i = 0; i < 25; i++) {
    items[i] = `item ${i} done`;
    const body = Buffer.from(page(items));
    await send(body);
    assert.equal(sha(await storedNow()), sha(body), `save ${i}`);
  }
  if (storage === 'postgres') {
    // White-box: the saves above wrote their changed span, not the whole row (what the save bench measures).
    const row = await db
      .selectFrom('node_contents')
      .select(['splice_at', 'splice'])
      .where('node_id', '=', node.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(row.splice_at, null, 'small edits are stored as a splice');
    assert.ok(row.splice!.length < 4096, `a splice of ${row.splice!.length} bytes`);
  }

  // Edits at both ends (the splice would cover the page: a new base), then small ones again.
  items[0] = 'first item, renamed';
  items[1199] = 'last item, renamed';
  await send(Buffer.from(page(items)));
  items[600] = 'middle';
  await send(Buffer.from(page(items)));
  assert.equal(sha(await storedNow()), sha(Buffer.from(page(items))));

  // A Latin-1 save (no text, so nothing to diff), then UTF-8 again; then saves whose previous bytes this process
  // does not hold (as when another process saved last: its memo is dropped), read from the database instead.
  items[601] = 'caf\u00e9';
  await send(Buffer.from(page(items), 'latin1'));
  items[602] = 'caf\u00e9 again';
  await send(Buffer.from(page(items)));
  for (let i = 0; i < 4; i++) {
    kiln.services.documents.texts.delete(node.id);
    items[700 + i] = `edited elsewhere ${i}`;
    await send(Buffer.from(page(items)));
    assert.equal(sha(await storedNow()), sha(Buffer.from(page(items))), `save from elsewhere ${i}`);
  }

  // Four people at once, each from their own copy (no If-Match: the last one wins): saves queued together share
  // commits, and each but the last of a commit leaves the content row to the last.
  await Promise.all(
    [0, 1, 2, 3].map(async (who) => {
      const mine = [...items];
      for (let i = 0; i < 12; i++) {
        mine[who * 300 + i] = `person ${who} edit ${i}`;
        if (i === 6) mine[1199 - who] = `person ${who} at the end`;
        await send(Buffer.from(page(mine)));
      }
    }),
  );

  const versions = (await doc.get('/_/versions?path=list.html')).json.versions as Array<{
    id: number;
    contentHash: string;
  }>;
  // The creation, then one version per save, newest first; each is the bytes of a save.
  assert.equal(versions.length, sent.size + 1);
  for (const v of versions.slice(0, -1)) {
    const { bytes } = await versionContent(db, v.id);
    assert.equal(sha(bytes), v.contentHash);
    assert.ok(sent.has(v.contentHash), 'a version is a save that was sent');
  }
  assert.equal(sha(await storedNow()), versions[0].contentHash, 'the stored row is the newest save');
});

test('saves queued together, each a small edit further down the page: the row the last of them writes holds them all', async () => {
  const { person, items, node } = await listDocument('queued.html');
  const by = { kind: 'sync' as const, accountId: person.id, writer: 'test' };
  for (const round of [0, 1]) {
    // Queued in one turn of the event loop, so they share a transaction (src/store/writes.ts): each but the last
    // leaves the content row to the last, whose splice must cover the edits of all of them.
    const bodies = [10, 20, 30, 40].map((i) => {
      items[i + round * 100] = `item ${i} done in round ${round}`;
      return Buffer.from(page(items));
    });
    const results = await Promise.all(
      bodies.map((bytes) => saveDocument(kiln.services, { nodeId: node.id, bytes, by })),
    );
    assert.ok(results.every((r) => r.changed));
    const stored = await storedContent(kiln.services.database.db, node.id);
    assert.equal(stored!.html.toString(), bodies[3].toString(), `round ${round}: the row is the last save`);
  }
});

test('edits far apart, a row stored with one splice and a row an older process wrote whole: each reads back as saved and takes the next save', async () => {
  const { main, person, items, node } = await listDocument('far.html');
  const host = kiln.hostOf(person.username);
  const db = kiln.services.database.db;
  const save = async () => {
    const body = Buffer.from(page(items));
    const res = await main.on(host).post('/_/save', body, {
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/far.html` },
    });
    assert.equal(res.status, 200, res.text);
    return body;
  };
  /** The document as the database holds it and as a visitor is served it, neither from this process's memory. */
  const readBack = async () => {
    kiln.services.documents.content.delete(node.id);
    kiln.services.documents.texts.delete(node.id);
    const stored = (await storedContent(db, node.id))!.html;
    const served = await kiln.client().on(host).get('/far.html');
    assert.equal(sha(served.body), sha(stored), 'served as stored');
    return stored;
  };
  const row = () =>
    db
      .selectFrom('node_contents')
      .select(['base', 'splice_at', 'splice_end', 'splice', 'splice_map'])
      .where('node_id', '=', node.id)
      .executeTakeFirstOrThrow();

  // Each edit ~500 items (~12 KB) from the last.
  for (let n = 0; n < 12; n++) {
    items[(n * 517) % 1200] = `item far ${n}`;
    assert.equal(sha(await save()), sha(await readBack()), `far save ${n}`);
  }
  if (storage === 'postgres') {
    // White-box: one region per edit since the base, not one splice spanning the page between them.
    const r = await row();
    assert.equal(r.splice_end, SEVERAL);
    assert.equal(r.splice_map!.length, 12 * 12, 'twelve regions');
    assert.ok(r.splice!.length < 12 * 40, `splices of ${r.splice!.length} bytes`);
  }

  // A row as stored before several splices: one splice over a base that differs from the content there only.
  const content = Buffer.from(await readBack());
  const at = content.indexOf('item far 3');
  const base = Buffer.from(content);
  base.write('XXXX', at);
  await db
    .updateTable('node_contents')
    .set({ base, splice_at: at, splice_end: at + 4, splice: content.subarray(at, at + 4), splice_map: null })
    .where('node_id', '=', node.id)
    .execute();
  assert.equal(sha(await readBack()), sha(content), 'one splice, as stored before');
  items[1100] = 'item near the end';
  assert.equal(sha(await save()), sha(await readBack()), 'a save over a row with one splice');

  // An older process's save over a row with several splices: the whole content, the splice columns cleared, the
  // map left as it was (it does not know the column).
  items[5] = 'item near the start';
  const spliced = await save();
  const left = (await row()).splice_map;
  await db
    .updateTable('node_contents')
    .set({ base: spliced, splice_at: null, splice_end: null, splice: null })
    .where('node_id', '=', node.id)
    .execute();
  if (storage === 'postgres') assert.notEqual(left, null, 'the map left behind');
  assert.equal(sha(await readBack()), sha(spliced), 'the whole content, the map not read');
  for (let n = 0; n < 3; n++) {
    items[(n * 431) % 1200] = `item after ${n}`;
    assert.equal(sha(await save()), sha(await readBack()), `a save after the older process's ${n}`);
  }
  const versions = (await main.on(host).get('/_/versions?path=far.html')).json.versions as Array<{
    id: number;
    contentHash: string;
  }>;
  for (const v of versions) assert.equal(sha((await versionContent(db, v.id)).bytes), v.contentHash);
});

test('two processes’ saves that both waited on the document’s lock: the second places its splices by the layout the first wrote (PostgreSQL)', {
  skip: storage !== 'postgres' && 'SQLite has one writer: no save waits on another process’s lock',
}, async () => {
  const { person, items, node } = await listDocument('waited.html');
  const by = { kind: 'sync' as const, accountId: person.id, writer: 'test' };
  const db = kiln.services.database.db;
  // A second process's services on the same database (its own pool and its own save queue).
  const other = await createServices(kiln.config);
  try {
    // Splices in the row first (each save far from the last), so the layout matters.
    for (const i of [100, 700]) {
      items[i] = `item ${i} edited`;
      await saveDocument(kiln.services, { nodeId: node.id, bytes: Buffer.from(page(items)), by });
    }
    // A third party holds the document's row lock while both saves start, one after the other: each one's read (the
    // document joined with its newest version and its content row's layout) is taken before the lock is theirs, and
    // PostgreSQL gives the lock in the order asked. The first adds two regions to the row (edits at both ends that
    // keep the page's length, so an old layout still seems to fit it); the second, one item far from both, finds a
    // joined layout from before that commit, and would write its splices by it, leaving out the first one's.
    const a = [...items];
    a[0] = 'ITEM 0 PENDING';
    a[1199] = 'ITEM 1199 PENDING';
    const b = [...a];
    b[1000] = 'edited by the second process';
    const bodies = [Buffer.from(page(a)), Buffer.from(page(b))];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    const holder = db.transaction().execute(async (tx) => {
      await tx.selectFrom('nodes').select('id').where('id', '=', node.id).forUpdate().execute();
      locked();
      await released;
    });
    await holding;
    const waiting = async () =>
      Number(
        (
          await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`.execute(db)
        ).rows[0].n,
      );
    const first = saveDocument(kiln.services, { nodeId: node.id, bytes: bodies[0], by });
    await until(async () => (await waiting()) === 1, { what: 'the first save waiting on the lock' });
    const second = saveDocument(other, { nodeId: node.id, bytes: bodies[1], by });
    await until(async () => (await waiting()) === 2, { what: 'both saves waiting on the lock' });
    release();
    await holder;
    const saves = [first, second];
    const results = await Promise.all(saves);
    assert.ok(results.every((r) => r.changed));
    // The later version is the stored document; every version is the bytes of its save.
    const versions = await db
      .selectFrom('versions')
      .select(['id', 'content_hash'])
      .where('node_id', '=', node.id)
      .orderBy('backup_number', 'desc')
      .execute();
    assert.equal(versions[0].content_hash, sha(bodies[1]), 'the second save is the newest version');
    const last = bodies[1];
    kiln.services.documents.content.delete(node.id);
    kiln.services.documents.texts.delete(node.id);
    assert.equal(sha((await storedContent(db, node.id))!.html), sha(last), 'the stored row is the later save');
    for (const v of versions) assert.equal(sha((await versionContent(db, v.id)).bytes), v.content_hash);
    // And the next save builds on it.
    items.splice(0, items.length, ...b);
    items[50] = 'after both';
    const next = Buffer.from(page(items));
    await saveDocument(kiln.services, { nodeId: node.id, bytes: next, by });
    assert.equal(sha((await storedContent(db, node.id))!.html), sha(next));
  } finally {
    await closeServices(other);
  }
});
