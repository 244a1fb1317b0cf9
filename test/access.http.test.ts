// Access through HTTP: private documents, the dashboard for strangers, app users and other people's nodes,
// cross-origin writes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

async function dev(over = {}) {
  const main = kiln.client();
  const me = await signedIn(kiln, main, over);
  return { me, main, host: main.on(kiln.hostOf(me.username)) };
}

test('a private document answers 404 to strangers and visitors (like a missing one), 200 to its owner', async () => {
  const owner = await dev();
  const res = await owner.main.post('/_/dashboard/nodes', {
    type: 'site',
    name: 'secret.html',
    html: '<html>secret</html>',
  });
  const id = res.json.node.id;
  const vis = await owner.main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility: 'private' });
  assert.equal(vis.status, 200);
  assert.match(vis.json.msg, /now private/);
  assert.match(vis.json.html, />Private</);

  const hostName = kiln.hostOf(owner.me.username);
  const visitor = kiln.client(hostName);
  const stranger = await dev();
  const missing = await visitor.get('/never-existed.html');
  for (const c of [visitor, stranger.main.on(hostName)]) {
    const r = await c.get('/secret.html');
    assert.equal(r.status, 404);
    assert.doesNotMatch(r.text, /secret<\/html>/);
    assert.deepEqual(r.json, missing.json, 'a private document looks exactly like a missing one');
    assert.equal((await c.request('HEAD', '/secret.html')).status, 404);
  }
  const mine = await owner.host.get('/secret.html');
  assert.equal(mine.status, 200);
  assert.equal(mine.text, '<html>secret</html>');
  assert.equal(mine.headers['cache-control'], 'private, no-cache');
  // A superadmin's session is the main app's and their own host's: on this host they are a visitor.
  const admin = await dev({ isSuperadmin: true });
  assert.equal((await admin.main.on(hostName).get('/secret.html')).status, 404);
  // Public again: everyone sees it.
  await owner.main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility: 'public' });
  assert.equal((await visitor.get('/secret.html')).status, 200);
  // Folders have no visibility of their own.
  const folder = await owner.main.post('/_/dashboard/nodes', { type: 'folder', name: 'box' });
  const fv = await owner.main.post(`/_/dashboard/nodes/${folder.json.node.id}/visibility`, { visibility: 'private' });
  assert.equal(fv.status, 400);
  const bad = await owner.main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility: 'hidden' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.msg, 'Visibility must be one of public, private.');
});

test('a private root document is not shown as the fallback to strangers either', async () => {
  const owner = await dev();
  const res = await owner.main.post('/_/dashboard/nodes', {
    type: 'site',
    name: 'index.html',
    html: '<html>home</html>',
  });
  assert.equal(res.status, 201, res.text);
  await owner.main.post(`/_/dashboard/nodes/${res.json.node.id}/visibility`, { visibility: 'private' });
  const visitor = kiln.client(kiln.hostOf(owner.me.username));
  assert.equal((await visitor.get('/')).status, 404);
  assert.equal((await visitor.get('/some/route')).status, 404);
  assert.equal((await owner.host.get('/some/route')).text, '<html>home</html>');
});

test('no_auth on the dashboard: browsers are sent to the login page, AJAX gets 401 JSON', async () => {
  const anon = kiln.client();
  const page = await anon.page('/_/dashboard');
  assert.equal(page.status, 302);
  const loc = new URL(page.headers.location!, 'http://x');
  assert.equal(loc.pathname, '/_/login');
  assert.equal(loc.searchParams.get('return'), '/_/dashboard');
  assert.equal(loc.searchParams.get('msgType'), 'error');
  for (const res of [
    await anon.get('/_/dashboard/nodes'),
    await anon.post('/_/dashboard/nodes', { type: 'site', name: 'x.html' }),
  ]) {
    assert.equal(res.status, 401);
    assert.equal(res.json.msgType, 'error');
    assert.equal(typeof res.json.msg, 'string');
  }
  const form = await anon.post(
    '/_/dashboard/nodes',
    { type: 'site', name: 'x.html' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(form.status, 302);
  assert.match(form.headers.location!, /^\/_\/login\?/);
});

test('app users have a dashboard but may not create or change documents there (403)', async () => {
  const user = await dev({ accountType: 'app_user' });
  assert.equal((await user.main.page('/_/dashboard')).status, 200);
  const res = await user.main.post('/_/dashboard/nodes', { type: 'site', name: 'appuser.html' });
  assert.equal(res.status, 403);
  assert.equal(res.json.msgType, 'error');
});

test("another person's node: rename, move, delete and visibility are refused (400 not-owner) and change nothing", async () => {
  const owner = await dev();
  const other = await dev();
  const res = await owner.main.post('/_/dashboard/nodes', { type: 'site', name: 'mine-only.html' });
  const id = res.json.node.id;
  for (const [op, body] of [
    ['rename', { name: 'stolen.html' }],
    ['move', { parentId: 0 }],
    ['delete', { cascade: true }],
    ['visibility', { visibility: 'private' }],
  ] as const) {
    const r = await other.main.post(`/_/dashboard/nodes/${id}/${op}`, body);
    assert.equal(r.status, 400, op);
    assert.equal(r.json.code, 'not-owner', op);
  }
  assert.equal((await kiln.client(kiln.hostOf(owner.me.username)).get('/mine-only.html')).status, 200);
  const nodes = (await owner.main.get('/_/dashboard/nodes')).json.nodes;
  assert.deepEqual(
    nodes.map((n: { name: string; visibility: string }) => [n.name, n.visibility]),
    [['mine-only.html', 'public']],
  );
  // Unknown ids are 404.
  assert.equal((await other.main.post('/_/dashboard/nodes/99999999/rename', { name: 'x.html' })).status, 404);
  assert.equal((await other.main.post('/_/dashboard/nodes/abc/rename', { name: 'x.html' })).status, 404);
});

test('cross-origin writes to the dashboard are refused (a document on another host cannot drive it)', async () => {
  const owner = await dev();
  const attempts: Array<Record<string, string>> = [
    { origin: `http://${kiln.hostOf('evil')}` },
    { 'sec-fetch-site': 'same-site' },
  ];
  for (const headers of attempts) {
    const res = await owner.main.post('/_/dashboard/nodes', { type: 'site', name: 'csrf.html' }, { headers });
    assert.equal(res.status, 403);
    assert.equal(res.json.code, 'cross-origin');
  }
  const same = await owner.main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: 'csrf.html' },
    { headers: { origin: `http://${kiln.config.rootDomain}` } },
  );
  assert.equal(same.status, 201);
});
