// Every change to an account's files is published once on the account's channel, whoever makes it:
// the dashboard (tree use cases) and the sync API alike. node-saved for created documents (inline
// content), folders (parentId) and uploads; node-renamed / node-moved with full old and new paths;
// node-deleted with the full path of every deleted node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { keyHolder, checksum } from './support/sync-client.ts';
import { channels, type KilnEvent } from '../src/events/bus.ts';
import type { Client } from './support/client.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

/** Records the account's events; `take(n)` waits (bounded) until n arrived and returns all that came. */
async function recorder(accountId: number) {
  const got: KilnEvent[] = [];
  const channel = channels.account(accountId);
  const stop = kiln.services.events.subscribe(channel, (e) => got.push(e));
  await kiln.services.events.subscribed(channel);
  let markers = 0;
  return {
    stop,
    async take(n: number): Promise<KilnEvent[]> {
      for (let i = 0; i < 300 && got.length < n; i++) await new Promise((r) => setTimeout(r, 10));
      // To see that no extra event follows: a marker of the test's own, published on the channel now, comes
      // after everything published before it (a channel's events come in order), so all the server sent is in.
      const marker = `test-marker:${++markers}`;
      const isMarker = (e: KilnEvent) => e.type === 'grant-revoked' && e.grants[0] === marker;
      await kiln.services.events.publish(channel, { type: 'grant-revoked', grants: [marker] });
      for (let i = 0; i < 300 && !got.some(isMarker); i++) await new Promise((r) => setTimeout(r, 10));
      const at = got.findIndex(isMarker);
      assert.ok(at >= 0, `the marker event came back: ${JSON.stringify(got)}`);
      return got.splice(0, at + 1).slice(0, at);
    },
  };
}

const strip = (e: KilnEvent) => {
  const { writer: _w, ...rest } = e as KilnEvent & { writer?: unknown };
  return rest;
};

async function dashboard(c: Client, path: string, body: Record<string, unknown>) {
  const r = await c.post(path, body, { headers: { 'x-requested-with': 'fetch' } });
  assert.ok(r.status === 200 || r.status === 201, `${path}: ${r.status} ${r.text}`);
  return r.json;
}

test('dashboard changes reach the account channel: creates, renames, moves and deletes with full paths', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c);
  const rec = await recorder(me.id);

  const folder = (await dashboard(c, '/_/dashboard/nodes', { type: 'folder', name: 'alpha' })).node;
  let ev = await rec.take(1);
  assert.equal(ev.length, 1);
  assert.deepEqual(strip(ev[0]), {
    type: 'node-saved',
    nodeId: folder.id,
    nodeType: 'folder',
    path: 'alpha',
    checksum: null,
    modifiedAt: folder.modifiedAt,
    size: 0,
    parentId: 0,
  });

  const html = '<!doctype html><p>dash</p>';
  const doc = (
    await dashboard(c, '/_/dashboard/nodes', { type: 'site', name: `d-${me.username}.html`, parentId: folder.id, html })
  ).node;
  ev = await rec.take(1);
  assert.equal(ev.length, 1);
  const saved = ev[0];
  assert.ok(saved.type === 'node-saved');
  assert.equal(saved.nodeId, doc.id);
  assert.equal(saved.nodeType, 'site');
  assert.equal(saved.path, `alpha/d-${me.username}.html`);
  assert.equal(saved.checksum, checksum(html));
  assert.equal(saved.content, html);

  // A path creates the missing folders: one event each.
  await dashboard(c, '/_/dashboard/nodes', { type: 'site', name: `beta/gamma/p-${me.username}.html` });
  ev = await rec.take(3);
  assert.deepEqual(
    ev.map((e) => [e.type, (e as { path: string }).path]),
    [
      ['node-saved', 'beta'],
      ['node-saved', 'beta/gamma'],
      ['node-saved', `beta/gamma/p-${me.username}.html`],
    ],
  );

  await dashboard(c, `/_/dashboard/nodes/${folder.id}/rename`, { name: 'omega' });
  ev = await rec.take(1);
  assert.equal(ev.length, 1);
  assert.deepEqual(strip(ev[0]), {
    type: 'node-renamed',
    nodeId: folder.id,
    nodeType: 'folder',
    oldPath: 'alpha',
    newPath: 'omega',
  });

  const beta = (await c.get('/_/dashboard/nodes')).json.nodes.find((n: { name: string }) => n.name === 'beta');
  await dashboard(c, `/_/dashboard/nodes/${folder.id}/move`, { parentId: beta.id });
  ev = await rec.take(1);
  assert.deepEqual(strip(ev[0]), {
    type: 'node-moved',
    nodeId: folder.id,
    nodeType: 'folder',
    oldPath: 'omega',
    newPath: 'beta/omega',
  });

  await dashboard(c, `/_/dashboard/nodes/${doc.id}/move`, { parentId: 0, name: `top-${me.username}.html` });
  ev = await rec.take(1);
  assert.deepEqual(strip(ev[0]), {
    type: 'node-moved',
    nodeId: doc.id,
    nodeType: 'site',
    oldPath: `beta/omega/d-${me.username}.html`,
    newPath: `top-${me.username}.html`,
  });

  // A no-op changes nothing and says nothing.
  await dashboard(c, `/_/dashboard/nodes/${doc.id}/rename`, { name: `top-${me.username}.html` });
  assert.equal((await rec.take(0)).length, 0);

  await dashboard(c, `/_/dashboard/nodes/${beta.id}/delete`, { cascade: '1' });
  ev = await rec.take(4);
  assert.equal(ev.length, 4);
  assert.ok(ev.every((e) => e.type === 'node-deleted'));
  assert.equal((ev[0] as { path: string }).path, 'beta');
  assert.deepEqual(
    ev.map((e) => (e as { path: string }).path).sort(),
    ['beta', 'beta/gamma', `beta/gamma/p-${me.username}.html`, 'beta/omega'].sort(),
  );
  rec.stop();
});

test('sync API changes are published once each, with the key as the writer', async () => {
  const { api, person } = await keyHolder(kiln);
  const rec = await recorder(person.id);
  const up = await api.create({ type: 'upload', name: 'pic.png', parentId: 0, content: Buffer.from([1, 2, 3]) });
  let ev = await rec.take(1);
  assert.equal(ev.length, 1);
  assert.ok(ev[0].type === 'node-saved');
  assert.equal(ev[0].nodeType, 'upload');
  assert.equal(ev[0].path, 'pic.png');
  assert.equal(ev[0].checksum, checksum(Buffer.from([1, 2, 3])));
  assert.match(String(ev[0].writer), /^key:\d+$/);

  await api.upload(up.id, Buffer.from([4]));
  ev = await rec.take(1);
  assert.equal(ev.length, 1);
  assert.ok(ev[0].type === 'node-saved' && ev[0].checksum === checksum(Buffer.from([4])));
  // Unchanged bytes: no event.
  await api.upload(up.id, Buffer.from([4]));
  assert.equal((await rec.take(0)).length, 0);

  const f = await api.create({ type: 'folder', name: 'imgs', parentId: 0 });
  await rec.take(1);
  await api.move(up.id, f.id, 'photo.png');
  ev = await rec.take(1);
  assert.deepEqual(strip(ev[0]), {
    type: 'node-moved',
    nodeId: up.id,
    nodeType: 'upload',
    oldPath: 'pic.png',
    newPath: 'imgs/photo.png',
  });
  await api.rename(f.id, 'images');
  ev = await rec.take(1);
  assert.deepEqual(strip(ev[0]), {
    type: 'node-renamed',
    nodeId: f.id,
    nodeType: 'folder',
    oldPath: 'imgs',
    newPath: 'images',
  });
  await api.delete(f.id, { cascade: true });
  ev = await rec.take(2);
  assert.deepEqual(ev.map(strip), [
    { type: 'node-deleted', nodeId: f.id, nodeType: 'folder', path: 'images' },
    { type: 'node-deleted', nodeId: up.id, nodeType: 'upload', path: 'images/photo.png' },
  ]);
  rec.stop();
});

test('browser uploads reach the account channel too', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c);
  const rec = await recorder(me.id);
  const res = await c.post('/_/upload', { fileName: 'note.txt', fileBody: Buffer.from('hello').toString('base64') });
  assert.equal(res.status, 200, res.text);
  const ev = await rec.take(1);
  rec.stop();
  assert.equal(ev.length, 1);
  assert.ok(ev[0].type === 'node-saved');
  assert.equal(ev[0].nodeType, 'upload');
  assert.equal(ev[0].path, 'note.txt');
  assert.equal(ev[0].checksum, checksum('hello'));
});
