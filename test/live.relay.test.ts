// POST /_/sync (and the older POST /_/live-sync/save) as hyperclayjs 1.38.0 relays editor snapshots:
// JSON {snapshot|html, sender, identityMap?} with Document-URL (Page-URL) — broadcast on the live lane,
// nothing written. And `seq`: growing per document, across restarts too. And slow consumers.
import { until } from './support/wait.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKiln, storage, freshPostgres, type TestKiln } from './support/kiln.ts';
import { signedIn, newPerson, sessionsFor, storeSessions, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { Client } from './support/client.ts';
import { createNode, setVisibility } from '../src/nodes/tree.ts';
import { createPerson } from '../src/accounts/people.ts';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { limits } from '../src/limits.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const doc = (text: string) => `<!doctype html>\n<html><body><p>${text}</p></body></html>\n`;

async function ownerWithDocument(opts: { visibility?: 'public' | 'private' } = {}) {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const name = `relay-${person.username}.html`;
  const node = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc('v1'),
  });
  if (opts.visibility === 'private')
    await setVisibility(await actingAs(kiln.services, person.id), { nodeId: node.id, visibility: 'private' });
  const host = kiln.hostOf(person.username);
  return { person, node, host, main, doc: main.on(host), url: `http://${host}/${name}`, name };
}

const sameOrigin = (host: string) => ({ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' });

/** hyperclayjs spec profile: JSON {snapshot, sender, identityMap}, header Document-URL = location.href. */
function relay(c: Client, host: string, url: string, body: unknown, headers: Record<string, string> = {}) {
  return c.post('/_/sync', body as object, { headers: { 'document-url': url, ...sameOrigin(host), ...headers } });
}

function openLane(c: Client | null, host: string, url: string, lane: 'live' | 'saved') {
  const cookie = c?.jar.header(host);
  return SseClient.open({
    port,
    host,
    path: `/_/sync?document-url=${encodeURIComponent(url)}&lane=${lane}`,
    headers: cookie ? { cookie } : {},
  });
}

test('a snapshot is broadcast on the live lane as {html, sender, seq, identityMap}; nothing is written, the saved lane hears nothing', async () => {
  const o = await ownerWithDocument();
  const live = await openLane(o.main, o.host, o.url, 'live');
  const saved = await openLane(null, o.host, o.url, 'saved');
  const versionsBefore = await kiln.services.database.db
    .selectFrom('versions')
    .select('id')
    .where('node_id', '=', o.node.id)
    .execute();
  try {
    await live.comment('connected');
    await saved.comment('connected');
    const identityMap = { 'body.0.1': 'tab-1:3', 'body.0.2': 'tab-1:4' };
    const res = await relay(o.doc, o.host, o.url, { snapshot: doc('typing…'), sender: 'tab-1', identityMap });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.success, true);
    assert.equal(res.json.msgType, 'success');
    const f = await live.next();
    assert.equal(f.event, undefined);
    assert.deepEqual(f.json, { html: doc('typing…'), sender: 'tab-1', seq: res.json.seq, identityMap });
    assert.equal(f.id, String(f.json.seq));
    // Nothing written: same bytes served, no new version, same checksum.
    const page = await o.doc.get(`/${o.name}`);
    assert.equal(page.text, doc('v1'));
    const versionsAfter = await kiln.services.database.db
      .selectFrom('versions')
      .select('id')
      .where('node_id', '=', o.node.id)
      .execute();
    assert.equal(versionsAfter.length, versionsBefore.length);
    // The saved lane's first frame is the next save, not the snapshot.
    const saveRes = await o.doc.post('/_/save', doc('saved'), {
      headers: { 'content-type': 'text/plain', 'document-url': o.url, ...sameOrigin(o.host) },
    });
    assert.equal(saveRes.status, 200);
    assert.equal((await saved.next()).json.html, doc('saved'));
  } finally {
    live.close();
    saved.close();
  }
});

test('{document, sender} is relayed on the saved lane only; nothing is written, the live lane hears nothing (host conformance page)', async () => {
  const o = await ownerWithDocument();
  const live = await openLane(o.main, o.host, o.url, 'live');
  const saved = await openLane(null, o.host, o.url, 'saved');
  try {
    await live.comment('connected');
    await saved.comment('connected');
    const res = await relay(o.doc, o.host, o.url, { document: doc('relayed'), sender: 'peer-7' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.msg, 'Document relayed');
    const f = await saved.next();
    assert.deepEqual([f.json.html, f.json.sender, f.json.seq], [doc('relayed'), 'peer-7', res.json.seq]);
    assert.equal((await o.doc.get(`/${o.name}`)).text, doc('v1'), 'nothing written');
    // The live lane's next frame is the next snapshot, not the relayed document.
    const snap = await relay(o.doc, o.host, o.url, { snapshot: doc('typing'), sender: 'tab-2' });
    assert.equal(snap.status, 200);
    assert.equal((await live.next()).json.html, doc('typing'));
    // Strangers cannot relay.
    assert.equal((await relay(kiln.client(o.host), o.host, o.url, { document: doc('x'), sender: 's' })).status, 403);
  } finally {
    live.close();
    saved.close();
  }
});

test('`html` works in place of `snapshot`; the legacy POST /_/live-sync/save with Page-URL relays too', async () => {
  const o = await ownerWithDocument();
  const live = await openLane(o.main, o.host, o.url, 'live');
  try {
    await live.comment('connected');
    const a = await relay(o.doc, o.host, o.url, { html: doc('via html key'), sender: 'tab-2' });
    assert.equal(a.status, 200, a.text);
    assert.deepEqual((await live.next()).json, { html: doc('via html key'), sender: 'tab-2', seq: a.json.seq });
    const b = await o.doc.post(
      '/_/live-sync/save',
      { html: doc('legacy'), sender: 'tab-3' },
      { headers: { 'page-url': o.url, ...sameOrigin(o.host) } },
    );
    assert.equal(b.status, 200, b.text);
    assert.deepEqual((await live.next()).json, { html: doc('legacy'), sender: 'tab-3', seq: b.json.seq });
    // The sender's own frames come back too: clients drop them by sender.
  } finally {
    live.close();
  }
});

test('refusals: 400 without Document-URL or snapshot, 403 anonymous, 400 non-owner, 404 private to strangers, 403 cross-origin', async () => {
  const o = await ownerWithDocument();
  const noHeader = await o.doc.post('/_/sync', { snapshot: doc('x'), sender: 's' }, { headers: sameOrigin(o.host) });
  assert.equal(noHeader.status, 400);
  assert.equal(noHeader.json.msgType, 'error');
  const noSnapshot = await relay(o.doc, o.host, o.url, { sender: 's' });
  assert.equal(noSnapshot.status, 400);
  const notString = await relay(o.doc, o.host, o.url, { snapshot: 42, sender: 's' });
  assert.equal(notString.status, 400);
  const asText = await o.doc.post('/_/sync', doc('text'), {
    headers: { 'content-type': 'text/plain', 'document-url': o.url, ...sameOrigin(o.host) },
  });
  assert.equal(asText.status, 400);

  const anonymous = kiln.client(o.host);
  assert.equal((await relay(anonymous, o.host, o.url, { snapshot: doc('x'), sender: 's' })).status, 403);
  const other = kiln.client();
  await signedIn(kiln, other);
  const stranger = await relay(other.on(o.host), o.host, o.url, { snapshot: doc('x'), sender: 's' });
  assert.equal(stranger.status, 403, 'another account’s session is no session on this host');
  const crossSite = await relay(
    o.doc,
    o.host,
    o.url,
    { snapshot: doc('x'), sender: 's' },
    { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
  );
  assert.equal(crossSite.status, 403);

  const p = await ownerWithDocument({ visibility: 'private' });
  const hidden = await relay(other.on(p.host), p.host, p.url, { snapshot: doc('x'), sender: 's' });
  assert.equal(hidden.status, 404);
  const missing = await relay(o.doc, o.host, o.url.replace('.html', '-none.html'), { snapshot: doc('x'), sender: 's' });
  assert.equal(missing.status, 404);
});

test('snapshots up to 10 MB are accepted (over the 5 MB JSON default); larger ones answer 413', async () => {
  const o = await ownerWithDocument();
  assert.equal(limits.body.jsonLiveSync, 10 * 1024 * 1024);
  const six = doc('a'.repeat(6 * 1024 * 1024));
  const ok = await relay(o.doc, o.host, o.url, { snapshot: six, sender: 'big' });
  assert.equal(ok.status, 200, ok.text.slice(0, 200));
  const eleven = doc('a'.repeat(11 * 1024 * 1024));
  const tooBig = await relay(o.doc, o.host, o.url, { snapshot: eleven, sender: 'big' });
  assert.equal(tooBig.status, 413);
});

test('seq only grows, and is Date.now()-based', async () => {
  const o = await ownerWithDocument();
  const before = Date.now();
  const seqs: number[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await relay(o.doc, o.host, o.url, { snapshot: doc(`n${i}`), sender: 's' });
    seqs.push(res.json.seq);
  }
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `seq ${i}`);
  assert.ok(seqs[0] >= before * 1000, 'seq is at least the time of the request (ms × 1000)');
  assert.ok(Number.isSafeInteger(seqs.at(-1)!));
});

test('seq keeps growing across a restart on the same storage', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-restart-'));
  const pgdb = storage === 'postgres' ? await freshPostgres() : null;
  const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  if (pgdb) env.DATABASE_URL = pgdb.url;
  if (pgdb && process.env.KILN_TEST_REDIS_URL) env.REDIS_URL = process.env.KILN_TEST_REDIS_URL;
  const config = loadConfig(env);
  try {
    let running = await startServer(config);
    const person = await createPerson(running.services, newPerson());
    const sessions = await sessionsFor(running.services.database.db, config, person.id, person.username);
    const name = `restart-${person.username}.html`;
    await createNode(await actingAs(running.services, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name,
      html: doc('v1'),
    });
    const host = `${person.username}.${config.rootDomain}`;
    const url = `http://${host}/${name}`;
    const send = async (text: string) => {
      const c = new Client(Number(new URL(running.url).port), host);
      storeSessions(c.jar, config, sessions);
      const res = await relay(c, host, url, { snapshot: doc(text), sender: 's' });
      assert.equal(res.status, 200, res.text);
      return res.json.seq as number;
    };
    const beforeRestart = [await send('a'), await send('b'), await send('c')];
    await running.close();
    running = await startServer(config);
    const afterRestart = await send('d');
    await running.close();
    assert.ok(afterRestart > Math.max(...beforeRestart), `${afterRestart} > ${beforeRestart}`);
  } finally {
    await pgdb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a stream that stops reading is dropped once too much waits for it; the others go on', async () => {
  const o = await ownerWithDocument();
  const hub = kiln.services.hub;
  // Counted once the earlier tests' closed streams have ended on the server, so their ending is not miscounted.
  await until(() => hub.stats().streams === 0, { what: 'the earlier tests’ streams to end', timeout: 30_000 });
  const reader = await openLane(null, o.host, o.url, 'saved');
  await reader.comment('connected');
  const base = hub.stats().streams;
  // A raw connection that never reads its socket.
  const stalled = net.connect(port, '127.0.0.1');
  stalled.pause();
  stalled.write(
    `GET /_/sync?document-url=${encodeURIComponent(o.url)}&lane=live HTTP/1.1\r\nHost: ${o.host}\r\nCookie: ${o.main.jar.header(o.host)}\r\n\r\n`,
  );
  let deadline = Date.now() + 10_000;
  while (hub.stats().streams < base + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal(hub.stats().streams, base + 1);
  try {
    const two = doc('z'.repeat(2 * 1024 * 1024));
    for (let i = 0; i < 24 && hub.stats().streams > base; i++) {
      assert.equal((await relay(o.doc, o.host, o.url, { snapshot: two, sender: `s${i}` })).status, 200);
    }
    deadline = Date.now() + 10_000;
    while (hub.stats().streams > base && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(hub.stats().streams, base, 'the stalled stream was dropped');
    const res = await o.doc.post('/_/save', doc('still flowing'), {
      headers: { 'content-type': 'text/plain', 'document-url': o.url, ...sameOrigin(o.host) },
    });
    assert.equal(res.status, 200);
    assert.equal((await reader.next()).json.html, doc('still flowing'));
  } finally {
    stalled.destroy();
    reader.close();
  }
});
