// A stream that resumes (Last-Event-ID) from an id the replay log no longer holds (Kiln restarted on the
// in-memory bus, Redis restarted) is never told it is up to date: the sync stream gets a `resync` frame,
// the saved lane the stored document. A resume the log covers gets exactly what was missed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { SseClient } from './support/sse.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { createNode } from '../src/nodes/tree.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

/** An id this channel could have given out a minute ago, before its log was lost. */
const lostId = () => String((Date.now() - 60_000) * 1000);
const html = (t: string) => `<!DOCTYPE html><html><body><p>${t}</p></body></html>`;

test('the sync stream: a resume the log cannot cover gets one resync frame; a covered one gets the missed events only', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'personal' });
  const { key } = await createSyncKey(kiln.services, me.id);
  const open = (lastEventId?: string) =>
    SseClient.open({
      port,
      host: kiln.config.rootDomain,
      path: '/_/sync/stream',
      headers: { 'x-api-key': key, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });

  const lost = await open(lostId());
  try {
    const frame = await lost.next({ skipTypes: ['ping'] });
    assert.equal(frame.json.type, 'resync');
    assert.ok(Number(frame.id) >= Number(lostId()) - 1_000_000, 'an id at or past the client’s own');
  } finally {
    lost.close();
  }

  // A covered resume: the stream sees one event, reconnects from it, and misses nothing and no resync.
  const live = await open();
  const node = await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: `r-${me.username}.html`,
    html: html('one'),
  });
  const first = await live.next({ skipTypes: ['ping'] });
  live.close();
  assert.equal(first.json.nodeId, node.id);
  const doc = main.on(kiln.hostOf(me.username));
  const saved = await doc.post('/_/save', html('two'), {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': `http://${kiln.hostOf(me.username)}/${node.name}`,
    },
  });
  assert.equal(saved.status, 200, saved.text);
  const resumed = await open(first.id!);
  try {
    const missed = await resumed.next({ skipTypes: ['ping'] });
    assert.equal(missed.json.type, 'node-saved');
    assert.equal(missed.json.content, html('two'));
  } finally {
    resumed.close();
  }
});

test('the saved lane: a resume the log cannot cover gets the stored document', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const name = `lane-${me.username}.html`;
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name,
    html: html('stored'),
  });
  const host = kiln.hostOf(me.username);
  const lane = await SseClient.open({
    port,
    host,
    path: `/_/sync?document-url=${encodeURIComponent(`http://${host}/${name}`)}&lane=saved`,
    headers: { 'last-event-id': lostId() },
  });
  try {
    const frame = await lane.next();
    assert.equal(frame.json.html, html('stored'));
  } finally {
    lane.close();
  }
});
