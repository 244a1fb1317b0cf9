// GET /_/sync/stream and the team stream, as the desktop sync engine reads them (docs/notes/
// hyperclay-local-sync.md §3): unnamed JSON `data:` frames with a `type`, full paths, 16-hex
// checksums, inline site content, `sync-ready` first on protocol 2, every change once per stream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { until } from './support/wait.ts';
import { createSyncKey, revokeSyncKey } from '../src/sync/keys.ts';
import { createNode, createPath, deleteNode, moveNode, renameNode } from '../src/nodes/tree.ts';
import { saveDocument } from '../src/save/pipeline.ts';
import { broadcastSnapshot } from '../src/events/publish.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { limits } from '../src/limits.ts';
import { SYSTEM } from '../src/access/caller.ts';
import { contextOf } from '../src/context.ts';
import type { Plan } from '../src/store/schema.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const checksumOf = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);
const doc = (text: string) => `<!doctype html>\n<html><body><p>${text}</p></body></html>\n`;

async function personWithKey(plan: Plan = 'personal') {
  const main = kiln.client();
  const person = await signedIn(kiln, main, { plan });
  const { key, id: keyId } = await createSyncKey(kiln.services, person.id);
  return { person, key, keyId, main, host: kiln.hostOf(person.username) };
}

function openStream(key: string | null, headers: Record<string, string> = {}, path = '/_/sync/stream') {
  return SseClient.open({
    port,
    host: kiln.config.rootDomain,
    path,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...headers },
  });
}

/** The save hyperclayjs makes (text body, Document-URL) as the signed-in owner. */
async function browserSave(main: ReturnType<TestKiln['client']>, host: string, path: string, html: string) {
  const url = `http://${host}/${path}`;
  const res = await main.on(host).post('/_/save', html, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': url,
      'page-url': url,
      origin: `http://${host}`,
      'sec-fetch-site': 'same-origin',
    },
  });
  assert.equal(res.status, 200, res.text);
  return res;
}

test('refusals: a missing key, one not starting with hcsk_, an unknown and a revoked key answer 401 JSON', async () => {
  const { key, keyId, person } = await personWithKey();
  const cases: Array<[string | null, string]> = [
    [null, 'missing-key'],
    [`sk_${'a'.repeat(64)}`, 'invalid-key'],
    [`hcsk_${'0'.repeat(64)}`, 'invalid-key'],
  ];
  for (const [k, code] of cases) {
    const res = await openStream(k);
    assert.equal(res.status, 401, `${k}: ${res.body}`);
    assert.equal(res.json.msgType, 'error');
    assert.equal(res.json.code, code);
    assert.equal(typeof res.json.msg, 'string');
  }
  assert.equal(await revokeSyncKey(kiln.services, person.id, keyId), true);
  const revoked = await openStream(key);
  assert.equal(revoked.status, 401);
  assert.equal(revoked.json.code, 'revoked-key');
  // The sync API, streams included, lives on the main address only.
  const onDocHost = await SseClient.open({
    port,
    host: kiln.hostOf(person.username),
    path: '/_/sync/stream',
    headers: { 'x-api-key': key },
  });
  assert.equal(onDocHost.status, 404);
});

test('the stream answers the SSE headers and starts with `: connected`; protocol 1 gets no sync-ready', async () => {
  const { key, person, main, host } = await personWithKey();
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: `p1-${person.username}.html`,
    html: doc('one'),
  });
  const stream = await openStream(key);
  try {
    assert.equal(stream.status, 200);
    assert.equal(stream.headers['content-type'], 'text/event-stream');
    assert.equal(stream.headers['cache-control'], 'no-cache');
    assert.equal(stream.headers.connection, 'keep-alive');
    assert.equal(stream.headers['x-accel-buffering'], 'no');
    await stream.comment('connected');
    assert.ok(stream.raw.startsWith(': connected\n\n'), stream.raw);
    await browserSave(main, host, `p1-${person.username}.html`, doc('two'));
    const first = await stream.next();
    assert.equal(first.json.type, 'node-saved', 'the first frame of a protocol 1 stream is the change itself');
  } finally {
    stream.close();
  }
});

test('a browser save reaches the stream as node-saved: full path, 16-hex checksum, ISO time, inline content, unnamed, with an id', async () => {
  const { key, person, main, host } = await personWithKey();
  const name = `todo-${person.username}.html`;
  const node = await createPath(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    path: `notes/deep/${name}`,
    html: doc('v1'),
  });
  const stream = await openStream(key);
  try {
    await stream.comment('connected');
    const v2 = doc('v2 \u00e9\u2603');
    await browserSave(main, host, `notes/deep/${name}`, v2);
    const f = await stream.next();
    assert.equal(f.event, undefined, 'frames are unnamed: the desktop engine listens to onmessage only');
    assert.match(f.id ?? '', /^\d+$/);
    assert.deepEqual(Object.keys(f.json).sort(), [
      'checksum',
      'content',
      'modifiedAt',
      'nodeId',
      'nodeType',
      'path',
      'size',
      'type',
    ]);
    assert.equal(f.json.type, 'node-saved');
    assert.equal(f.json.nodeId, node.id);
    assert.equal(f.json.nodeType, 'site');
    assert.equal(f.json.path, `notes/deep/${name}`);
    assert.equal(f.json.checksum, checksumOf(v2));
    assert.equal(f.json.content, v2);
    assert.equal(f.json.size, Buffer.byteLength(v2));
    assert.match(f.json.modifiedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.ok(!stream.raw.includes('\nevent:') && !stream.raw.startsWith('event:'));
  } finally {
    stream.close();
  }
});

test('every change reaches every stream of the account exactly once, the writer’s own included; other accounts hear nothing', async () => {
  const a = await personWithKey();
  const second = await createSyncKey(kiln.services, a.person.id);
  const b = await personWithKey();
  const name = `once-${a.person.username}.html`;
  const node = await createNode(await actingAs(kiln.services, a.person.id), {
    ownerId: a.person.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc('v1'),
  });
  const bNode = await createNode(await actingAs(kiln.services, b.person.id), {
    ownerId: b.person.id,
    parentId: 0,
    type: 'site',
    name: `fence-${b.person.username}.html`,
    html: doc('b1'),
  });
  const s1 = await openStream(a.key);
  const s2 = await openStream(second.key, { 'x-sync-protocol': '2', 'x-sync-account-id': String(a.person.id) });
  const other = await openStream(b.key);
  try {
    for (const s of [s1, s2, other]) await s.comment('connected');
    // A sync write by the first key (its own stream gets the echo), a browser save, a rename.
    const v2 = doc('by key');
    await saveDocument(kiln.services, {
      nodeId: node.id,
      bytes: Buffer.from(v2),
      by: { kind: 'sync', accountId: a.person.id, writer: `key:${a.keyId}` },
    });
    const v3 = doc('by browser');
    await browserSave(a.main, a.host, name, v3);
    await renameNode(await actingAs(kiln.services, a.person.id), { nodeId: node.id, name: `renamed-${name}` });
    // Fence: one more save; everything before it has arrived once it does.
    const v4 = doc('fence');
    await browserSave(a.main, a.host, `renamed-${name}`, v4);
    for (const s of [s1, s2]) {
      const got = [];
      for (;;) {
        const f = await s.next({ skipTypes: ['sync-ready'] });
        got.push(f.json);
        if (f.json.type === 'node-saved' && f.json.content === v4) break;
      }
      assert.deepEqual(
        got.map((j) => [j.type, j.content ?? j.newPath]),
        [
          ['node-saved', v2],
          ['node-saved', v3],
          ['node-renamed', `renamed-${name}`],
          ['node-saved', v4],
        ],
      );
      const ids = s.frames.filter((f) => f.json.type !== 'sync-ready').map((f) => Number(f.id));
      assert.deepEqual(
        [...ids].sort((x, y) => x - y),
        ids,
        'ids grow',
      );
      assert.equal(new Set(ids).size, ids.length, 'no frame twice');
    }
    // The other account's stream: its own save is the first thing it hears.
    await saveDocument(kiln.services, {
      nodeId: bNode.id,
      bytes: Buffer.from(doc('b2')),
      by: { kind: 'sync', accountId: b.person.id, writer: null },
    });
    const first = await other.next();
    assert.equal(first.json.nodeId, bNode.id);
    assert.equal(other.unread().length, 0);
  } finally {
    for (const s of [s1, s2, other]) s.close();
  }
});

test('a sync PUT with snapshotHtml + senderId: node-saved and live-sync once on every stream (the writer’s too), the snapshot on the live lane', async () => {
  const a = await personWithKey();
  const second = await createSyncKey(kiln.services, a.person.id);
  const name = `put-${a.person.username}.html`;
  const node = await createPath(await actingAs(kiln.services, a.person.id), {
    ownerId: a.person.id,
    path: `docs/${name}`,
    html: doc('v1'),
  });
  const writer = await openStream(a.key);
  const other = await openStream(second.key);
  const cookie = a.main.jar.header(a.host);
  const live = await SseClient.open({
    port,
    host: a.host,
    path: `/_/sync?document-url=${encodeURIComponent(`http://${a.host}/docs/${name}`)}&lane=live`,
    headers: { cookie },
  });
  try {
    for (const st of [writer, other, live]) await st.comment('connected');
    const v2 = doc('from the desktop');
    const put = await kiln.client().request('PUT', `/_/sync/nodes/${node.id}/content`, {
      headers: { 'x-api-key': a.key, 'if-match': `"${checksumOf(doc('v1'))}"` },
      body: { content: v2, snapshotHtml: doc('pre-strip snapshot'), senderId: 'device-7' },
    });
    assert.equal(put.status, 200, put.text);
    for (const st of [writer, other]) {
      const frames = [(await st.next()).json, (await st.next()).json].sort((x, y) => x.type.localeCompare(y.type));
      assert.deepEqual(
        frames.map((f) => f.type),
        ['live-sync', 'node-saved'],
      );
      assert.deepEqual(frames[0], {
        type: 'live-sync',
        nodeId: node.id,
        file: `docs/${name}`,
        html: doc('pre-strip snapshot'),
        sender: 'device-7',
      });
      assert.equal(frames[1].content, v2);
      assert.equal(frames[1].checksum, put.json.checksum);
      assert.equal(frames[1].path, `docs/${name}`);
    }
    const lf = await live.next();
    assert.deepEqual(lf.json, { html: doc('pre-strip snapshot'), sender: 'device-7', seq: lf.json.seq });
    // Fence: nothing else (no duplicate) arrived before the next change.
    await browserSave(a.main, a.host, `docs/${name}`, doc('fence'));
    for (const st of [writer, other]) assert.equal((await st.next()).json.content, doc('fence'));
  } finally {
    for (const st of [writer, other, live]) st.close();
  }
});

test('folders, renames, moves and deletes arrive with full paths', async () => {
  const { key, person } = await personWithKey();
  const s = kiln.services;
  const stream = await openStream(key);
  try {
    await stream.comment('connected');
    const a = await createNode(await actingAs(s, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'folder',
      name: 'a',
    });
    const b = await createNode(await actingAs(s, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'folder',
      name: 'b',
    });
    const name = `x-${person.username}.html`;
    const x = await createNode(await actingAs(s, person.id), {
      ownerId: person.id,
      parentId: a.id,
      type: 'site',
      name,
      html: doc('x'),
    });
    await renameNode(await actingAs(s, person.id), { nodeId: x.id, name: `y-${name}` });
    await moveNode(await actingAs(s, person.id), { nodeId: x.id, parentId: b.id });
    await deleteNode(await actingAs(s, person.id), { nodeId: x.id });
    const folderA = (await stream.next()).json;
    assert.deepEqual(
      {
        type: folderA.type,
        nodeId: folderA.nodeId,
        nodeType: folderA.nodeType,
        path: folderA.path,
        parentId: folderA.parentId,
      },
      { type: 'node-saved', nodeId: a.id, nodeType: 'folder', path: 'a', parentId: 0 },
    );
    assert.equal((await stream.next()).json.path, 'b');
    const created = (await stream.next()).json;
    assert.equal(created.type, 'node-saved');
    assert.equal(created.path, `a/${name}`);
    assert.equal(created.content, doc('x'));
    assert.deepEqual((await stream.next()).json, {
      type: 'node-renamed',
      nodeId: x.id,
      nodeType: 'site',
      oldPath: `a/${name}`,
      newPath: `a/y-${name}`,
    });
    assert.deepEqual((await stream.next()).json, {
      type: 'node-moved',
      nodeId: x.id,
      nodeType: 'site',
      oldPath: `a/y-${name}`,
      newPath: `b/y-${name}`,
    });
    assert.deepEqual((await stream.next()).json, {
      type: 'node-deleted',
      nodeId: x.id,
      nodeType: 'site',
      path: `b/y-${name}`,
    });
  } finally {
    stream.close();
  }
});

test('a snapshot with a sender reaches the sync streams as live-sync {file, html, sender}', async () => {
  const { key, person } = await personWithKey();
  const node = await createPath(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    path: `live/${person.username}-page.html`,
    html: doc('v1'),
  });
  const stream = await openStream(key);
  try {
    await stream.comment('connected');
    await broadcastSnapshot(kiln.services, { node, html: doc('typing'), sender: 'device-42', toSyncStreams: true });
    const f = await stream.next();
    assert.equal(f.event, undefined);
    assert.deepEqual(f.json, {
      type: 'live-sync',
      nodeId: node.id,
      file: `live/${person.username}-page.html`,
      html: doc('typing'),
      sender: 'device-42',
    });
  } finally {
    stream.close();
  }
});

test('protocol 2: sync-ready first, with the account id and whether the plan includes syncing; a foreign account id answers 409', async () => {
  const paid = await personWithKey('personal');
  const free = await personWithKey('free');
  const p2 = (k: string, id: number) => openStream(k, { 'x-sync-protocol': '2', 'x-sync-account-id': String(id) });
  const s1 = await p2(paid.key, paid.person.id);
  const s2 = await openStream(free.key, { 'x-sync-protocol': '2' });
  try {
    await s1.comment('connected');
    const ready = await s1.next();
    assert.equal(ready.event, undefined);
    assert.deepEqual(ready.json, {
      type: 'sync-ready',
      accountId: paid.person.id,
      sync: { enabled: true, reason: null },
    });
    assert.ok(s1.raw.indexOf(': connected') < s1.raw.indexOf('sync-ready'));
    const freeReady = await s2.next();
    assert.deepEqual(freeReady.json, {
      type: 'sync-ready',
      accountId: free.person.id,
      sync: { enabled: false, reason: 'payment-required' },
    });
  } finally {
    s1.close();
    s2.close();
  }
  const wrong = await p2(paid.key, free.person.id);
  assert.equal(wrong.status, 409);
  assert.equal(wrong.json.code, 'account-changed');
  assert.equal(wrong.json.msgType, 'error');
});

test('keep-alive: `: ping` on every stream, plus an unnamed {"type":"ping"} frame the desktop watchdog counts', async () => {
  const { key, person } = await personWithKey();
  assert.equal(kiln.services.hub.keepAliveMs, limits.liveKeepAliveMs);
  assert.equal(limits.liveKeepAliveMs, 30_000);
  const s1 = await openStream(key);
  const s2 = await openStream(key, { 'x-sync-protocol': '2', 'x-sync-account-id': String(person.id) });
  try {
    await s1.comment('connected');
    await s2.comment('connected');
    kiln.services.hub.pingAll();
    for (const s of [s1, s2]) {
      await s.comment('ping');
      const f = await s.next({ skipTypes: ['sync-ready'] });
      assert.deepEqual(f.json, { type: 'ping' });
      assert.equal(f.id, undefined, 'a keep-alive does not move the Last-Event-ID');
    }
  } finally {
    s1.close();
    s2.close();
  }
});

test('Last-Event-ID: a reconnecting stream gets what it missed, in order, then live changes', async () => {
  const { key, person, main, host } = await personWithKey();
  const name = `resume-${person.username}.html`;
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc('v1'),
  });
  const first = await openStream(key);
  await first.comment('connected');
  await browserSave(main, host, name, doc('v2'));
  const seen = await first.next();
  first.close();
  await browserSave(main, host, name, doc('v3'));
  await browserSave(main, host, name, doc('v4'));
  const again = await openStream(key, { 'last-event-id': seen.id! });
  let lastId = '';
  try {
    await again.comment('connected');
    const r1 = await again.next();
    const r2 = await again.next();
    assert.deepEqual([r1.json.content, r2.json.content], [doc('v3'), doc('v4')]);
    assert.ok(Number(r1.id) > Number(seen.id) && Number(r2.id) > Number(r1.id));
    await browserSave(main, host, name, doc('v5'));
    const live = await again.next();
    assert.equal(live.json.content, doc('v5'));
    assert.ok(Number(live.id) > Number(r2.id));
    lastId = live.id!;
  } finally {
    again.close();
  }
  // Resuming from the newest id replays nothing. An id older than the log: what the log still keeps
  // is replayed (here all of it), then live changes.
  const current = await openStream(key, { 'last-event-id': lastId });
  const ancient = await openStream(key, { 'last-event-id': '999' });
  try {
    await current.comment('connected');
    await ancient.comment('connected');
    await browserSave(main, host, name, doc('v6'));
    assert.equal((await current.next()).json.content, doc('v6'));
    const contents = [];
    for (;;) {
      const f = await ancient.next();
      contents.push(f.json.content);
      if (f.json.content === doc('v6')) break;
    }
    assert.deepEqual(contents, ['v1', 'v2', 'v3', 'v4', 'v5', 'v6'].map(doc));
  } finally {
    current.close();
    ancient.close();
  }
});

test('team stream: needs protocol 2 and the team id (428), membership (404), the right id (409), more than a viewer role (403)', async () => {
  const owner = await personWithKey();
  const editor = await personWithKey();
  const viewer = await personWithKey();
  const stranger = await personWithKey();
  const team = await createTeam(kiln.services, {
    username: `team${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'personal',
  });
  await setMember(contextOf(kiln.services, SYSTEM), {
    teamId: team.id,
    username: editor.person.username,
    role: 'editor',
  });
  await setMember(contextOf(kiln.services, SYSTEM), {
    teamId: team.id,
    username: viewer.person.username,
    role: 'viewer',
  });
  const path = `/_/team/${team.username}/sync/stream`;
  const teamHeaders = { 'x-sync-protocol': '2', 'x-sync-account-id': String(team.id) };

  const noKey = await openStream(null, teamHeaders, path);
  assert.equal(noKey.status, 401);
  for (const headers of [{}, { 'x-sync-protocol': '2' }, { 'x-sync-account-id': String(team.id) }] as Array<
    Record<string, string>
  >) {
    const r = await openStream(editor.key, headers, path);
    assert.equal(r.status, 428, JSON.stringify(headers));
    assert.equal(r.json.code, 'account-identity-required');
  }
  const outsider = await openStream(stranger.key, teamHeaders, path);
  assert.equal(outsider.status, 404);
  assert.equal(outsider.json.code, 'not-found');
  const unknown = await openStream(editor.key, teamHeaders, `/_/team/no-such-team-${team.id}/sync/stream`);
  assert.equal(unknown.status, 404);
  const wrongId = await openStream(editor.key, { ...teamHeaders, 'x-sync-account-id': String(editor.person.id) }, path);
  assert.equal(wrongId.status, 409);
  assert.equal(wrongId.json.code, 'account-changed');
  const asViewer = await openStream(viewer.key, teamHeaders, path);
  assert.equal(asViewer.status, 403);
  assert.equal(asViewer.json.code, 'viewer');

  const node = await createNode(await actingAs(kiln.services, owner.person.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `team-${team.username}.html`,
    html: doc('t1'),
  });
  const s = await openStream(editor.key, teamHeaders, path);
  const personal = await openStream(editor.key);
  try {
    assert.equal(s.status, 200);
    await s.comment('connected');
    await personal.comment('connected');
    assert.deepEqual((await s.next()).json, {
      type: 'sync-ready',
      accountId: team.id,
      sync: { enabled: true, reason: null },
    });
    await saveDocument(kiln.services, {
      nodeId: node.id,
      bytes: Buffer.from(doc('t2')),
      by: { kind: 'sync', accountId: editor.person.id, writer: null },
    });
    const f = await s.next();
    assert.equal(f.json.type, 'node-saved');
    assert.equal(f.json.nodeId, node.id);
    assert.equal(f.json.content, doc('t2'));
    assert.equal(personal.unread().length, 0, 'team changes are on the team stream, not the member’s own');
  } finally {
    s.close();
    personal.close();
  }
});

test('closing a stream releases it; the server ends open streams when it stops', async () => {
  const { key } = await personWithKey();
  const hub = kiln.services.hub;
  // Streams the earlier tests closed end on the server a moment later (it notices the closed socket): counted
  // from zero, once they have, so that their ending is not mistaken for these.
  await until(() => hub.stats().streams === 0, { what: 'the earlier tests’ streams to end', timeout: 30_000 });
  const streams = await Promise.all([1, 2, 3].map(() => openStream(key)));
  for (const s of streams) await s.comment('connected');
  assert.equal(hub.stats().streams, 3);
  for (const s of streams) s.close();
  await until(() => hub.stats().streams === 0, { what: 'the closed streams to be released', timeout: 30_000 });

  // A second Kiln with a stream open stops promptly and ends the stream.
  const other = await startKiln();
  const main = other.client();
  const person = await signedIn(other, main);
  const k = await createSyncKey(other.services, person.id);
  const open = await SseClient.open({
    port: Number(new URL(other.url).port),
    host: other.config.rootDomain,
    path: '/_/sync/stream',
    headers: { 'x-api-key': k.key },
  });
  await open.comment('connected');
  await other.stop();
  await open.end();
});
