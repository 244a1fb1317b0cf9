// The instance setting "document names": unique across this Kiln (as Hyperclay, the spec's rule and the
// default) or unique per account. Set by an administrator on /_/admin; under per-account names two
// accounts may each have `notes.html` (dashboard, sync API, app copies keep the app's name); going back
// is refused, with the names in the way, while two accounts share one. The New-document form's check
// (GET /_/dashboard/names) answers what creating a name would, writing nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { keyHolder } from './support/sync-client.ts';
import type { Client } from './support/client.ts';
import { renameNode } from '../src/nodes/tree.ts';
import { contextOf } from '../src/context.ts';
import { SYSTEM } from '../src/access/caller.ts';

let kiln: TestKiln;
let admin: Client;
before(async () => {
  kiln = await startKiln();
  admin = kiln.client();
  await signedIn(kiln, admin, { isSuperadmin: true });
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };
const fetchy = { headers: { 'x-requested-with': 'fetch' } };

function setNames(mode: 'instance' | 'account') {
  return admin.post('/_/admin/settings', { signups: 'open', defaultPlan: 'free', documentNames: mode }, json);
}

async function developer() {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  return { main, me };
}

const check = (c: Client, q: Record<string, string>) =>
  c.get(`/_/dashboard/names?${new URLSearchParams({ type: 'site', parentId: '0', ...q })}`, json);

test('by default names are unique across this Kiln: dashboard, check and sync API refuse a name another account has', async () => {
  const a = await developer();
  const b = await developer();
  const name = `default-${a.me.username}.html`;
  assert.equal((await a.main.post('/_/dashboard/nodes', { type: 'site', name }, fetchy)).status, 201);

  const checked = await check(b.main, { name });
  assert.equal(checked.status, 409);
  assert.equal(checked.json.code, 'name-taken-elsewhere');
  assert.match(checked.json.msg, /belongs to another account/);
  const made = await b.main.post('/_/dashboard/nodes', { type: 'site', name }, fetchy);
  assert.equal(made.status, 409);
  assert.equal(made.json.code, 'name-taken-elsewhere');

  const bob = await keyHolder(kiln);
  const r = await bob.api.raw('POST', '/nodes', {
    body: { type: 'site', name, parentId: 0, content: '<html><p>b</p></html>' },
  });
  assert.equal(r.status, 409, r.text);
  assert.match(r.json.msg, /already taken/);
  assert.equal((await check(a.main, { name: `free-${a.me.username}.html` })).status, 200);
});

test('the check answers like a create would and writes nothing: own clash, folders to be made, bad names', async () => {
  const { main, me } = await developer();
  const name = `mine-${me.username}.html`;
  await main.post('/_/dashboard/nodes', { type: 'site', name: `notes/${name}` }, fetchy);
  const own = await check(main, { name });
  assert.equal(own.status, 409);
  assert.equal(own.json.code, 'name-conflict');
  assert.match(own.json.msg, /You already have a document named .* in "notes"/);
  const deep = await check(main, { name: `a/b/fresh-${me.username}.html` });
  assert.equal(deep.status, 200, deep.text);
  assert.equal(deep.json.path, `a/b/fresh-${me.username}.html`);
  const bad = await check(main, { name: 'no extension' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.code, 'invalid-name');
  // The route's schema refuses a bad field before the handler runs, in the same words and shape.
  const long = await check(main, { name: `${'x'.repeat(5000)}.html` });
  assert.equal(long.status, 400);
  assert.equal(long.json.code, 'too-long');
  assert.match(long.json.msg, /^Name must be at most \d+ characters\.$/);
  assert.equal(long.json.msgType, 'error');
  const tree = (await main.get('/_/dashboard/nodes', json)).json.nodes as Array<{ name: string }>;
  assert.deepEqual(tree.map((n) => n.name).sort(), ['notes', name].sort(), 'the check made no folder');
  assert.equal((await kiln.client().get(`/_/dashboard/names?name=x.html`, json)).status, 401);
});

test('per-account names: two accounts each have notes.html; sync API, rename, app copies and serving follow', async () => {
  const switched = await setNames('account');
  assert.equal(switched.status, 200, switched.text);
  assert.equal(switched.json.settings.documentNames, 'account');
  const page = cheerio.load((await admin.page('/_/admin')).text);
  assert.equal(page('input[name=documentNames][value=account]').attr('checked'), 'checked');

  const a = await developer();
  const b = await developer();
  const name = `shared-${a.me.username}.html`;
  for (const [who, text] of [
    [a, 'from a'],
    [b, 'from b'],
  ] as const) {
    assert.equal((await check(who.main, { name })).status, 200);
    const made = await who.main.post(
      '/_/dashboard/nodes',
      { type: 'site', name, html: `<html><p>${text}</p></html>` },
      fetchy,
    );
    assert.equal(made.status, 201, made.text);
  }
  // Each host serves its own.
  assert.match((await kiln.client(kiln.hostOf(a.me.username)).get(`/${name}`)).text, /from a/);
  assert.match((await kiln.client(kiln.hostOf(b.me.username)).get(`/${name}`)).text, /from b/);
  // Still unique across one account's folders.
  const again = await b.main.post('/_/dashboard/nodes', { type: 'site', name: `sub/${name}` }, fetchy);
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'name-conflict');

  // The sync API: a third account creates the name too, and its own name in another folder is reused.
  const carol = await keyHolder(kiln);
  const created = await carol.api.raw('POST', '/nodes', {
    body: { type: 'site', name, parentId: 0, content: '<html><p>carol</p></html>' },
  });
  assert.equal(created.status, 201, created.text);
  const folder = await carol.api.create({ type: 'folder', name: 'f', parentId: 0 });
  const reused = await carol.api.raw('POST', '/nodes', {
    body: { type: 'site', name, parentId: folder.id, content: '<html><p>carol 2</p></html>' },
  });
  assert.equal(reused.status, 200, reused.text);
  assert.equal(reused.json.node.id, created.json.node.id);

  // A rename to a name another account has is fine now.
  const otherName = `other-${a.me.username}.html`;
  assert.equal((await a.main.post('/_/dashboard/nodes', { type: 'site', name: otherName }, fetchy)).status, 201);
  const tmp = await b.main.post('/_/dashboard/nodes', { type: 'site', name: `tmp-${b.me.username}.html` }, fetchy);
  const renamed = await b.main.post(`/_/dashboard/nodes/${tmp.json.node.id}/rename`, { name: otherName }, fetchy);
  assert.equal(renamed.status, 200, renamed.text);

  // An app's visitor copy keeps the app's name.
  const appName = `app-${a.me.username}.html`;
  const app = await a.main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: appName, html: '<html><p>app</p></html>' },
    fetchy,
  );
  await a.main.post(`/_/dashboard/nodes/${app.json.node.id}/app`, { enableSignups: true }, fetchy);
  const visitor = kiln.client(kiln.hostOf(a.me.username));
  const signup = await visitor.post(
    '/_/app/signup',
    { app: appName, email: `v-${a.me.username}@example.com`, password: 'Appuser-pw-9-kiln' },
    fetchy,
  );
  assert.equal(signup.status, 201, signup.text);
  assert.equal(signup.json.instance.name, appName);

  // Back to unique across this Kiln: refused while accounts share names, saying which; nothing changes.
  const refused = await setNames('instance');
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'name-conflict');
  assert.match(refused.json.msg, new RegExp(`${name} \\(`));
  assert.ok(refused.json.names.includes(name.toLowerCase()));
  assert.equal((await admin.get('/_/admin', json)).json.settings.documentNames, 'account');
  assert.equal((await check(a.main, { name: otherName })).status, 409, 'own name');
  // The admin page's form: back to the page, which says why, rather than a bare 409 page.
  const fromForm = await admin.post(
    '/_/admin/settings',
    { signups: 'open', defaultPlan: 'free', documentNames: 'instance' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(fromForm.status, 302, fromForm.text);
  const back = await admin.page(fromForm.headers.location!);
  assert.match(cheerio.load(back.text)('.msg.error').text(), new RegExp(`${name} \\(`));
  assert.equal((await admin.get('/_/admin', json)).json.settings.documentNames, 'account');
});

test('back to unique across this Kiln once the shared names are gone; the rule holds again', async () => {
  // Every name two accounts share is renamed away by its owner (as an administrator would ask them to).
  const rows = await kiln.services.database.db
    .selectFrom('nodes')
    .select(['id', 'owner_id', 'name'])
    .where('type', '=', 'site')
    .orderBy('id')
    .execute();
  const seen = new Set<string>();
  for (const r of rows) {
    const key = r.name.toLowerCase();
    // Kiln itself renames (some owners are app users, whom the access table lets manage nothing; issue #46
    // dropped the use cases' looser "the account's own node" rule).
    if (seen.has(key)) await renameNode(contextOf(kiln.services, SYSTEM), { nodeId: r.id, name: `${r.id}-${r.name}` });
    seen.add(key);
  }
  const back = await setNames('instance');
  assert.equal(back.status, 200, back.text);
  const a = await developer();
  const b = await developer();
  const name = `again-${a.me.username}.html`;
  assert.equal((await a.main.post('/_/dashboard/nodes', { type: 'site', name }, fetchy)).status, 201);
  const made = await b.main.post('/_/dashboard/nodes', { type: 'site', name }, fetchy);
  assert.equal(made.status, 409);
  assert.equal(made.json.code, 'name-taken-elsewhere');
});
