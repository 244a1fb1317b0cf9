// Multi-tenant apps over HTTP: the owner turns a document into an app from the dashboard; visitors
// sign up on the app's host and become app users with their own instance (an independent copy named
// `<app>-1.html`, `<app>-2.html` …); an app user saves its instance only once its email is confirmed
// (through the mailed link) and never opens the code editor; password reset by mail; duplicate email 409;
// concurrent signups get distinct names.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, newPerson, actingAs } from './support/people.ts';
import type { Client } from './support/client.ts';
import type { OutboxMailer } from '../src/mail/mailer.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createInstance, instanceName } from '../src/apps/instances.ts';
import { createTeam } from '../src/teams/teams.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const APP_V1 =
  '<!doctype html>\n<html><head><title>Todo</title></head><body><ul id="items"><li>from the app</li></ul></body></html>\n';
const APP_V2 =
  '<!doctype html>\n<html><head><title>Todo 2</title></head><body><ul id="items"><li>the app, edited</li></ul></body></html>\n';

const outbox = () => kiln.services.mailer as OutboxMailer;
let seq = 0;
const email = (tag: string) => `${tag}${++seq}.${process.pid}@example.com`;
const PASSWORD = 'Appuser-pw-9-kiln';

/** A developer with a document turned into an app through the dashboard (AJAX). */
async function ownerWithApp(name: string, html = APP_V1) {
  const main = kiln.client();
  const owner = await signedIn(kiln, main);
  const created = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name, html },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(created.status, 201, created.text);
  const id = created.json.node.id as number;
  const on = await main.post(
    `/_/dashboard/nodes/${id}/app`,
    { enableSignups: true },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(on.status, 200, on.text);
  assert.equal(on.json.node.enableSignups, true);
  const host = kiln.hostOf(owner.username);
  assert.ok(on.json.msg.includes(`${host}/_/app/signup?app=${name}`), on.json.msg);
  return { owner, main, id, host, ownerDoc: main.on(host), url: `http://${host}/${name}` };
}

/** A fresh visitor (own cookie jar) signing up on the app's host by AJAX. */
async function signUp(appHost: string, app: string, fields: Record<string, string> = {}) {
  const visitor = kiln.client(appHost);
  const res = await visitor.post(
    '/_/app/signup',
    { app, email: email('v'), password: PASSWORD, ...fields },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  return { visitor, res };
}

/** Follows a sign-in handoff (`signInUrl`, or a browser's redirect) to the app user's own host, as a
 *  browser would: returns a client for that host holding the new host session. */
async function follow(visitor: Client, signInUrl: string): Promise<Client> {
  const u = new URL(signInUrl);
  const mine = visitor.on(u.host);
  const res = await mine.page(u.pathname + u.search);
  assert.equal(res.status, 302, res.text);
  return mine;
}

function save(c: Client, url: string, body: string) {
  return c.post('/_/save', body, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': url,
      origin: new URL(url).origin,
      'sec-fetch-site': 'same-origin',
    },
  });
}

/** The first link in the newest mail to `to` whose link contains `part`; waits (bounded) for mail
 *  sent after the answer (password reset mails go out in the background). */
async function linkFor(to: string, part: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mails = (await outbox().messages()).filter((m) => m.to === to && m.text.includes(part));
    if (mails.length) return /https?:\/\/\S+/.exec(mails[mails.length - 1].text)![0];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no mail to ${to} with ${part}`);
}

const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

test('instance names: the app keeps <app>.html, instances take -1, -2 … skipping names taken anywhere', async () => {
  assert.equal(instanceName('todo.html', 0), 'todo.html');
  assert.equal(instanceName('todo.html', 1), 'todo-1.html');
  assert.equal(instanceName('Notes.htmlclay', 12), 'Notes-12.htmlclay');
  assert.equal(instanceName(`${'a'.repeat(250)}.html`, 3).length, 255);

  const { host, owner } = await ownerWithApp('todo.html');
  const first = await signUp(host, 'todo.html');
  assert.equal(first.res.status, 201, first.res.text);
  assert.equal(first.res.json.instance.name, 'todo-1.html');
  const second = await signUp(host, 'todo.html');
  assert.equal(second.res.json.instance.name, 'todo-2.html');
  // Another account's document already holds the next name: it is skipped.
  const other = await createPerson(kiln.services, newPerson());
  await createNode(await actingAs(kiln.services, other.id), {
    ownerId: other.id,
    parentId: 0,
    type: 'site',
    name: 'todo-3.html',
  });
  const third = await signUp(host, 'todo.html');
  assert.equal(third.res.json.instance.name, 'todo-4.html');

  // The instance is the app user's own document, on the app user's host, with the app's HTML.
  const { username, instance } = first.res.json;
  assert.equal(instance.url, `http://${kiln.hostOf(username)}/todo-1.html`);
  assert.equal(instance.sourceNodeId, first.res.json.instance.sourceNodeId);
  const served = await first.visitor.on(kiln.hostOf(username)).get('/todo-1.html');
  assert.equal(served.status, 200);
  assert.equal(served.text, APP_V1);
  const row = await kiln.services.database.db
    .selectFrom('nodes')
    .innerJoin('people', 'people.account_id', 'nodes.owner_id')
    .select([
      'nodes.type',
      'nodes.source_node_id',
      'nodes.enable_signups',
      'people.account_type',
      'people.signup_app_id',
      'people.email_confirmed',
    ])
    .where('nodes.id', '=', instance.id)
    .executeTakeFirstOrThrow();
  const app = await kiln.services.database.db
    .selectFrom('nodes')
    .select('id')
    .where('name_key', '=', 'todo.html')
    .executeTakeFirstOrThrow();
  assert.deepEqual(row, {
    type: 'site',
    source_node_id: app.id,
    enable_signups: 0,
    account_type: 'app_user',
    signup_app_id: app.id,
    email_confirmed: 0,
  });
  // The first version of the copy is recorded as an instance copy.
  const v = await kiln.services.database.db
    .selectFrom('versions')
    .select(['backup_number', 'saved_by_kind'])
    .where('node_id', '=', instance.id)
    .execute();
  assert.deepEqual(v, [{ backup_number: 1, saved_by_kind: 'instance' }]);
  // The app's owner is untouched by all of this.
  assert.notEqual(username, owner.username);
});

test('an index.html app: its first instance is the app user’s own index.html (index names are per account)', async () => {
  const { host } = await ownerWithApp('index.html');
  const a = await signUp(host, '/index.html');
  assert.equal(a.res.status, 201, a.res.text);
  assert.equal(a.res.json.instance.name, 'index.html');
  const home = await a.visitor.on(kiln.hostOf(a.res.json.username)).get('/');
  assert.equal(home.text, APP_V1);
});

test('editing the app changes no existing instance; a later signup copies the app as it is then', async () => {
  const { host, ownerDoc, url } = await ownerWithApp('edit-app.html');
  const before = await signUp(host, 'edit-app.html');
  const saved = await save(ownerDoc, url, APP_V2);
  assert.equal(saved.status, 200, saved.text);
  assert.equal((await ownerDoc.get('/edit-app.html')).text, APP_V2);
  const instanceHost = kiln.hostOf(before.res.json.username);
  assert.equal((await kiln.client(instanceHost).get(`/${before.res.json.instance.name}`)).text, APP_V1);
  const later = await signUp(host, 'edit-app.html');
  assert.equal(
    (await kiln.client(kiln.hostOf(later.res.json.username)).get(`/${later.res.json.instance.name}`)).text,
    APP_V2,
  );
});

test('an app user saves its instance only after confirming its email, and never opens the code editor', async () => {
  const { host, ownerDoc } = await ownerWithApp('confirm-app.html');
  const addr = email('c');
  const visitor = kiln.client(host);
  const res = await visitor.post(
    '/_/app/signup',
    { app: 'confirm-app.html', email: addr, password: PASSWORD },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(res.status, 201, res.text);
  const mine = await follow(visitor, res.json.signInUrl);
  assert.equal(
    new URL(res.json.signInUrl).host,
    kiln.hostOf(res.json.username),
    'the session is for the app user’s own host',
  );
  const url = res.json.instance.url as string;

  // Signed in right away on their own host (through the handoff) but not confirmed yet.
  const page = await mine.get(`/${res.json.instance.name}`);
  assert.equal(page.status, 200);
  assert.equal(visitor.jar.get('isAdminOfCurrentResource', kiln.hostOf(res.json.username)), undefined);
  const early = await save(mine, url, '<html><body>too early</body></html>');
  assert.equal(early.status, 403, early.text);
  assert.equal(early.json.code, 'email-unconfirmed');

  const editor = await mine.get(`/_/edit?path=${res.json.instance.name}`);
  assert.equal(editor.status, 403);

  // The mailed link is on the app's host; opening it confirms.
  const link = await linkFor(addr, '/_/app/confirm/');
  assert.equal(new URL(link).host, host);
  const confirmed = await kiln.client(host).page(pathOf(link));
  assert.equal(confirmed.status, 200, confirmed.text);
  assert.match(confirmed.text, /Email confirmed/);
  assert.ok(confirmed.text.includes(`href="${url}"`), 'links to the instance');
  // Opening it a second time (a mail scanner came first) still says confirmed.
  const again = await kiln.client(host).get(pathOf(link));
  assert.equal(again.status, 200, again.text);
  const person = await kiln.services.database.db
    .selectFrom('people')
    .select('email_confirmed')
    .where('email', '=', addr)
    .executeTakeFirstOrThrow();
  assert.equal(person.email_confirmed, 1);

  const ok = await save(mine, url, '<html><body>my own list</body></html>');
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await mine.get(`/${res.json.instance.name}`)).text, '<html><body>my own list</body></html>');
  assert.equal((await mine.get(`/_/edit?path=${res.json.instance.name}`)).status, 403, 'still no code editor');
  // The app and other people's documents stay out of reach.
  const appSave = await save(visitor, `http://${host}/confirm-app.html`, '<html><body>defaced</body></html>');
  assert.ok(appSave.status >= 400, appSave.text);
  assert.equal((await ownerDoc.get('/confirm-app.html')).text, APP_V1);
  // An invalid link is refused with a page, not a confirmation.
  const bad = await kiln.client(host).page(`/_/app/confirm/${'x'.repeat(43)}`);
  assert.equal(bad.status, 400);
});

test('a signed-in app user may ask for a new confirmation link', async () => {
  const { host } = await ownerWithApp('resend-app.html');
  const addr = email('r');
  const visitor = kiln.client(host);
  const res = await visitor.post(
    '/_/app/signup',
    { app: 'resend-app.html', email: addr, password: PASSWORD },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(res.status, 201);
  const first = await linkFor(addr, '/_/app/confirm/');
  // Asked on their own host, where they are signed in; the link still points at the app's host.
  const mine = await follow(visitor, res.json.signInUrl);
  const resent = await mine.post('/_/app/confirm', {}, { headers: { 'x-requested-with': 'fetch' } });
  assert.equal(resent.status, 200, resent.text);
  const second = await linkFor(addr, '/_/app/confirm/');
  assert.notEqual(first, second);
  assert.equal((await kiln.client(host).get(pathOf(second))).status, 200);
});

test('password reset: same answer for known and unknown emails; the mailed link works once and ends old sessions', async () => {
  const { host } = await ownerWithApp('reset-app.html');
  const addr = email('p');
  const visitor = kiln.client(host);
  const res = await visitor.post(
    '/_/app/signup',
    { app: 'reset-app.html', email: addr, password: PASSWORD },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(res.status, 201);
  const username = res.json.username as string;
  const mine = await follow(visitor, res.json.signInUrl);

  const ask = (who: string) =>
    kiln
      .client(host)
      .post('/_/app/reset', { app: 'reset-app.html', email: who }, { headers: { 'x-requested-with': 'fetch' } });
  const known = await ask(addr);
  const unknown = await ask(`nobody${seq}@example.com`);
  assert.equal(known.status, 200);
  assert.equal(unknown.status, known.status);
  assert.deepEqual(unknown.json, known.json);
  assert.equal((await ask('not an email')).status, 400);

  const link = await linkFor(addr, '/_/app/reset/');
  assert.equal(new URL(link).host, host);
  const form = await kiln.client(host).page(pathOf(link));
  assert.equal(form.status, 200);
  assert.match(form.text, /Choose a new password/);

  const stranger = kiln.client(host);
  const weak = await stranger.post(
    new URL(link).pathname,
    { password: 'password' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(weak.status, 400, 'a common password is refused and the link stays usable');
  const NEW = 'Brand-new-pw-77-kiln';
  const done = await stranger.post(
    new URL(link).pathname + new URL(link).search,
    { password: NEW },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(done.status, 200, done.text);
  assert.equal(done.json.url, res.json.instance.url, 'sent to the instance');
  assert.equal(
    (
      await stranger.post(
        new URL(link).pathname,
        { password: 'Another-pw-88-kiln' },
        { headers: { 'x-requested-with': 'fetch' } },
      )
    ).status,
    400,
    'single use',
  );
  assert.equal((await kiln.client(host).get(new URL(link).pathname)).status, 400, 'the form is gone too');

  // The old session ended; the old password no longer works; the new one does, and the reset confirmed the email.
  assert.equal((await save(mine, res.json.instance.url, '<html><body>x</body></html>')).status, 401);
  const login = (password: string) =>
    kiln
      .client(host)
      .post(
        '/_/app/login',
        { app: 'reset-app.html', email: addr, password },
        { headers: { 'x-requested-with': 'fetch' } },
      );
  assert.equal((await login(PASSWORD)).status, 401);
  const fresh = kiln.client(host);
  const signedInAgain = await fresh.post(
    '/_/app/login',
    { app: 'reset-app.html', email: username, password: NEW },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(signedInAgain.status, 200, signedInAgain.text);
  assert.equal(signedInAgain.json.url, res.json.instance.url);
  const saved = await save(
    await follow(fresh, signedInAgain.json.signInUrl),
    res.json.instance.url,
    '<html><body>after reset</body></html>',
  );
  assert.equal(saved.status, 200, saved.text);
});

test('signup refusals: duplicate email 409, taken or invalid username, missing fields, apps only, main host 404', async () => {
  const { host, id, main } = await ownerWithApp('refuse-app.html');
  const addr = email('d');
  const first = await signUp(host, 'refuse-app.html', { email: addr, username: `chosen${process.pid}` });
  assert.equal(first.res.status, 201, first.res.text);
  assert.equal(first.res.json.username, `chosen${process.pid}`);
  const dup = await signUp(host, 'refuse-app.html', { email: addr.toUpperCase() });
  assert.equal(dup.res.status, 409);
  assert.equal(dup.res.json.code, 'email-taken');
  const takenName = await signUp(host, 'refuse-app.html', { username: `chosen${process.pid}` });
  assert.equal(takenName.res.status, 409);
  assert.equal(takenName.res.json.code, 'username-taken');
  assert.equal(
    (await signUp(host, 'refuse-app.html', { username: 'admin' })).res.status,
    400,
    'reserved: it would name a host',
  );
  assert.equal((await signUp(host, 'refuse-app.html', { username: 'Bad_Name' })).res.status, 400);
  assert.equal((await signUp(host, 'refuse-app.html', { password: 'short' })).res.status, 400);
  assert.equal((await signUp(host, 'refuse-app.html', { email: '' })).res.status, 400);
  // The app user count did not move with the refusals.
  const n = await kiln.services.database.db.selectFrom('nodes').select('id').where('source_node_id', '=', id).execute();
  assert.equal(n.length, 1);

  // A document that is not an app, a missing one, the main host: 404. Signups off: 404, copies stay.
  const plain = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: 'plain-doc.html' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(plain.status, 201);
  assert.equal((await signUp(host, 'plain-doc.html')).res.status, 404);
  assert.equal((await signUp(host, 'nope.html')).res.status, 404);
  assert.equal(
    (await kiln.client().post('/_/app/signup', { app: 'refuse-app.html', email: email('m'), password: PASSWORD }))
      .status,
    404,
  );
  const off = await main.post(
    `/_/dashboard/nodes/${id}/app`,
    { enableSignups: false },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(off.status, 200);
  assert.equal(off.json.node.enableSignups, false);
  assert.equal((await signUp(host, 'refuse-app.html')).res.status, 404);
  assert.equal((await kiln.client(host).page('/_/app/signup?app=refuse-app.html')).status, 404);
  assert.equal(
    (await kiln.client(kiln.hostOf(first.res.json.username)).get(`/${first.res.json.instance.name}`)).status,
    200,
  );
});

test('a private app takes no signups from strangers (it answers like a missing one)', async () => {
  const { host, id, main } = await ownerWithApp('private-app.html');
  const vis = await main.post(
    `/_/dashboard/nodes/${id}/visibility`,
    { visibility: 'private' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(vis.status, 200);
  assert.equal((await signUp(host, 'private-app.html')).res.status, 404);
});

test('only the owner turns a document into an app; app users and strangers cannot', async () => {
  const { id, host } = await ownerWithApp('owned-app.html');
  const otherDev = kiln.client();
  await signedIn(kiln, otherDev);
  const r = await otherDev.post(
    `/_/dashboard/nodes/${id}/app`,
    { enableSignups: false },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(r.status, 400);
  assert.equal(r.json.code, 'not-owner');
  const appUserEmail = email('o');
  const appUser = await signUp(host, 'owned-app.html', { email: appUserEmail });
  // An app user signed in on the main app.
  const main = kiln.client();
  assert.equal((await main.post('/_/login', { email: appUserEmail, password: PASSWORD })).status, 200);
  assert.equal(
    (
      await main.post(
        `/_/dashboard/nodes/${id}/app`,
        { enableSignups: false },
        { headers: { 'x-requested-with': 'fetch' } },
      )
    ).status,
    403,
  );
  // Nor can an app user make its instance an app.
  assert.equal(
    (
      await main.post(
        `/_/dashboard/nodes/${appUser.res.json.instance.id}/app`,
        { enableSignups: true },
        { headers: { 'x-requested-with': 'fetch' } },
      )
    ).status,
    403,
  );
  assert.equal(
    (
      await kiln
        .client()
        .post(`/_/dashboard/nodes/${id}/app`, { enableSignups: false }, { headers: { 'x-requested-with': 'fetch' } })
    ).status,
    401,
  );
  // The toggle answers with the refreshed node list, like every dashboard operation.
  const ownerMain = kiln.client();
  const dev = await signedIn(kiln, ownerMain);
  const doc = await ownerMain.post(
    '/_/dashboard/nodes',
    { type: 'site', name: 'toggle-me.html' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  const on = await ownerMain.post(
    `/_/dashboard/nodes/${doc.json.node.id}/app`,
    { enableSignups: '1' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(on.status, 200);
  assert.match(on.json.html, /Stop signups/);
  assert.ok(on.json.html.includes(`/_/app/signup?app=toggle-me.html`));
  assert.ok(on.json.msg.includes(`http://${kiln.hostOf(dev.username)}/_/app/signup?app=toggle-me.html`));
  // A browser form post comes back to the dashboard.
  const form = await ownerMain.post(
    `/_/dashboard/nodes/${doc.json.node.id}/app`,
    { enableSignups: '0' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(form.status, 302);
  assert.match(form.headers.location!, /^\/_\/dashboard\?msg=/);
  const page = await ownerMain.page('/_/dashboard');
  assert.match(page.text, /Make it an app/);
});

test('browser forms: signup redirects to the instance; a refusal comes back to the form with the message', async () => {
  const { host } = await ownerWithApp('forms-app.html');
  const visitor = kiln.client(host);
  const form = await visitor.page('/_/app/signup?app=forms-app.html');
  assert.equal(form.status, 200);
  assert.match(form.text, /name="app" value="forms-app.html"/);
  const posted = await visitor.post(
    '/_/app/signup',
    { app: 'forms-app.html', email: email('f'), password: PASSWORD },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(posted.status, 302, posted.text);
  // Through the session handoff on the app user's own host, to the instance.
  const location = new URL(posted.headers.location!);
  assert.match(location.host, new RegExp(`^[a-z0-9-]+\\.${kiln.config.rootDomain.replace(/[.]/g, '\\.')}$`));
  assert.equal(location.pathname, '/_/session');
  assert.equal(location.searchParams.get('return'), '/forms-app-1.html');
  const mine = await follow(visitor, location.href);
  const instance = await mine.page('/forms-app-1.html');
  assert.equal(instance.status, 200);
  assert.equal(instance.text, APP_V1);

  const refused = await kiln
    .client(host)
    .post(
      '/_/app/signup',
      { app: 'forms-app.html', email: 'bad', password: PASSWORD },
      { form: true, headers: { accept: 'text/html' } },
    );
  assert.equal(refused.status, 302);
  const back = new URL(refused.headers.location!, 'http://x');
  assert.equal(back.pathname, '/_/app/signup');
  assert.equal(back.searchParams.get('app'), 'forms-app.html');
  assert.equal(back.searchParams.get('msgType'), 'error');

  // Sign in by form: to the caller's instance.
  const login = await kiln.client(host).page('/_/app/login?app=forms-app.html');
  assert.equal(login.status, 200);
  assert.match(login.text, /Forgot your password/);
  const reset = await kiln.client(host).page('/_/app/reset?app=forms-app.html');
  assert.equal(reset.status, 200);
  // Cross-site form posts are refused.
  const cross = await kiln
    .client(host)
    .post(
      '/_/app/signup',
      { app: 'forms-app.html', email: email('x'), password: PASSWORD },
      { form: true, headers: { origin: 'http://evil.example' } },
    );
  assert.equal(cross.status, 403);
});

test('concurrent signups on one app get distinct instance names', async () => {
  const { host } = await ownerWithApp('rush.html');
  const N = 8;
  const results = await Promise.all(Array.from({ length: N }, () => signUp(host, 'rush.html')));
  for (const r of results) assert.equal(r.res.status, 201, r.res.text);
  const names = results
    .map((r) => r.res.json.instance.name as string)
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  assert.deepEqual(
    names,
    Array.from({ length: N }, (_, i) => `rush-${i + 1}.html`),
  );
  // Each is served, on its own owner's host.
  for (const r of results)
    assert.equal(
      (await kiln.client(kiln.hostOf(r.res.json.username)).get(`/${r.res.json.instance.name}`)).text,
      APP_V1,
    );
});

test('concurrent instance copies (no password hashing between them) still get distinct names', async () => {
  const { id } = await ownerWithApp('burst.html');
  const people = await Promise.all(
    Array.from({ length: 10 }, () =>
      createPerson(kiln.services, newPerson({ accountType: 'app_user', emailConfirmed: false })),
    ),
  );
  const made = await Promise.all(people.map((p) => createInstance(kiln.services, p.id, id)));
  assert.deepEqual(
    made.map((n) => n.name).sort((a, b) => a.localeCompare(b, 'en', { numeric: true })),
    Array.from({ length: 10 }, (_, i) => `burst-${i + 1}.html`),
  );
  // A second sign-in of the same person reuses its instance instead of making another.
  const again = await Promise.all([
    createInstance(kiln.services, people[0].id, id, { reuseExisting: true }),
    createInstance(kiln.services, people[0].id, id, { reuseExisting: true }),
  ]);
  assert.deepEqual(
    again.map((n) => n.id),
    [made[0].id, made[0].id],
  );
});

test('sign-ups and reset requests on an app count against the strict limiter: the sixth in an hour from one address is 429', async () => {
  const { host } = await ownerWithApp('limited-app.html');
  const visitor = kiln.client(host);
  const ajax = { headers: { 'x-requested-with': 'fetch' } };
  for (let i = 0; i < 5; i++)
    assert.equal(
      (await visitor.post('/_/app/signup', { app: 'limited-app.html', email: 'nope', password: PASSWORD }, ajax))
        .status,
      400,
    );
  const sixth = await visitor.post(
    '/_/app/signup',
    { app: 'limited-app.html', email: email('l'), password: PASSWORD },
    ajax,
  );
  assert.equal(sixth.status, 429);
  assert.ok(Number(sixth.headers['retry-after']) > 0);
  for (let i = 0; i < 5; i++)
    assert.equal(
      (await visitor.post('/_/app/reset', { app: 'limited-app.html', email: `x${i}@example.com` }, ajax)).status,
      200,
    );
  assert.equal(
    (await visitor.post('/_/app/reset', { app: 'limited-app.html', email: 'y@example.com' }, ajax)).status,
    429,
  );
  // Another address is not held back.
  assert.equal((await signUp(host, 'limited-app.html')).res.status, 201);
});

test('app password resets mail only users of that app, with links on the app host; developers and other apps get the same answer and no mail', async () => {
  const { host, owner, main } = await ownerWithApp('only-mine.html');
  const other = await ownerWithApp('elsewhere.html');
  const theirs = await signUp(other.host, 'elsewhere.html');
  assert.equal(theirs.res.status, 201, theirs.res.text);
  const mine = await signUp(host, 'only-mine.html');
  assert.equal(mine.res.status, 201, mine.res.text);
  const myEmail = (
    await kiln.services.database.db
      .selectFrom('people')
      .innerJoin('accounts', 'accounts.id', 'people.account_id')
      .select('email')
      .where('accounts.username', '=', mine.res.json.username)
      .executeTakeFirstOrThrow()
  ).email;
  const otherEmail = (
    await kiln.services.database.db
      .selectFrom('people')
      .innerJoin('accounts', 'accounts.id', 'people.account_id')
      .select('email')
      .where('accounts.username', '=', theirs.res.json.username)
      .executeTakeFirstOrThrow()
  ).email;
  const developer = await signedIn(kiln, kiln.client()); // a developer with a password

  const ask = (who: string) =>
    kiln
      .client(host)
      .post(
        '/_/app/reset',
        { app: 'only-mine.html', email: who },
        { headers: { 'x-requested-with': 'fetch', 'x-forwarded-host': 'evil.example' } },
      );
  const answers = [await ask(owner.email), await ask(developer.email), await ask(otherEmail), await ask(myEmail)];
  for (const a of answers) assert.deepEqual([a.status, a.json], [answers[3].status, answers[3].json]);
  const link = await linkFor(myEmail, '/_/app/reset/');
  assert.equal(new URL(link).host, host, 'the link is on the app host');
  // The other three were asked for first, and what their background work does (one lookup that finds no app
  // user) is the start of what mine did (the same lookup, then a token and the mail): mine is there, so theirs
  // would be too.
  const resets = (await outbox().messages()).filter((m) => m.text.includes('/_/app/reset/'));
  for (const who of [owner.email, developer.email, otherEmail])
    assert.equal(resets.filter((m) => m.to === who).length, 0, `no reset mail to ${who}`);

  // A developer signed in on the app's host gets no confirmation link there either.
  const dev = kiln.client(host);
  dev.jar = main.jar;
  const confirm = await dev.post(
    '/_/app/confirm',
    { app: 'only-mine.html' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.notEqual(confirm.status, 200);
});

test("app form posts accept the app host's own origin, never another account's host", async () => {
  const { host } = await ownerWithApp('origin-app.html');
  const other = await ownerWithApp('other-origin-app.html');
  const post = (origin: string) =>
    kiln
      .client(host)
      .post(
        '/_/app/signup',
        { app: 'origin-app.html', email: email('o'), password: PASSWORD },
        { headers: { 'x-requested-with': 'fetch', origin } },
      );
  const refused = await post(`http://${other.host}`);
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.code, 'cross-origin');
  assert.equal((await post('http://evil.example')).status, 403);
  assert.equal((await post(`http://${host}`)).status, 201);
});

test("an app's owner sees who signed up (email confirmed or not, their copy) and can disable one", async () => {
  const { main, id, host } = await ownerWithApp('signup-list.html');
  const first = email('s');
  const one = await signUp(host, 'signup-list.html', { email: first });
  assert.ok(one.res.status < 400, one.res.text);
  await signUp(host, 'signup-list.html');
  const listed = await main.get(`/_/dashboard/nodes/${id}/signups`, { headers: { accept: 'application/json' } });
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.json.users.length, 2);
  const u = listed.json.users.find((x: { email: string }) => x.email === first);
  assert.equal(u.emailConfirmed, false);
  assert.match(u.instance, /^signup-list-\d+\.html$/);
  // Someone else's (public) app: nothing to see, the dashboard's answer for another account's public document.
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  const refused = await stranger.get(`/_/dashboard/nodes/${id}/signups`, { headers: { accept: 'application/json' } });
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.json.code, 'not-owner');
  // Their copy is served on their host (and that host is now remembered by this process).
  const copy = kiln.client(kiln.hostOf(u.username));
  assert.equal((await copy.get(`/${u.instance}`)).status, 200);
  // Disabled: the person cannot sign in on the app any more, and their copy answers "unavailable" at once,
  // like a suspended account's (the host cache is dropped by the change's event, not after its few seconds).
  const off = await main.post(
    `/_/dashboard/nodes/${id}/signups/${u.id}/disable`,
    { disabled: true },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(off.status, 200, off.text);
  const login = await kiln
    .client(host)
    .post(
      '/_/app/login',
      { app: 'signup-list.html', email: first, password: PASSWORD },
      { headers: { 'x-requested-with': 'fetch' } },
    );
  assert.equal(login.status, 403);
  assert.equal(login.json.code, 'account-suspended');
  assert.equal((await copy.get(`/${u.instance}`)).status, 451);
  assert.equal(
    (await main.get(`/_/dashboard/nodes/${id}/signups`, { headers: { accept: 'application/json' } })).json.users.find(
      (x: { id: number }) => x.id === u.id,
    ).disabled,
    true,
  );
});

test('an administrator sends an app user who has not confirmed a new confirmation link', async () => {
  const { host } = await ownerWithApp('resend-confirm.html');
  const address = email('r');
  const { res } = await signUp(host, 'resend-confirm.html', { email: address });
  assert.ok(res.status < 400, res.text);
  const adminClient = kiln.client();
  await signedIn(kiln, adminClient, { isSuperadmin: true });
  const listed = await adminClient.get(`/_/admin?q=${encodeURIComponent(address)}`, {
    headers: { accept: 'application/json' },
  });
  const user = listed.json.accounts[0];
  assert.equal(user.emailConfirmed, false);
  const before = (await outbox().messages()).filter((m) => m.to === address).length;
  const sent = await adminClient.post(
    `/_/admin/accounts/${user.id}/confirmation`,
    {},
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(sent.status, 200, sent.text);
  const mails = (await outbox().messages()).filter((m) => m.to === address);
  assert.equal(mails.length, before + 1);
  assert.match(mails.at(-1)!.text, new RegExp(`http://${host.replace(/\./g, '\\.')}/_/app/confirm/`));
});

// ------------------------------------------------------------ security review #22 (5): an app's host
// runs its owner's scripts, so a password typed there may be read by them: app sign-in, sign-up and
// reset consider only app users of that app, and a developer's credentials are never checked there.

/** An app, a developer with a password, this app's user and another app's user (emails known). */
async function appWithPeople(name: string) {
  const app = await ownerWithApp(name);
  const other = await ownerWithApp(`other-${name}`);
  const developer = await signedIn(kiln, kiln.client());
  const mine = email('mine');
  const theirs = email('theirs');
  assert.equal((await signUp(app.host, name, { email: mine })).res.status, 201);
  assert.equal((await signUp(other.host, `other-${name}`, { email: theirs })).res.status, 201);
  return { ...app, otherHost: other.host, developer, mine, theirs };
}

test('app sign-in accepts only app users of that app: a developer’s email or username and password answer like an unknown email', async () => {
  const { host, owner, developer, mine, theirs } = await appWithPeople('gate-app.html');
  const ajax = (identifier: string, password: string) =>
    kiln
      .client(host)
      .post(
        '/_/app/login',
        { app: 'gate-app.html', email: identifier, password },
        { headers: { 'x-requested-with': 'fetch' } },
      );
  const unknown = await ajax(`nobody${++seq}@example.com`, developer.password);
  assert.equal(unknown.status, 401);
  assert.equal(unknown.json.code, 'bad-credentials');
  const refusedAlike = [
    [developer.email, developer.password],
    [developer.username, developer.password],
    [owner.email, owner.password],
    [owner.username, owner.password],
    [theirs, PASSWORD],
  ];
  for (const [who, password] of refusedAlike) {
    const r = await ajax(who, password);
    assert.deepEqual([r.status, r.json], [unknown.status, unknown.json], `${who} is refused like an unknown email`);
    assert.equal(r.headers['set-cookie'], undefined, `${who} gets no session`);
  }
  const ok = await ajax(mine, PASSWORD);
  assert.equal(ok.status, 200, ok.text);

  // Browser forms: the same redirect back to the form (same signed message) for the developer and for nobody.
  const form = (identifier: string) =>
    kiln
      .client(host)
      .post(
        '/_/app/login',
        { app: 'gate-app.html', email: identifier, password: developer.password },
        { form: true, headers: { accept: 'text/html' } },
      );
  const devForm = await form(developer.email);
  const nobodyForm = await form(`nobody${++seq}@example.com`);
  assert.equal(devForm.status, 302);
  assert.equal(devForm.headers.location, nobodyForm.headers.location);
  assert.equal(devForm.headers['set-cookie'], undefined);

  // The pages send developers to the main app to sign in.
  for (const p of ['login', 'signup', 'reset']) {
    const page = await kiln.client(host).page(`/_/app/${p}?app=gate-app.html`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`href="${kiln.config.baseUrl}/_/login"`), `${p} links to the main app's sign-in`);
  }
});

test('app sign-up with a developer’s email answers exactly as for any email in use, and creates nothing', async () => {
  const { host, developer, mine, theirs } = await appWithPeople('gate-signup.html');
  const attempt = (address: string) => signUp(host, 'gate-signup.html', { email: address });
  const answers = [];
  for (const address of [developer.email, mine, theirs, developer.email.toUpperCase()]) {
    const { res } = await attempt(address);
    answers.push(res);
    assert.equal(res.status, 409, res.text);
    assert.equal(res.headers['set-cookie'], undefined);
  }
  for (const a of answers) assert.deepEqual(a.json, answers[1].json, 'a developer’s email is one more email in use');
  const people = await kiln.services.database.db
    .selectFrom('people')
    .select('account_id')
    .where('email', '=', developer.email)
    .execute();
  assert.equal(people.length, 1);
});

test('an app host takes no password reset of a developer (nor of another app’s user): the link is refused like a bogus one, and still works on the main app', async () => {
  const { host, otherHost, developer, theirs } = await appWithPeople('gate-reset.html');
  const asked = await kiln
    .client()
    .post('/_/reset', { email: developer.email }, { headers: { 'x-requested-with': 'fetch' } });
  assert.equal(asked.status, 200, asked.text);
  const devToken = new URL(await linkFor(developer.email, '/_/reset/')).pathname.split('/').pop()!;
  const theirRequest = await kiln
    .client(otherHost)
    .post(
      '/_/app/reset',
      { app: 'other-gate-reset.html', email: theirs },
      { headers: { 'x-requested-with': 'fetch' } },
    );
  assert.equal(theirRequest.status, 200);
  const theirToken = new URL(await linkFor(theirs, '/_/app/reset/')).pathname.split('/').pop()!;
  const bogus = 'A'.repeat(43);
  const NEW = 'Taken-over-pw-31-kiln';
  const post = (token: string) =>
    kiln
      .client(host)
      .post(
        `/_/app/reset/${token}?app=gate-reset.html`,
        { password: NEW },
        { headers: { 'x-requested-with': 'fetch' } },
      );
  const refused = await post(bogus);
  assert.equal(refused.status, 400);
  for (const token of [devToken, theirToken]) {
    const form = await kiln.client(host).page(`/_/app/reset/${token}?app=gate-reset.html`);
    assert.equal(form.status, 400, 'no new-password form on the app host');
    const r = await post(token);
    assert.deepEqual([r.status, r.json], [refused.status, refused.json]);
    assert.equal(r.headers['set-cookie'], undefined);
  }
  // Nothing changed: the developer's old password still signs in on the main app, and the link works there.
  const signIn = await kiln
    .client()
    .post(
      '/_/login',
      { email: developer.email, password: developer.password },
      { headers: { 'x-requested-with': 'fetch' } },
    );
  assert.equal(signIn.status, 200, signIn.text);
  const onMain = await kiln.client().page(`/_/reset/${devToken}`);
  assert.equal(onMain.status, 200);
  assert.match(onMain.text, /name="password"/);
});

test("a copy's own page knows its app: /_/app/info says what a page is, and the sign-up form named by a copy is the app's", async () => {
  const { host, id, main } = await ownerWithApp('club.html');
  const anon = kiln.client(host);
  const info = await anon.get('/_/app/info?app=club.html');
  assert.equal(info.status, 200, info.text);
  assert.deepEqual(info.json, { app: true, copy: false, signupUrl: `http://${host}/_/app/signup?app=club.html` });

  const { res } = await signUp(host, 'club.html');
  assert.equal(res.status, 201, res.text);
  const copyHost = kiln.hostOf(res.json.username);
  const copyName = res.json.instance.name as string;
  const onCopy = kiln.client(copyHost);
  // The app's markup on the copy names the copy in its link: the copy's host sends it to the app's sign-up.
  const form = await onCopy.page(`/_/app/signup?app=${copyName}`);
  assert.equal(form.status, 302, form.text);
  assert.equal(form.headers.location, `http://${host}/_/app/signup?app=club.html`);
  const copyInfo = await onCopy.get(`/_/app/info?app=${copyName}`);
  assert.deepEqual(copyInfo.json, { app: false, copy: true, signupUrl: `http://${host}/_/app/signup?app=club.html` });

  // A plain document is neither; a missing one is 404; the copy's app no longer taking sign-ups leaves the
  // copy with no sign-up (404 as before), and a private app's address is never told.
  const plain = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: 'plain-page.html', html: APP_V1 },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(plain.status, 201, plain.text);
  assert.deepEqual((await anon.get('/_/app/info?app=plain-page.html')).json, {
    app: false,
    copy: false,
    signupUrl: null,
  });
  assert.equal((await anon.get('/_/app/info?app=nothing-here.html')).status, 404);
  const vis = await main.post(
    `/_/dashboard/nodes/${id}/visibility`,
    { visibility: 'private' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(vis.status, 200);
  assert.equal((await onCopy.page(`/_/app/signup?app=${copyName}`)).status, 404);
  assert.deepEqual((await onCopy.get(`/_/app/info?app=${copyName}`)).json, {
    app: false,
    copy: true,
    signupUrl: null,
  });
});

test("a team's document made an app from the dashboard: the message names the team's host as the sign-up address", async () => {
  const main = kiln.client();
  const owner = await signedIn(kiln, main, { plan: 'maker' });
  const team = await createTeam(kiln.services, {
    username: `apps-${owner.username}`,
    ownerId: owner.id,
    plan: 'maker',
  });
  const doc = await createNode(await actingAs(kiln.services, owner.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `club-${team.id}.html`,
    html: APP_V1,
  });
  const on = await main.post(
    `/_/dashboard/nodes/${doc.id}/app`,
    { enableSignups: true },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(on.status, 200, on.text);
  assert.ok(on.json.msg.includes(`${kiln.hostOf(team.username)}/_/app/signup?app=club-${team.id}.html`), on.json.msg);
  assert.ok(!on.json.msg.includes(`//${kiln.hostOf(owner.username)}`), on.json.msg);
  // The address works: a visitor signs up there and gets a copy in the team's tree.
  const { res } = await signUp(kiln.hostOf(team.username), `club-${team.id}.html`);
  assert.equal(res.status, 201, res.text);
});
