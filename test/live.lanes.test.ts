// The live-sync lanes as hyperclayjs 1.38.0 opens them (communication/live-sync.js): an EventSource on
// the document's own host, `GET /_/sync?document-url=<href>&lane=live|saved&resume-id=…` (or the older
// `/_/live-sync/stream?page-url=…`), unnamed frames `{html, sender, seq}`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import type { Client } from './support/client.ts';
import { createNode, setVisibility } from '../src/nodes/tree.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { SyncApi } from './support/sync-client.ts';
import { call, mcpClient } from './support/mcp.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const doc = (text: string) => `<!doctype html>\n<html><body><p>${text}</p></body></html>\n`;

async function ownerWithDocument(opts: { visibility?: 'public' | 'private'; folder?: boolean } = {}) {
  const main = kiln.client();
  // A paid plan: some tests write with a sync key.
  const person = await signedIn(kiln, main, { plan: 'personal' });
  const name = `lane-${person.username}.html`;
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
  return { person, node, host, main, url: `http://${host}/${name}`, name };
}

/** The stream URL hyperclayjs builds: the whole href (with query and fragment), encoded. */
function lanePath(url: string, lane?: string, legacy = false) {
  const base = legacy ? `/_/live-sync/stream?page-url=` : `/_/sync?document-url=`;
  return `${base}${encodeURIComponent(`${url}?editmode=true#x`)}${lane ? `&lane=${lane}` : ''}&resume-id=${'ab'.repeat(16)}`;
}

/** Opens a lane as a browser would: the jar's cookies for that host, nothing else. */
function openLane(client: Client | null, host: string, path: string, headers: Record<string, string> = {}) {
  const cookie = client?.jar.header(host);
  return SseClient.open({ port, host, path, headers: { ...(cookie ? { cookie } : {}), ...headers } });
}

async function browserSave(main: Client, host: string, url: string, html: string) {
  const res = await main.on(host).post('/_/save', html, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': url,
      origin: `http://${host}`,
      'sec-fetch-site': 'same-origin',
    },
  });
  assert.equal(res.status, 200, res.text);
}

async function relay(main: Client, host: string, url: string, body: Record<string, unknown>) {
  return main.on(host).post('/_/sync', body, {
    headers: { 'document-url': url, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' },
  });
}

test('saved lane: the SSE headers, `: connected` first, then {html, sender, seq} with id = seq after each save', async () => {
  const { host, main, url } = await ownerWithDocument();
  const viewer = await openLane(null, host, lanePath(url, 'saved'));
  try {
    assert.equal(viewer.status, 200);
    assert.equal(viewer.headers['content-type'], 'text/event-stream');
    assert.equal(viewer.headers['cache-control'], 'no-cache');
    assert.equal(viewer.headers.connection, 'keep-alive');
    assert.equal(viewer.headers['x-accel-buffering'], 'no');
    await viewer.comment('connected');
    assert.ok(viewer.raw.startsWith(': connected\n\n'));
    await browserSave(main, host, url, doc('v2'));
    const f = await viewer.next();
    assert.equal(f.event, undefined, 'unnamed: hyperclayjs wires onmessage only');
    assert.deepEqual(Object.keys(f.json).sort(), ['html', 'sender', 'seq']);
    assert.equal(f.json.html, doc('v2'));
    assert.equal(f.json.sender, 'server-save');
    assert.equal(typeof f.json.seq, 'number');
    assert.equal(f.id, String(f.json.seq));
    await browserSave(main, host, url, doc('v3'));
    const g = await viewer.next();
    assert.equal(g.json.html, doc('v3'));
    assert.ok(g.json.seq > f.json.seq, 'seq only grows');
    // A save that changes nothing broadcasts nothing: the next frame is the next real change.
    await browserSave(main, host, url, doc('v3'));
    await browserSave(main, host, url, doc('v4'));
    assert.equal((await viewer.next()).json.html, doc('v4'));
  } finally {
    viewer.close();
  }
});

test('lane defaults to live; the legacy /_/live-sync/stream?page-url= opens the same lanes', async () => {
  const { host, main, url } = await ownerWithDocument();
  const live = await openLane(main, host, lanePath(url));
  const legacySaved = await openLane(null, host, lanePath(url, 'saved', true));
  const legacyLive = await openLane(main, host, lanePath(url, 'live', true));
  try {
    for (const s of [live, legacySaved, legacyLive]) {
      assert.equal(s.status, 200);
      await s.comment('connected');
    }
    const sent = await relay(main, host, url, { snapshot: doc('typing'), sender: 'tab-1' });
    assert.equal(sent.status, 200, sent.text);
    assert.equal((await live.next()).json.html, doc('typing'));
    assert.equal((await legacyLive.next()).json.html, doc('typing'));
    await browserSave(main, host, url, doc('saved'));
    const saved = await legacySaved.next();
    assert.equal(saved.json.html, doc('saved'), 'the saved lane never carried the snapshot');
    assert.equal(saved.json.sender, 'server-save');
  } finally {
    for (const s of [live, legacySaved, legacyLive]) s.close();
  }
});

test('refusals: no document-url 400, another host 400, the main host 404, no such document 404', async () => {
  const { host, url, person } = await ownerWithDocument();
  const none = await openLane(null, host, '/_/sync?lane=saved');
  assert.equal(none.status, 400);
  assert.equal(none.json.msgType, 'error');
  const foreign = await openLane(
    null,
    host,
    `/_/sync?document-url=${encodeURIComponent(`http://elsewhere.example/${person.username}.html`)}`,
  );
  assert.equal(foreign.status, 400);
  const main = await openLane(
    null,
    kiln.config.rootDomain,
    lanePath(`http://${kiln.config.rootDomain}/x.html`, 'saved'),
  );
  assert.equal(main.status, 404);
  const missing = await openLane(null, host, lanePath(url.replace(/\.html$/, '-nope.html'), 'saved'));
  assert.equal(missing.status, 404);
  const folderish = await openLane(null, host, lanePath(`http://${host}/`, 'saved'));
  assert.equal(folderish.status, 404);
});

test('private document: the saved lane answers 404 to strangers (like a missing one) and opens for the owner', async () => {
  const { host, main, url } = await ownerWithDocument({ visibility: 'private' });
  const anonymous = await openLane(null, host, lanePath(url, 'saved'));
  assert.equal(anonymous.status, 404);
  const other = kiln.client();
  await signedIn(kiln, other);
  const stranger = await openLane(other, host, lanePath(url, 'saved'));
  assert.equal(stranger.status, 404);
  const strangerLive = await openLane(other, host, lanePath(url, 'live'));
  assert.equal(strangerLive.status, 404, 'the live lane does not reveal a private document either');
  const owner = await openLane(main, host, lanePath(url, 'saved'));
  try {
    assert.equal(owner.status, 200);
    await owner.comment('connected');
    await browserSave(main, host, url, doc('private v2'));
    assert.equal((await owner.next()).json.html, doc('private v2'));
  } finally {
    owner.close();
  }
});

test('live lane: refused to anonymous visitors and to people signed in elsewhere (403: no session on this host), open to the owner', async () => {
  const { host, main, url } = await ownerWithDocument();
  const anonymous = await openLane(null, host, lanePath(url, 'live'));
  assert.equal(anonymous.status, 403);
  assert.equal(anonymous.json.msgType, 'error');
  const other = kiln.client();
  await signedIn(kiln, other);
  const stranger = await openLane(other, host, lanePath(url, 'live'));
  assert.equal(stranger.status, 403, 'another account’s session is no session on this host');
  const owner = await openLane(main, host, lanePath(url, 'live'));
  try {
    assert.equal(owner.status, 200);
    await owner.comment('connected');
  } finally {
    owner.close();
  }
});

test('keep-alive: `: ping` comments only on lanes (a data frame would reach the morph handler)', async () => {
  const { host, url, main } = await ownerWithDocument();
  const s = await openLane(null, host, lanePath(url, 'saved'));
  try {
    await s.comment('connected');
    kiln.services.hub.pingAll();
    await s.comment('ping');
    await browserSave(main, host, url, doc('after ping'));
    const f = await s.next();
    assert.equal(f.json.html, doc('after ping'), 'no data frame came before the save');
  } finally {
    s.close();
  }
});

test('Last-Event-ID: a reconnecting lane gets the frames it missed, in order, then live ones', async () => {
  const { host, main, url } = await ownerWithDocument();
  const first = await openLane(main, host, lanePath(url, 'live'));
  await first.comment('connected');
  await relay(main, host, url, { snapshot: doc('s1'), sender: 'tab-a' });
  const seen = await first.next();
  first.close();
  await relay(main, host, url, { snapshot: doc('s2'), sender: 'tab-b', identityMap: { 'body.0': 'tab-b:1' } });
  await browserSave(main, host, url, doc('saved meanwhile'));
  await relay(main, host, url, { snapshot: doc('s3'), sender: 'tab-b' });
  const again = await openLane(main, host, lanePath(url, 'live'), { 'last-event-id': seen.id! });
  try {
    await again.comment('connected');
    const r1 = await again.next();
    const r2 = await again.next();
    assert.deepEqual(r1.json, {
      html: doc('s2'),
      sender: 'tab-b',
      seq: r1.json.seq,
      identityMap: { 'body.0': 'tab-b:1' },
    });
    assert.equal(r2.json.html, doc('s3'), 'the saved-lane frame in between is not replayed on the live lane');
    assert.ok(seen.json.seq < r1.json.seq && r1.json.seq < r2.json.seq);
    await relay(main, host, url, { snapshot: doc('s4'), sender: 'tab-b' });
    const live = await again.next();
    assert.equal(live.json.html, doc('s4'));
    assert.ok(live.json.seq > r2.json.seq);
  } finally {
    again.close();
  }
});

test('saved lane after a gap the replay log cannot fill: one frame with the stored document', async () => {
  const { host, main, url } = await ownerWithDocument();
  const first = await openLane(null, host, lanePath(url, 'saved'));
  await first.comment('connected');
  await browserSave(main, host, url, doc('kept 1'));
  const seen = await first.next();
  first.close();
  await browserSave(main, host, url, doc('kept 2'));
  // A snapshot too large for the replay log (over 1 MB) breaks the chain of kept events.
  const big = doc('x'.repeat(1_200_000));
  assert.equal((await relay(main, host, url, { snapshot: big, sender: 'tab-z' })).status, 200);
  const again = await openLane(null, host, lanePath(url, 'saved'), { 'last-event-id': seen.id! });
  try {
    await again.comment('connected');
    const f = await again.next();
    assert.equal(f.json.html, doc('kept 2'));
    assert.equal(f.json.sender, 'server-save');
    assert.ok(f.json.seq > seen.json.seq);
    assert.equal(f.id, String(f.json.seq));
    await browserSave(main, host, url, doc('kept 3'));
    const g = await again.next();
    assert.equal(g.json.html, doc('kept 3'));
    assert.ok(g.json.seq > f.json.seq);
  } finally {
    again.close();
  }
});

// A change made elsewhere (an agent, a sync tool, the code editor, a restore) reaches the editing tabs as Hyperclay
// Local 1.22 tells an editing tab of an edit on disk (engine-watcher.js): `{type: 'notification', msgType: 'warning',
// msg, action: 'reload', persistent: true}` on the live lane, which hyperclayjs 1.38 shows as a persistent toast
// (live-sync.js handleNotification). Editing tabs never take the stored page in: a morph could strip their editing
// state. The `notices` lane (Kiln's toolbar, in a tab without live sync) carries the live lane's notifications only.
async function syncWriter(person: { id: number }) {
  const { key } = await createSyncKey(kiln.services, person.id);
  return new SyncApi({ port, host: kiln.config.rootDomain, apiKey: key });
}

test('a change made elsewhere tells the live and notices lanes (a reload notice naming the writer); a browser save does not', async () => {
  const { person, node, host, main, url } = await ownerWithDocument();
  const live = await openLane(main, host, lanePath(url, 'live'));
  const notices = await openLane(main, host, lanePath(url, 'notices'));
  const api = await syncWriter(person);
  try {
    for (const s of [live, notices]) {
      assert.equal(s.status, 200);
      await s.comment('connected');
    }
    // A browser tab's own save: its peers get its snapshots, and it would be told of its own save.
    await browserSave(main, host, url, doc('from a tab'));
    await api.upload(node.id, doc('from the desktop app'));
    for (const s of [live, notices]) {
      const f = await s.next();
      assert.deepEqual(
        { ...f.json, seq: typeof f.json.seq },
        {
          type: 'notification',
          msgType: 'warning',
          msg: 'A sync tool changed this page elsewhere. Reload to see the change.',
          action: 'reload',
          persistent: true,
          seq: 'number',
        },
      );
      assert.equal(f.id, String(f.json.seq));
    }
    // A snapshot on the live lane is not a notice: the notices lane never carries one.
    assert.equal((await relay(main, host, url, { snapshot: doc('typing'), sender: 'tab-1' })).status, 200);
    assert.equal((await live.next()).json.html, doc('typing'));
    await api.upload(node.id, doc('again'));
    assert.equal((await live.next()).json.type, 'notification');
    assert.equal((await notices.next()).json.msg, 'A sync tool changed this page elsewhere. Reload to see the change.');
  } finally {
    live.close();
    notices.close();
  }
});

test('a sync write that sends its editor snapshot (Hyperclay Local editing in its own browser) is a live morph, not a reload notice', async () => {
  const { person, node, host, main, url } = await ownerWithDocument();
  const live = await openLane(main, host, lanePath(url, 'live'));
  const api = await syncWriter(person);
  try {
    await live.comment('connected');
    await api.upload(node.id, doc('typed in the app'), { snapshotHtml: doc('typed in the app'), senderId: 'device-1' });
    const f = await live.next();
    assert.deepEqual([f.json.html, f.json.sender], [doc('typed in the app'), 'device-1']);
    // The next frame is the next write's notice: the snapshot's write sent none.
    await api.upload(node.id, doc('from disk'));
    assert.equal((await live.next()).json.action, 'reload');
  } finally {
    live.close();
  }
});

test('the notices lane: open to whoever has the live lane (a share guest, who is not told who wrote), refused to a visitor', async () => {
  const { person, node, host, main, url } = await ownerWithDocument();
  assert.notEqual((await openLane(null, host, lanePath(url, 'notices'))).status, 200, 'a visitor has no live lane');
  const shared = await main.post(`/_/dashboard/nodes/${node.id}/sharing`, { enabled: true });
  assert.equal(shared.status, 200, shared.text);
  const guest = kiln.client(host);
  const link = new URL(shared.json.shareUrl);
  const first = await guest.get(link.pathname + link.search);
  assert.equal(first.status, 302);
  const lane = await openLane(guest, host, lanePath(url, 'notices'));
  const api = await syncWriter(person);
  try {
    assert.equal(lane.status, 200);
    await lane.comment('connected');
    await api.upload(node.id, doc('from the desktop app'));
    assert.equal((await lane.next()).json.msg, 'Someone changed this page elsewhere. Reload to see the change.');
  } finally {
    lane.close();
  }
});

// hyperclayjs saves the whole page without If-Match: a tab opened before a change made elsewhere and saved after it
// undoes it. The data-clobber guard covers lost data; a change outside the data is found by applying it again to
// the saved page (src/save/stale.ts), and the owner is told: a notice on the page's live lanes, and the activity feed.
test('a browser save that undid a change made elsewhere: the owner’s lanes and the activity feed say whose, and which version holds it', async () => {
  const lines = (...l: string[]) => `<!doctype html>\n<html><body>\n${l.join('\n')}\n</body></html>\n`;
  const { person, node, host, main, url, name } = await ownerWithDocument();
  const p0 = lines(
    '<h1>Title</h1>',
    '<p>one</p>',
    '<p>two</p>',
    '<p>three</p>',
    '<p>four</p>',
    '<p>five</p>',
    '<p>six</p>',
  );
  await browserSave(main, host, url, p0);
  const notices = await openLane(main, host, lanePath(url, 'notices'));
  const api = await syncWriter(person);
  try {
    await notices.comment('connected');
    // The desktop app changes the title; a tab that loaded it saves its own change: nothing undone.
    const p1 = p0.replace('<h1>Title</h1>', '<h1>Title from the desktop</h1>');
    await api.upload(node.id, p1);
    assert.equal((await notices.next()).json.action, 'reload');
    const fresh = p1.replace('<p>six</p>', '<p>six, from a fresh tab</p>');
    await browserSave(main, host, url, fresh);
    // The desktop app changes a paragraph; a tab that never loaded it saves over it.
    const p2 = fresh.replace('<p>two</p>', '<p>two, from the desktop</p>');
    await api.upload(node.id, p2);
    assert.equal((await notices.next()).json.action, 'reload', 'the fresh tab’s save undid nothing');
    const versions = (await main.on(host).get(`/_/versions?path=${name}`)).json.versions;
    const holder = versions[0];
    await browserSave(main, host, url, p1.replace('<p>six</p>', '<p>six, from a stale tab</p>'));
    const f = await notices.next();
    assert.deepEqual(
      { ...f.json, seq: typeof f.json.seq },
      {
        type: 'notification',
        msgType: 'warning',
        msg: `A save from a tab opened before it undid the change by a sync tool (version ${holder.backupNumber}). Compare to bring it back.`,
        action: 'stale-save',
        persistent: true,
        data: { version: holder.backupNumber, diff: `/_/version/${holder.id}/diff` },
        seq: 'number',
      },
    );
    // The version named holds the undone change.
    const held = await main.on(host).get(`/_/version/${holder.id}`, { headers: { accept: 'application/json' } });
    assert.match(held.text, /two, from the desktop/);
    const feed = (await main.get('/_/activity')).json.activity as { kind: string; path: string; undid?: unknown }[];
    const line = feed.find((a) => a.path === name && a.kind === 'stale-save');
    assert.deepEqual(line?.undid, { by: 'A sync tool', version: holder.backupNumber });
  } finally {
    notices.close();
  }
});

// A tab misses the live notice when the change lands between its page being served and its lane opening (the
// toolbar opens the notices lane after `load` and hyperclayjs's `ready`: seconds on a slow phone). The owner's
// page carries the ETag served in the toolbar's tag; the lane opened `&since=<it>` tells that change first.
const RELOAD = (who: string) => `${who} changed this page elsewhere. Reload to see the change.`;

/** The page as a browser tab loads it (the owner's gets the toolbar): its ETag, and the one the toolbar carries. */
async function servedPage(client: Client, host: string, name: string) {
  const res = await client.on(host).get(`/${name}`, { headers: { 'sec-fetch-dest': 'document' } });
  assert.equal(res.status, 200);
  const etag = String(res.headers.etag).replace(/"/g, '');
  const tagged = /data-kiln-toolbar/.test(res.text)
    ? /toolbar\.js\?[^"]*" data-kiln-toolbar data-etag="([0-9a-f]+)"/.exec(res.text)?.[1]
    : null;
  return { etag, tagged };
}

const sincePath = (url: string, lane: string, since: string) => `${lanePath(url, lane)}&since=${since}`;

test('a lane opened since the page served: a change made elsewhere before it opened is its first frame, naming the writer', async () => {
  const { person, node, host, main, url, name } = await ownerWithDocument();
  const page = await servedPage(main, host, name);
  assert.equal(page.tagged, page.etag, 'the toolbar’s tag carries the ETag served');
  const { key } = await createSyncKey(kiln.services, person.id);
  const agent = await mcpClient(kiln, key, { name: 'Claude Code' });
  const api = await syncWriter(person);
  try {
    // The agent writes while the tab is still loading; then the same owner's other tab saves (a browser save).
    const edited = await call(agent, 'edit_document', {
      path: name,
      edits: [{ op: 'replace', selector: 'p', html: '<p>by the agent</p>' }],
    });
    assert.equal(edited.changed, true);
    await browserSave(main, host, url, doc('by another tab'));
    const notices = await openLane(main, host, sincePath(url, 'notices', page.etag));
    const live = await openLane(main, host, sincePath(url, 'live', page.etag));
    try {
      for (const lane of [notices, live]) {
        assert.equal(lane.status, 200);
        const f = await lane.next();
        assert.equal(f.id, undefined, 'no event of the channel: it moves no Last-Event-ID');
        assert.deepEqual(Object.keys(f.json).sort(), ['action', 'msg', 'msgType', 'persistent', 'type']);
        assert.deepEqual(
          [f.json.type, f.json.msgType, f.json.action, f.json.persistent],
          ['notification', 'warning', 'reload', true],
        );
        assert.match(
          f.json.msg,
          /^Claude Code via sync key hcsk_\S+ changed this page elsewhere\. Reload to see the change\.$/,
        );
      }
      // Then the lanes go on as before: the next change comes live, with its seq.
      await api.upload(node.id, doc('from the desktop app'));
      let lastId = '';
      for (const lane of [notices, live]) {
        const g = await lane.next();
        assert.equal(g.json.msg, RELOAD('A sync tool'));
        assert.equal(g.id, String(g.json.seq));
        lastId = g.id!;
      }
      // A stream resumed (Last-Event-ID) was told on its first open: it replays what it missed, no more.
      const resumed = await openLane(main, host, sincePath(url, 'notices', page.etag), { 'last-event-id': lastId });
      try {
        await resumed.comment('connected');
        await api.upload(node.id, doc('from the desktop app, again'));
        const h = await resumed.next();
        assert.equal(h.id, String(h.json.seq));
        assert.equal(h.json.msg, RELOAD('A sync tool'));
      } finally {
        resumed.close();
      }
    } finally {
      notices.close();
      live.close();
    }
    // A tab served the page as it is now is told nothing on opening: its first frame is the next change.
    const fresh = await servedPage(main, host, name);
    const lane = await openLane(main, host, sincePath(url, 'notices', fresh.etag));
    try {
      await lane.comment('connected');
      await api.upload(node.id, doc('again'));
      const f = await lane.next();
      assert.equal(f.id, String(f.json.seq), 'the live notice, not one on opening');
      assert.equal(f.json.msg, RELOAD('A sync tool'));
    } finally {
      lane.close();
    }
  } finally {
    await agent.close();
  }
});

test('a lane opened since the page served: nothing on opening when only browser tabs saved it since, or for an ETag that is no version of it', async () => {
  const { person, node, host, main, url, name } = await ownerWithDocument();
  const page = await servedPage(main, host, name);
  const other = await ownerWithDocument();
  const foreign = (await servedPage(other.main, other.host, other.name)).etag;
  const api = await syncWriter(person);
  // The same owner's other tab saves twice: its peers had its snapshots, as live.
  await browserSave(main, host, url, doc('by another tab'));
  await browserSave(main, host, url, doc('by another tab, again'));
  const opened = [
    sincePath(url, 'notices', page.etag),
    sincePath(url, 'live', page.etag),
    sincePath(url, 'notices', 'not-an-etag'),
    sincePath(url, 'notices', '0123456789abcdef'),
    sincePath(url, 'notices', foreign),
    `${sincePath(url, 'notices', page.etag)}&since=${page.etag}`,
  ];
  const lanes = await Promise.all(opened.map((p) => openLane(main, host, p)));
  try {
    for (const lane of lanes) {
      assert.equal(lane.status, 200);
      await lane.comment('connected');
    }
    // The first frame each lane has is the next change's, live (any notice on opening would come before it).
    await api.upload(node.id, doc('from the desktop app'));
    for (const [i, lane] of lanes.entries()) {
      const f = await lane.next();
      assert.equal(f.json.msg, RELOAD('A sync tool'), opened[i]);
      assert.equal(f.id, String(f.json.seq), opened[i]);
    }
  } finally {
    for (const lane of lanes) lane.close();
  }
});

test('a lane opened since the page served, by a share guest: the change before it opened is told without the writer’s name', async () => {
  const { person, node, host, main, url } = await ownerWithDocument();
  const shared = await main.post(`/_/dashboard/nodes/${node.id}/sharing`, { enabled: true });
  assert.equal(shared.status, 200, shared.text);
  const guest = kiln.client(host);
  const link = new URL(shared.json.shareUrl);
  assert.equal((await guest.get(link.pathname + link.search)).status, 302);
  const page = await servedPage(guest, host, link.pathname.slice(1));
  assert.equal(page.tagged, null, 'a share guest has no toolbar');
  const api = await syncWriter(person);
  await api.upload(node.id, doc('from the desktop app'));
  const lane = await openLane(guest, host, sincePath(url, 'notices', page.etag));
  try {
    assert.equal(lane.status, 200);
    const f = await lane.next();
    assert.equal(f.id, undefined);
    assert.equal(f.json.msg, RELOAD('Someone'));
    assert.equal(f.json.action, 'reload');
  } finally {
    lane.close();
  }
  // A visitor, who has no live lane, is refused as before: `since` decides nothing.
  assert.notEqual((await openLane(null, host, sincePath(url, 'notices', page.etag))).status, 200);
});
