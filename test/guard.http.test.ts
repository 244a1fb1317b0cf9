// The data-clobber guard over HTTP, in the wire of hyperclayjs 1.38's data-loss panel (src/ui/data-loss-panel.js:
// GET /_/data-loss?file=, POST /_/data-loss/<id> {choice, file}; `Save-Trigger: user | auto` on saves;
// `notification` frames on the live lane) and Hyperclay Local 1.22's control lane (POST /_/sync/control,
// `control` frames on the sync stream). Detection runs after a save is answered; the guard handles a
// document's checks in order, so the panel's next GET sees the outcome of the saves before it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, movableClock, type TestKiln } from './support/kiln.ts';
import { sessionsFor, signedIn, storeSessions, actingAs } from './support/people.ts';
import { keyHolder, SyncApi } from './support/sync-client.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { SseClient } from './support/sse.ts';
import { createNode } from '../src/nodes/tree.ts';
import { islandHash } from '../src/guard/classify.ts';
import { sweepOldGuardEvents } from '../src/guard/guard.ts';
import { DAY } from '../src/limits.ts';

let kiln: TestKiln;
const time = movableClock();
before(async () => (kiln = await startKiln({ clock: time.clock })));
after(() => kiln.stop());

const RULES =
  '<script type="application/json" data-rules-name="api" data-rules-version="1">{"title": "h1", "items": ".item[]"}</script>';
const page = (title: string, items: string[], extra = '') =>
  `<!doctype html><html><head>${RULES}</head><body><h1>${title}</h1><ul>${items
    .map((i) => `<html><li class="item">${i}</li></html>`)
    .join('')}</ul>${extra}</body></html>`;

async function ownerWith(name: string, html: string) {
  const main = kiln.client();
  const person = await signedIn(kiln, main, { plan: 'personal' });
  const node = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html,
  });
  const host = kiln.hostOf(person.username);
  const doc = main.on(host);
  const url = `http://${host}/${name}`;
  return { person, node, host, doc, url, main };
}

/** A person with a sync key who made `name` through the sync API, signed in on their host as well. */
async function syncingOwner(name: string, html: string) {
  const { person, key, api, port } = await keyHolder(kiln);
  const created = await api.create({ type: 'site', name, parentId: 0, content: html });
  const main = kiln.client();
  storeSessions(
    main.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, person.id, person.username),
  );
  const host = kiln.hostOf(person.username);
  return { person, key, api, port, created, main, doc: main.on(host), url: `http://${host}/${name}` };
}

type Doc = Awaited<ReturnType<typeof ownerWith>>['doc'];

/** POST /_/save as hyperclayjs 1.38 sends it (savePageCore.js). */
function save(
  doc: Doc,
  url: string,
  html: string,
  trigger: 'user' | 'auto' | null,
  headers: Record<string, string> = {},
) {
  return doc.post('/_/save', html, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': url,
      'page-url': url,
      ...(trigger ? { 'save-trigger': trigger } : {}),
      origin: new URL(url).origin,
      ...headers,
    },
  });
}

/** The panel's GET. */
async function pending(doc: Doc, url: string) {
  const res = await doc.get(`/_/data-loss?file=${encodeURIComponent(url)}`, { headers: { 'page-url': url } });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['cache-control'], 'no-store');
  return res.json.event;
}

/** The panel's POST. */
function resolve(doc: Doc, url: string, id: string, choice: string) {
  return doc.post(
    `/_/data-loss/${encodeURIComponent(id)}`,
    { choice, file: url },
    {
      headers: { 'page-url': url, origin: new URL(url).origin },
    },
  );
}

function liveLane(host: string, url: string, cookie: string) {
  return SseClient.open({
    port: Number(new URL(kiln.url).port),
    host,
    path: `/_/sync?document-url=${encodeURIComponent(url)}&lane=live`,
    headers: { cookie },
  });
}

test('a page script that empties the list: the event in the panel’s shape, live on the owner’s lane; restore brings the data back', async () => {
  const { doc, url, host, main, person } = await ownerWith(
    'guard-restore.html',
    page('Groceries', ['milk', 'eggs', 'bread']),
  );
  assert.equal(await pending(doc, url), null, 'opening the page starts protecting it');
  const lane = await liveLane(host, url, doc.jar.header(host));
  assert.equal(lane.status, 200);

  const wiped = page('Groceries', []);
  const saved = await save(doc, url, wiped, 'auto');
  assert.equal(saved.status, 200, saved.text);
  const event = await pending(doc, url);
  assert.ok(event, 'a background save that destroyed data raises an event');
  assert.match(event.id, /^[0-9a-f-]{36}$/);
  assert.equal(event.status, 'pending');
  assert.equal(event.canRevert, true);
  assert.equal(event.restorable, true, 'an emptied list takes its item markup from the version before the loss');
  assert.equal(typeof event.lastWriteAt, 'number');
  assert.deepEqual(event.preview, [{ key: 'items', now: '— empty —', yours: 'milk, eggs, bread' }]);
  assert.equal(event.fieldCount, 1);
  assert.equal(event.droppedAdditions, 0);
  assert.equal(event.lossSummary.provenance, 'ui-background');
  assert.equal(JSON.stringify(event).includes('recoverable'), false, 'the raw data never reaches the browser');
  const dashboard = (await main.get('/_/dashboard', { headers: { accept: 'text/html' } })).text;
  assert.match(dashboard, /saved data overwritten · review/, 'the dashboard marks the document');

  const raised = await lane.next();
  assert.equal(raised.event, undefined, 'unnamed frames: hyperclayjs listens to onmessage');
  assert.equal(raised.json.type, 'notification');
  assert.equal(raised.json.msgType, 'data-loss');
  assert.equal(raised.json.action, 'raised');
  assert.equal(raised.json.data.id, event.id);

  // A page that kept one item can take the rest back.
  const oneLeft = page('Groceries', ['milk'], '<html><p>a note added since</p></html>');
  assert.equal((await save(doc, url, oneLeft, 'auto')).status, 200);
  const again = await pending(doc, url);
  assert.equal(again.id, event.id, 'one event per document: a later clobber keeps the first data');
  assert.equal(again.restorable, true);

  const res = await resolve(doc, url, event.id, 'restore');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json, { ok: true, choice: 'restore', status: 'restored' });
  const served = (await doc.get('/guard-restore.html')).text;
  assert.deepEqual(
    [...served.matchAll(/<li class="item">([^<]*)<\/li>/g)].map((m) => m[1]),
    ['milk', 'eggs', 'bread'],
  );
  assert.match(served, /a note added since/, 'everything else the page has now stays');
  // The restore is a save other tabs of the page did not make: they are told (the panel's own tab reloads).
  const told = await lane.next();
  assert.deepEqual(
    [told.json.action, told.json.msg],
    ['reload', 'A version restore changed this page elsewhere. Reload to see the change.'],
  );
  const resolved = await lane.next();
  assert.equal(resolved.json.action, 'resolved');
  assert.equal(resolved.json.data.id, event.id);
  assert.equal(await pending(doc, url), null);
  const versions = (await doc.get('/_/versions?path=guard-restore.html')).json.versions;
  assert.equal(versions.length, 4, 'the restore is a save: one more version');
  // The activity feed says what happened and who resolved it.
  const feed = (await main.get('/_/activity')).json.activity as { kind: string; path: string; by: string }[];
  const lines = feed.filter((a) => a.path === 'guard-restore.html' && a.kind.startsWith('data-loss'));
  assert.deepEqual(
    lines.map((a) => a.kind),
    ['data-loss-restored', 'data-loss'],
  );
  assert.equal(lines[0].by, person.username);
  lane.close();
});

test('a list a background save emptied entirely is restored: its item markup comes from the version before the clobber, and nothing else of the page changes', async () => {
  const LIST = (items: string[], extra = '') =>
    `<!doctype html><html><head>${'<script type="application/json" data-rules-name="api" data-rules-version="1">{"books": ["#books li", {"title": ".t", "by": ".a"}]}</script>'}</head><body><h1>Reading</h1><ol id="books">${items
      .map((t) => `<li class="book"><b class="t">${t}</b> by <i class="a">someone</i></li>`)
      .join('')}</ol>${extra}</body></html>`;
  const { doc, url } = await ownerWith('guard-empty.html', LIST(['Middlemarch', 'Bleak House']));
  assert.equal(await pending(doc, url), null);
  assert.equal((await save(doc, url, LIST([], '<p>added since</p>'), 'auto')).status, 200);
  const event = await pending(doc, url);
  assert.ok(event);
  assert.equal(event.restorable, true);
  const res = await resolve(doc, url, event.id, 'restore');
  assert.equal(res.status, 200, res.text);
  const served = (await doc.get('/guard-empty.html')).text;
  assert.deepEqual(
    [...served.matchAll(/<li class="book"><b class="t">([^<]*)<\/b> by <i class="a">someone<\/i><\/li>/g)].map(
      (m) => m[1],
    ),
    ['Middlemarch', 'Bleak House'],
  );
  assert.doesNotMatch(served, /cms-template|data-kiln-seed/, 'no seed is left in the page');
  assert.match(served, /<p>added since<\/p>/);
  assert.equal(await pending(doc, url), null);
});

test('a person’s own deliberate delete raises nothing; a big gestured clobber does; a page without api rules is never guarded', async () => {
  const { doc, url } = await ownerWith('guard-gesture.html', page('List', ['a', 'b', 'c', 'd', 'e']));
  assert.equal((await save(doc, url, page('List', ['a', 'b', 'c', 'd']), 'user')).status, 200);
  assert.equal(await pending(doc, url), null);
  // The code editor is the owner's deliberate act: it blesses what it saves.
  assert.equal((await save(doc, url, page('List', ['a']), null, { 'x-kiln-editor': '1' })).status, 200);
  assert.equal(await pending(doc, url), null);
  assert.equal((await save(doc, url, page('List', ['a', 'b', 'c', 'd']), 'user')).status, 200);
  assert.equal((await save(doc, url, page('', []), 'user')).status, 200);
  const event = await pending(doc, url);
  assert.ok(event, 'a gestured save that wipes nearly everything still fires');
  assert.equal(event.lossSummary.provenance, 'ui-gestured');

  const plain = await ownerWith(
    'guard-plain.html',
    '<!doctype html><html><body><ul><li>x</li><li>y</li></ul></body></html>',
  );
  assert.equal((await save(plain.doc, plain.url, '<!doctype html><html><body></body></html>', 'auto')).status, 200);
  assert.equal(await pending(plain.doc, plain.url), null);
});

test('a sync write of an old copy raises an event; revert puts back the whole page as it was before it', async () => {
  const { api: sync, created, doc, url } = await syncingOwner('guard-sync.html', page('Notes', ['one']));
  const full = page('Notes', ['one', 'two', 'three']);
  assert.equal((await save(doc, url, full, 'user')).status, 200);
  // The desktop client still holds the first copy and writes it.
  await sync.upload(created.id, page('Notes', ['one']));
  const event = await pending(doc, url);
  assert.ok(event);
  assert.equal(event.lossSummary.provenance, 'external');
  assert.equal(event.restorable, true);

  const res = await resolve(doc, url, event.id, 'revert');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json, { ok: true, choice: 'revert', status: 'reverted' });
  assert.equal((await doc.get('/guard-sync.html')).text, full);
  assert.equal(await pending(doc, url), null);
});

test('an outside write that adds data is protected from then on: a stale tab’s background save that drops it raises an event; restore brings it back', async () => {
  const { api: sync, created, doc, url } = await syncingOwner('guard-stale-tab.html', page('Notes', ['one', 'two']));
  assert.equal(await pending(doc, url), null, 'the owner’s first look protects the data');
  // A sync client (an agent's write is external too) adds an item; the owner's tab, opened before, never saw it.
  await sync.upload(created.id, page('Notes', ['one', 'two', 'three']));
  assert.equal(await pending(doc, url), null, 'adding data raises nothing');
  // The stale tab's autosave writes the page it holds (its own change, without the item).
  assert.equal((await save(doc, url, page('Notes', ['one', 'two'], '<p>tab</p>'), 'auto')).status, 200);
  const event = await pending(doc, url);
  assert.ok(event, 'the item the tab never saw is not dropped silently');
  assert.equal(event.lossSummary.provenance, 'ui-background');
  assert.deepEqual(event.preview, [{ key: 'items', now: 'one, two', yours: 'one, two, three' }]);
  const res = await resolve(doc, url, event.id, 'restore');
  assert.equal(res.status, 200, res.text);
  // The item is back, and the tab's own change is kept.
  assert.match(
    (await doc.get('/guard-stale-tab.html')).text,
    /<li class="item">one<\/li><li class="item">two<\/li><li class="item">three<\/li><\/ul><p>tab<\/p>/,
  );
});

test('a loss noticed at a later save (the clobber itself could not be read): revert goes back to the protected data, not to the clobbered page', async () => {
  const items = ['a1', 'a2', 'a3', 'a4', 'a5'];
  const { doc, url } = await ownerWith('guard-late.html', page('Late', items));
  assert.equal(await pending(doc, url), null, 'opening the page starts protecting it');
  // A page script saves the page with its list emptied and its rules tag broken: the guard cannot read it.
  const broken = page('Late', []).replace('"items": ".item[]"}', '"items": ');
  assert.notEqual(broken, page('Late', []));
  assert.equal((await save(doc, url, broken, 'auto')).status, 200);
  assert.equal(await pending(doc, url), null, 'nothing to compare yet');
  // Its next save has the rules back, still without the items: the loss is noticed now.
  assert.equal((await save(doc, url, page('Late', [], '<p>later</p>'), 'auto')).status, 200);
  const event = await pending(doc, url);
  assert.ok(event, 'the loss is noticed');
  assert.equal(event.canRevert, true);
  const res = await resolve(doc, url, event.id, 'revert');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json, { ok: true, choice: 'revert', status: 'reverted' });
  assert.equal((await doc.get('/guard-late.html')).text, page('Late', items), 'the page as it was protected');
  assert.equal(await pending(doc, url), null);
});

test('dismiss accepts the loss and tells the owner’s devices; refusals answer in the panel’s {error} shape', async () => {
  const { api: sync, key, port, created, doc, url } = await syncingOwner('guard-dismiss.html', page('T', ['a', 'b']));
  assert.equal(await pending(doc, url), null);
  await sync.upload(created.id, page('T', ['a']));
  const event = await pending(doc, url);
  assert.ok(event);

  const device = await SseClient.open({
    port,
    host: kiln.config.rootDomain,
    path: '/_/sync/stream',
    headers: { 'x-api-key': key },
  });
  assert.equal(device.status, 200);
  assert.equal((await resolve(doc, url, event.id, 'nonsense')).status, 400);
  const wrongId = await resolve(doc, url, '00000000-0000-0000-0000-000000000000', 'dismiss');
  assert.equal(wrongId.status, 409);
  assert.equal(wrongId.json.code, 'event-mismatch');
  assert.equal(typeof wrongId.json.error, 'string');
  const res = await resolve(doc, url, event.id, 'dismiss');
  assert.deepEqual(res.json, { ok: true, choice: 'dismiss', status: 'dismissed' });
  assert.equal(await pending(doc, url), null);
  assert.equal((await doc.get('/guard-dismiss.html')).text, page('T', ['a']), 'dismiss writes nothing');
  const frame = await device.next({ skipTypes: ['ping', 'node-saved'] });
  assert.deepEqual(frame.json, {
    type: 'control',
    envelope: {
      type: 'data-loss/dismiss',
      v: 1,
      payload: {
        fileKey: 'guard-dismiss.html',
        recoverableDataHash: islandHash({ api: { title: 'T', items: ['a', 'b'] } }),
        nodeId: created.id,
      },
    },
  });
  device.close();
  const gone = await resolve(doc, url, event.id, 'dismiss');
  assert.equal(gone.status, 404);
  assert.equal(gone.json.error, 'No pending data-loss event');
});

test('only those who may restore versions see or resolve events: strangers get {event: null} and a refusal', async () => {
  const { doc, url, host } = await ownerWith('guard-private.html', page('Mine', ['x', 'y', 'z']));
  assert.equal(await pending(doc, url), null);
  await save(doc, url, page('Mine', []), 'auto');
  const event = await pending(doc, url);
  assert.ok(event);
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  const theirs = stranger.on(host);
  assert.equal(await pending(theirs, url), null);
  const anonymous = kiln.client().on(host);
  assert.equal(await pending(anonymous, url), null);
  const refused = await resolve(anonymous, url, event.id, 'dismiss');
  assert.ok([401, 403].includes(refused.status), refused.text);
  const crossSite = await doc.post(
    `/_/data-loss/${event.id}`,
    { choice: 'dismiss', file: url },
    {
      headers: { origin: 'http://evil.example' },
    },
  );
  assert.equal(crossSite.status, 403);
  assert.ok(await pending(doc, url), 'the event is still there');
});

test('a later save that brings the data back ends the event; events older than 30 days are dropped', async () => {
  const { doc, url } = await ownerWith('guard-undo.html', page('U', ['1', '2', '3']));
  assert.equal(await pending(doc, url), null);
  await save(doc, url, page('U', ['1']), 'auto');
  assert.ok(await pending(doc, url));
  await save(doc, url, page('U', ['1', '2', '3']), 'user');
  assert.equal(await pending(doc, url), null);

  await save(doc, url, page('U', []), 'auto');
  assert.ok(await pending(doc, url));
  time.advance(31 * DAY);
  try {
    await sweepOldGuardEvents(kiln.services);
  } finally {
    time.reset();
  }
  assert.equal(await pending(doc, url), null);
});

test('control lane: a device’s data-loss/dismiss ends the event here and reaches the other devices, not the sender', async () => {
  const { person, key, api, port, created, doc, url } = await syncingOwner('guard-control.html', page('C', ['p', 'q']));
  const other = (await createSyncKey(kiln.services, person.id)).key;
  assert.equal(await pending(doc, url), null);
  await api.upload(created.id, page('C', []));
  assert.ok(await pending(doc, url));

  const open = (k: string) =>
    SseClient.open({ port, host: kiln.config.rootDomain, path: '/_/sync/stream', headers: { 'x-api-key': k } });
  const sender = await open(key);
  const receiver = await open(other);
  const envelope = (hash: string) => ({
    type: 'data-loss/dismiss',
    v: 1,
    payload: { fileKey: 'guard-control.html', recoverableDataHash: hash, nodeId: created.id },
  });
  const wrong = await api.control(envelope('0'.repeat(64)));
  assert.equal(wrong.status, 200, wrong.text);
  assert.deepEqual(wrong.json, { ok: true, applied: false });
  assert.ok(await pending(doc, url), 'a dismissal of other data leaves the warning');
  const right = await api.control(envelope(islandHash({ api: { title: 'C', items: ['p', 'q'] } })));
  assert.deepEqual(right.json, { ok: true, applied: true });
  assert.equal(await pending(doc, url), null);

  const first = await receiver.next({ skipTypes: ['ping'] });
  assert.equal(first.json.type, 'control');
  assert.equal(first.json.envelope.payload.recoverableDataHash, '0'.repeat(64));
  const second = await receiver.next({ skipTypes: ['ping'] });
  assert.deepEqual(second.json.envelope, envelope(islandHash({ api: { title: 'C', items: ['p', 'q'] } })));
  const unknown = await api.control({ type: 'future/thing', payload: { x: 1 } });
  assert.deepEqual(unknown.json, { ok: true, applied: false }, 'unknown types are relayed, never an error');
  assert.equal((await receiver.next({ skipTypes: ['ping'] })).json.envelope.type, 'future/thing');
  // The sender's own stream: a later change arrives, and no control frame came before it.
  await api.upload(created.id, page('C', ['p', 'q', 'r']));
  const next = await sender.next({ skipTypes: ['ping'] });
  assert.equal(next.json.type, 'node-saved');
  assert.equal(
    sender.frames.some((f) => f.json?.type === 'control'),
    false,
  );
  sender.close();
  receiver.close();

  assert.equal((await api.control({ type: '', payload: {} })).status, 400);
  assert.equal((await api.control([1, 2])).status, 400);
  const nokey = await new SyncApi({ port, host: kiln.config.rootDomain, apiKey: '' }).control(envelope('0'.repeat(64)));
  assert.equal(nokey.status, 401);
});

test('a choice naming a page that is no document the caller may see: one 404, whether it is private or missing', async () => {
  const { node, host, main, url } = await ownerWith('guard-hidden.html', page('H', ['a', 'b']));
  const turned = await main.post(`/_/dashboard/nodes/${node.id}/visibility`, { visibility: 'private' });
  assert.equal(turned.status, 200, turned.text);
  const visitor = kiln.client().on(host);
  const hidden = await resolve(visitor, url, 'x', 'dismiss');
  const missing = await resolve(visitor, `http://${host}/guard-nothing.html`, 'x', 'dismiss');
  assert.equal(hidden.status, 404, hidden.text);
  assert.equal(missing.status, 404, missing.text);
  assert.deepEqual(hidden.json, missing.json);
  // The panel shows `error`: every refusal carries it.
  assert.equal(typeof hidden.json.error, 'string');
  // A page of another host is no document named here at all.
  const elsewhere = await visitor.post(
    '/_/data-loss/x',
    { choice: 'dismiss', file: 'http://elsewhere.example/guard-hidden.html' },
    { headers: { origin: new URL(url).origin } },
  );
  assert.equal(elsewhere.status, 400, elsewhere.text);
  assert.equal(elsewhere.json.code, 'missing-document-url');
  // A choice the panel never sends is refused as such.
  const odd = await resolve(main.on(host), url, 'x', 'undo');
  assert.equal(odd.status, 400, odd.text);
  assert.equal(odd.json.code, 'invalid');
  assert.equal(odd.json.error, 'choice must be dismiss | revert | restore');
});
