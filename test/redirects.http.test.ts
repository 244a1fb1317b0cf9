// A renamed or moved document keeps its old address for 30 days: the old path (and anything after it,
// and its query) redirects to the new one, for whoever may see the document; a new document of the old
// name takes the address back; the dashboard warns before renaming an app or a shared document.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { movableClock, startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';

const time = movableClock();
let kiln: TestKiln;
before(async () => {
  kiln = await startKiln({ clock: time.clock });
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };

test('old addresses redirect for 30 days; a new document of the old name takes the address back', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.client(kiln.hostOf(me.username));
  const made = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: `old-${me.id}.html`, html: '<p>doc</p>' },
    json,
  );
  const id = made.json.node.id;
  await main.post('/_/dashboard/nodes', { type: 'folder', name: 'archive' }, json);
  assert.equal((await main.post(`/_/dashboard/nodes/${id}/rename`, { name: `new-${me.id}.html` }, json)).status, 200);

  const moved = await host.get(`/old-${me.id}.html`);
  assert.equal(moved.status, 302);
  assert.equal(moved.headers.location, `/new-${me.id}.html`);
  const deep = await host.get(`/old-${me.id}.html/spa/route?x=1`);
  assert.equal(deep.headers.location, `/new-${me.id}.html/spa/route?x=1`);
  assert.equal((await host.get(`/new-${me.id}.html`)).text, '<p>doc</p>');

  // Moved again: both old addresses lead to where it is now.
  const folders = (await main.get('/_/dashboard/nodes', json)).json.nodes;
  const archive = folders.find((n: { name: string }) => n.name === 'archive');
  assert.equal((await main.post(`/_/dashboard/nodes/${id}/move`, { parentId: archive.id }, json)).status, 200);
  assert.equal((await host.get(`/old-${me.id}.html`)).headers.location, `/archive/new-${me.id}.html`);
  assert.equal((await host.get(`/new-${me.id}.html`)).headers.location, `/archive/new-${me.id}.html`);

  // Private now: strangers learn nothing from the old address either.
  const node = (await main.get('/_/dashboard/nodes', json)).json.nodes.find((n: { id: number }) => n.id === id);
  await main.post(`/_/dashboard/nodes/${node.id}/visibility`, { visibility: 'private' }, json);
  assert.equal((await host.get(`/old-${me.id}.html`)).status, 404);
  await main.post(`/_/dashboard/nodes/${node.id}/visibility`, { visibility: 'public' }, json);

  // A new document of the old name answers at its address.
  await main.post('/_/dashboard/nodes', { type: 'site', name: `old-${me.id}.html`, html: '<p>newcomer</p>' }, json);
  assert.equal((await host.get(`/old-${me.id}.html`)).text, '<p>newcomer</p>');

  // After 30 days the redirect is gone (the host's fallback answers as for any unknown path).
  time.advance(31 * 24 * 3600_000);
  assert.equal((await host.get(`/new-${me.id}.html`)).status, 404);
  time.reset();
});

test('the dashboard asks before renaming or moving an app or a shared document', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const made = await main.post('/_/dashboard/nodes', { type: 'site', name: `app-${me.id}.html` }, json);
  const plain = await main.post('/_/dashboard/nodes', { type: 'site', name: `plain-${me.id}.html` }, json);
  await main.post(`/_/dashboard/nodes/${made.json.node.id}/app`, { enableSignups: true }, json);
  const $ = cheerio.load((await main.page('/_/dashboard')).text);
  const row = $(`tr[data-node-id="${made.json.node.id}"]`);
  assert.match(
    row.find('form[action$="/rename"]').attr('data-confirm')!,
    /is an app: its visitors use its current address/,
  );
  assert.match(row.find('form[action$="/move"]').attr('data-confirm')!, /lead to the new one for 30 days/);
  assert.equal($(`tr[data-node-id="${plain.json.node.id}"] form[action$="/rename"]`).attr('data-confirm'), undefined);
});
