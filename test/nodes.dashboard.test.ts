// The dashboard page and its answers: what a person sees, browser form posts (302 with msg/msgType),
// AJAX JSON with the node-list fragment, the delete confirmation, body caps.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const HTML = { accept: 'text/html' };
const msgOf = (location: string) => new URL(location, 'http://x').searchParams.get('msg') ?? '';

async function dev(over = {}) {
  const main = kiln.client();
  const me = await signedIn(kiln, main, over);
  return { me, main };
}

test('the dashboard lists the tree with sizes, modified times, visibility and links to each document on its host', async () => {
  const { me, main } = await dev();
  await main.post('/_/dashboard/nodes', { type: 'site', name: 'blog/post one.html', html: 'x'.repeat(2048) });
  await main.post('/_/dashboard/nodes', { type: 'site', name: `home-${me.username}.html`, html: '<html></html>' });
  const res = await main.page('/_/dashboard');
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'] ?? '', /text\/html/);
  const $ = cheerio.load(res.text);
  assert.equal($('header').text().includes(me.username), true);
  const rows = $('#tree tbody tr');
  assert.equal(rows.length, 3);
  // Folders first, their contents indented below them.
  assert.equal($(rows[0]).attr('data-type'), 'folder');
  assert.match($(rows[0]).text(), /blog\/[\s\S]*1 item/);
  const post = $(rows[1]);
  const link = post.find('a[target=_blank]');
  assert.equal(link.text(), 'post one.html');
  assert.equal(link.attr('href'), `http://${me.username}.${kiln.config.rootDomain}/blog/post%20one.html`);
  assert.match(post.text(), /2\.0 KB/);
  assert.match(post.find('time').attr('datetime')!, /^\d{4}-\d\d-\d\dT/);
  assert.match(post.text(), /Public/);
  assert.match($(rows[2]).text(), /13 B/);
  // Create, rename, move and delete are plain forms that work without script.
  assert.equal($('form[action="/_/dashboard/nodes"]').length, 2);
  assert.equal(post.find('form[action$="/rename"] input[name=name]').attr('value'), 'post one.html');
  assert.equal(post.find('form[action$="/move"] select[name=parentId] option').length, 2);
  assert.ok(post.find('form[action$="/delete"][data-confirm]').length);
  // The non-empty folder asks first: a link to a confirmation page.
  assert.match($(rows[0]).find('a[data-delete]').attr('data-confirm')!, /and the 1 item inside it/);
});

test('browser form posts answer 302 back to the dashboard with msg and msgType, which the page shows', async () => {
  const { main } = await dev();
  const ok = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: 'from-form.html', parentId: '0' },
    { form: true, headers: HTML },
  );
  assert.equal(ok.status, 302);
  const loc = new URL(ok.headers.location!, 'http://x');
  assert.equal(loc.pathname, '/_/dashboard');
  assert.equal(loc.searchParams.get('msgType'), 'success');
  assert.match(loc.searchParams.get('msg')!, /Document "from-form\.html" created/);
  const shown = await main.page(ok.headers.location!);
  assert.match(cheerio.load(shown.text)('.msg.success').text(), /from-form\.html/);

  const bad = await main.post('/_/dashboard/nodes', { type: 'site', name: 'nope.txt' }, { form: true, headers: HTML });
  assert.equal(bad.status, 302);
  const badLoc = new URL(bad.headers.location!, 'http://x');
  assert.equal(badLoc.searchParams.get('msgType'), 'error');
  assert.match(badLoc.searchParams.get('msg')!, /must end in \.html/);
  const page = await main.page(bad.headers.location!);
  assert.match(cheerio.load(page.text)('.msg.error').text(), /must end in \.html/);
});

test('AJAX operations answer JSON {msg, msgType, html} where html is the updated node list', async () => {
  const { main } = await dev();
  const created = await main.post(
    '/_/dashboard/nodes',
    { type: 'folder', name: 'ajax-folder' },
    { headers: { 'x-requested-with': 'fetch', accept: 'application/json' } },
  );
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.json).sort(), ['html', 'msg', 'msgType', 'node']);
  const $ = cheerio.load(created.json.html);
  assert.equal($('tbody tr').length, 1);
  assert.equal($('tbody tr').attr('data-node-id'), String(created.json.node.id));
  // The folder choices of the create forms come along.
  assert.match($('#folder-choices').html()!, /ajax-folder\//);
  const listed = await main.get('/_/dashboard/nodes');
  assert.equal(listed.json.html, created.json.html);
  // Errors are JSON too, with the status.
  const dup = await main.post('/_/dashboard/nodes', { type: 'folder', name: 'ajax-folder' });
  assert.equal(dup.status, 409);
  assert.equal(dup.json.msgType, 'error');
  const missingName = await main.post('/_/dashboard/nodes', { type: 'site' });
  assert.equal(missingName.status, 400);
  assert.equal(missingName.json.msg, 'Name is required.');
});

test('deleting a non-empty folder without script: a confirmation page, then a cascade post', async () => {
  const { main } = await dev();
  await main.post('/_/dashboard/nodes', { type: 'site', name: 'crate/a.html' });
  await main.post('/_/dashboard/nodes', { type: 'site', name: 'crate/inner/b.html' });
  const crate = (await main.get('/_/dashboard/nodes')).json.nodes.find((n: { name: string }) => n.name === 'crate');
  const refused = await main.post(`/_/dashboard/nodes/${crate.id}/delete`, {}, { form: true, headers: HTML });
  assert.equal(refused.status, 302);
  assert.match(msgOf(refused.headers.location!), /not empty \(it holds 3 items\)/);
  const confirm = await main.page(`/_/dashboard/nodes/${crate.id}/delete`);
  assert.equal(confirm.status, 200);
  const $ = cheerio.load(confirm.text);
  assert.match($('main').text(), /holds 3 items/);
  assert.equal($('form input[name=cascade]').attr('value'), '1');
  const gone = await main.post(
    `/_/dashboard/nodes/${crate.id}/delete`,
    { cascade: '1' },
    { form: true, headers: HTML },
  );
  assert.equal(gone.status, 302);
  assert.match(msgOf(gone.headers.location!), /Deleted "crate" and 3 items inside it/);
  assert.deepEqual((await main.get('/_/dashboard/nodes')).json.nodes, []);
});

test('bodies over the caps answer 413: JSON over 5 MB, forms over 2 MB (as JSON for AJAX)', async () => {
  const { main } = await dev();
  const big = JSON.stringify({ type: 'site', name: 'huge.html', html: 'x'.repeat(5 * 1024 * 1024 + 10) });
  const json = await main.post('/_/dashboard/nodes', big, { headers: { 'content-type': 'application/json' } });
  assert.equal(json.status, 413);
  assert.equal(json.json.msgType, 'error');
  assert.equal(typeof json.json.msg, 'string');
  const form = await main.post(
    '/_/dashboard/nodes',
    `type=site&name=huge.html&html=${'x'.repeat(2 * 1024 * 1024 + 10)}`,
    {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    },
  );
  assert.equal(form.status, 413);
  assert.equal(form.json.msgType, 'error');
  assert.deepEqual((await main.get('/_/dashboard/nodes')).json.nodes, []);
});

test('the dashboard belongs to the main app: on a document host its GET is sent there', async () => {
  const { me, main } = await dev();
  const res = await main.on(kiln.hostOf(me.username)).page('/_/dashboard');
  assert.equal(res.status, 302);
  assert.equal(res.headers.location, `${kiln.config.baseUrl}/_/dashboard`);
  const post = await main
    .on(kiln.hostOf(me.username))
    .post('/_/dashboard/nodes', { type: 'site', name: 'wrong-host.html' });
  assert.equal(post.status, 404);
});
