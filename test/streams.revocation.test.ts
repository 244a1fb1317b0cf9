// Open streams end when the right that opened them ends (src/events/revocations.ts, src/sse/hub.ts):
// a revoked sync key closes its sync streams, a removed or demoted team member's team stream closes, a
// document turned private closes the saved lanes of those who may not view it, and revoking a browser
// session closes the lanes opened with it. Revocations travel through the event bus: on PostgreSQL +
// Redis a second set of services (another bus connection, as another process would have) revokes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { signedIn, sessionsFor, storeSessions, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import type { Client } from './support/client.ts';
import { createSyncKey, revokeSyncKey } from '../src/sync/keys.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { revokeGrants } from '../src/events/revocations.ts';
import { createServices, closeServices } from '../src/server.ts';
import { SYSTEM } from '../src/access/caller.ts';
import { contextOf } from '../src/context.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const doc = (text: string) => `<!doctype html>\n<html><body><p>${text}</p></body></html>\n`;

async function personWithKey() {
  const main = kiln.client();
  const person = await signedIn(kiln, main, { plan: 'personal' });
  const { key, id: keyId } = await createSyncKey(kiln.services, person.id);
  return { person, key, keyId, main };
}

function syncStream(key: string, headers: Record<string, string> = {}, path = '/_/sync/stream') {
  return SseClient.open({ port, host: kiln.config.rootDomain, path, headers: { 'x-api-key': key, ...headers } });
}

function lane(client: Client | null, host: string, url: string, which: 'live' | 'saved') {
  const cookie = client?.jar.header(host);
  return SseClient.open({
    port,
    host,
    path: `/_/sync?document-url=${encodeURIComponent(url)}&lane=${which}`,
    headers: cookie ? { cookie } : {},
  });
}

async function connected(...streams: SseClient[]) {
  for (const s of streams) {
    assert.equal(s.status, 200, s.body);
    await s.comment('connected');
  }
}

/** Still open: it answers the next keep-alive tick (sent now rather than waited for). */
async function stillOpen(s: SseClient) {
  kiln.services.hub.pingAll();
  await s.comment('ping');
  assert.equal(s.ended, false);
}

test('revoking a key from the dashboard closes its open sync streams; a stream of another key of the account stays open', async () => {
  const { person, key, keyId, main } = await personWithKey();
  const other = await createSyncKey(kiln.services, person.id);
  const a1 = await syncStream(key);
  const a2 = await syncStream(key, { 'x-sync-protocol': '2' });
  const b = await syncStream(other.key);
  try {
    await connected(a1, a2, b);
    const res = await main.post(`/_/dashboard/keys/${keyId}/revoke`, {});
    assert.equal(res.status, 200, res.text);
    await a1.end();
    await a2.end();
    await stillOpen(b);
    // The other key's stream still gets changes.
    await createNode(await actingAs(kiln.services, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name: `after-${person.username}.html`,
      html: doc('x'),
    });
    assert.equal((await b.next({ skipTypes: ['ping'] })).json.type, 'node-saved');
    assert.equal((await syncStream(key)).status, 401, 'reconnecting with the revoked key is refused');
  } finally {
    for (const s of [a1, a2, b]) s.close();
  }
});

test('removing a team member or making them a viewer closes their team stream; their personal stream stays open', async () => {
  const owner = await personWithKey();
  const removed = await personWithKey();
  const demoted = await personWithKey();
  const team = await createTeam(kiln.services, {
    username: `rv${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'personal',
  });
  await setMember(contextOf(kiln.services, SYSTEM), {
    teamId: team.id,
    username: removed.person.username,
    role: 'editor',
  });
  await setMember(contextOf(kiln.services, SYSTEM), {
    teamId: team.id,
    username: demoted.person.username,
    role: 'editor',
  });
  const path = `/_/team/${team.username}/sync/stream`;
  const headers = { 'x-sync-protocol': '2', 'x-sync-account-id': String(team.id) };
  const removedTeam = await syncStream(removed.key, headers, path);
  const removedOwn = await syncStream(removed.key);
  const demotedTeam = await syncStream(demoted.key, headers, path);
  const ownerTeam = await syncStream(owner.key, headers, path);
  try {
    await connected(removedTeam, removedOwn, demotedTeam, ownerTeam);
    const rm = await owner.main.post(`/_/dashboard/teams/${team.id}/members/${removed.person.id}/remove`, {});
    assert.equal(rm.status, 200, rm.text);
    await removedTeam.end();
    await stillOpen(removedOwn);
    await stillOpen(demotedTeam);

    // Another role that may still sync (owner) keeps the stream; viewer ends it.
    const promote = await owner.main.post(`/_/dashboard/teams/${team.id}/members`, {
      username: demoted.person.username,
      role: 'owner',
    });
    assert.equal(promote.status, 200, promote.text);
    await stillOpen(demotedTeam);
    const demote = await owner.main.post(`/_/dashboard/teams/${team.id}/members`, {
      username: demoted.person.username,
      role: 'viewer',
    });
    assert.equal(demote.status, 200, demote.text);
    await demotedTeam.end();
    await stillOpen(ownerTeam);
    assert.equal((await syncStream(demoted.key, headers, path)).status, 403);
  } finally {
    for (const s of [removedTeam, removedOwn, demotedTeam, ownerTeam]) s.close();
  }
});

test('turning a public document private closes anonymous saved-lane streams, not the owner’s lanes', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const name = `vis-${me.username}.html`;
  const created = await main.post('/_/dashboard/nodes', { type: 'site', name, html: doc('v1') });
  assert.equal(created.status, 201, created.text);
  const id: number = created.json.node.id;
  const host = kiln.hostOf(me.username);
  const url = `http://${host}/${name}`;
  const stranger = await lane(null, host, url, 'saved');
  const ownerSaved = await lane(main, host, url, 'saved');
  const ownerLive = await lane(main, host, url, 'live');
  try {
    await connected(stranger, ownerSaved, ownerLive);
    // Making it public again (no change) closes nothing.
    assert.equal((await main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility: 'public' })).status, 200);
    await stillOpen(stranger);
    assert.equal((await main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility: 'private' })).status, 200);
    await stranger.end();
    await stillOpen(ownerSaved);
    await stillOpen(ownerLive);
    // The owner's saved lane still gets saves.
    const save = await main.on(host).post('/_/save', doc('v2'), {
      headers: {
        'content-type': 'text/plain;charset=UTF-8',
        'document-url': url,
        origin: `http://${host}`,
        'sec-fetch-site': 'same-origin',
      },
    });
    assert.equal(save.status, 200, save.text);
    assert.equal((await ownerSaved.next()).json.html, doc('v2'));
    assert.equal((await lane(null, host, url, 'saved')).status, 404, 'reopening anonymously is refused');
  } finally {
    for (const s of [stranger, ownerSaved, ownerLive]) s.close();
  }
});

test('revokeGrants(s, ["session:<id>"]) closes the lanes opened with that session, not those of another session', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const name = `sess-${me.username}.html`;
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc('v1'),
  });
  const host = kiln.hostOf(me.username);
  const url = `http://${host}/${name}`;
  const sessions = await kiln.services.database.db
    .selectFrom('sessions')
    .select('id')
    .where('account_id', '=', me.id)
    .execute();
  const live = await lane(main, host, url, 'live');
  const saved = await lane(main, host, url, 'saved');
  // A second session of the same person (another browser).
  const otherBrowser = kiln.client();
  storeSessions(
    otherBrowser.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, me.id, me.username),
  );
  const otherLive = await lane(otherBrowser, host, url, 'live');
  try {
    await connected(live, saved, otherLive);
    await revokeGrants(
      kiln.services,
      sessions.map((r) => `session:${r.id}`),
    );
    await live.end();
    await saved.end();
    await stillOpen(otherLive);
  } finally {
    for (const s of [live, saved, otherLive]) s.close();
  }
});

test('a revocation published by another process (its own bus connection) closes the stream here', {
  skip: storage !== 'postgres' && 'needs PostgreSQL + Redis',
}, async () => {
  assert.ok(kiln.config.redisUrl, 'the PostgreSQL run uses the Redis bus');
  const { person, key, keyId } = await personWithKey();
  const other = await createSyncKey(kiln.services, person.id);
  const a = await syncStream(key);
  const b = await syncStream(other.key);
  const elsewhere = await createServices(kiln.config);
  try {
    await connected(a, b);
    assert.equal(await revokeSyncKey(elsewhere, person.id, keyId), true);
    await a.end();
    await stillOpen(b);
  } finally {
    a.close();
    b.close();
    await closeServices(elsewhere);
  }
});

test('signing out on the main app closes the lanes its login opened on the document host', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const name = `logout-${me.username}.html`;
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: doc('v1'),
  });
  const host = kiln.hostOf(me.username);
  const url = `http://${host}/${name}`;
  const live = await lane(main, host, url, 'live');
  try {
    await connected(live);
    const out = await main.post('/_/logout', {});
    assert.equal(out.status, 200, out.text);
    await live.end();
  } finally {
    live.close();
  }
});

test('a sync stream ends when its key expires; a stream of a key that lasts stays open', async () => {
  const { person, key, keyId } = await personWithKey();
  const lasting = await createSyncKey(kiln.services, person.id);
  // This key runs out 1.5 s from now.
  const soon = new Date(Date.now() + 1_500).toISOString();
  await kiln.services.database.db.updateTable('sync_keys').set({ expires_at: soon }).where('id', '=', keyId).execute();
  const expiring = await syncStream(key);
  const other = await syncStream(lasting.key);
  try {
    await connected(expiring, other);
    for (let i = 0; i < 60 && !expiring.ended; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(expiring.ended, true, 'the stream of the expired key ended');
    await stillOpen(other);
  } finally {
    expiring.close();
    other.close();
  }
});
