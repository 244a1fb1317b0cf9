// Administration through HTTP: only superadmins; accounts listed with search and paging; a plan changed;
// a suspended account's hosts answer 451, it cannot sign in, its sessions and sync keys stop, and all
// comes back when the suspension is lifted; sign-ups open, by invitation link only, or closed, on the
// plan the administrator chose.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn } from './support/people.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { mailsTo } from './support/stripe.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };

async function admin() {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { isSuperadmin: true });
  return { me, main };
}

test('only superadmins reach /_/admin; it lists accounts with what they hold, searchable', async () => {
  const { main } = await admin();
  const plain = kiln.client();
  await signedIn(kiln, plain);
  assert.equal((await plain.get('/_/admin', json)).status, 403);
  assert.equal((await kiln.client().get('/_/admin', json)).status, 401);
  const target = kiln.client();
  const t = await signedIn(kiln, target, { plan: 'maker' });
  await target.post('/_/dashboard/nodes', { type: 'site', name: `adm-${t.id}.html`, html: 'x'.repeat(1000) }, json);
  const found = await main.get(`/_/admin?q=${t.username}`, json);
  assert.equal(found.status, 200);
  assert.equal(found.json.accounts.length, 1);
  assert.equal(found.json.accounts[0].username, t.username);
  assert.equal(found.json.accounts[0].documents, 1);
  assert.equal(found.json.accounts[0].storage, 1000);
  assert.ok(found.json.accounts[0].lastActive, 'a sign-in is remembered');
  const page = cheerio.load((await main.page('/_/admin')).text);
  assert.match(page('h1').text(), /Administration/);
  assert.ok(page('tbody tr').length >= 3);
  assert.match(
    cheerio
      .load((await main.page('/_/dashboard')).text)('a[href="/_/admin"]')
      .text(),
    /Administration/,
  );
});

test('a plan is changed; a suspended account is unavailable everywhere until the suspension is lifted', async () => {
  const { main, me } = await admin();
  const p = newPerson({ plan: 'free' });
  const person = await createPerson(kiln.services, p);
  const owner = kiln.client();
  const login = await owner.post('/_/login', { email: p.email, password: p.password }, json);
  assert.equal(login.status, 200);
  await owner.post(
    '/_/dashboard/nodes',
    { type: 'site', name: `sus-${person.id}.html`, html: '<html><p>hi</p></html>' },
    json,
  );

  const plan = await main.post(`/_/admin/accounts/${person.id}/plan`, { plan: 'maker' }, json);
  assert.equal(plan.status, 200, plan.text);
  assert.equal((await owner.get('/_/billing', json)).json.plan.plan, 'maker');
  assert.equal((await main.post(`/_/admin/accounts/${person.id}/plan`, { plan: 'gold' }, json)).status, 400);
  assert.equal((await main.post(`/_/admin/accounts/${me.id}/plan`, { plan: 'free' }, json)).status, 403, 'not oneself');

  const { key } = await createSyncKey(kiln.services, person.id);
  const sync = kiln.client();
  assert.equal((await sync.get('/_/sync/nodes', { headers: { 'x-api-key': key } })).status, 200);
  const host = kiln.client(kiln.hostOf(person.username));
  assert.equal((await host.get(`/sus-${person.id}.html`)).status, 200);

  assert.equal((await main.post(`/_/admin/accounts/${person.id}/suspend`, { suspended: true }, json)).status, 200);
  // This process forgets the host at once (other processes within HOST_CACHE_MS): no waiting here.
  const gone = await host.page(`/sus-${person.id}.html`);
  assert.equal(gone.status, 451);
  assert.match(gone.text, /unavailable/);
  assert.equal((await owner.get('/_/dashboard', json)).status, 401, 'signed out');
  const again = await kiln.client().post('/_/login', { email: p.email, password: p.password }, json);
  assert.equal(again.status, 403);
  assert.equal(again.json.code, 'account-suspended');
  const wrong = await kiln.client().post('/_/login', { email: p.email, password: 'not the password' }, json);
  assert.equal(wrong.status, 401, 'the suspension is told only to whoever knows the password');
  const keyed = await sync.get('/_/sync/nodes', { headers: { 'x-api-key': key } });
  assert.equal(keyed.status, 403);
  assert.equal(keyed.json.code, 'account-suspended');
  assert.equal((await main.get(`/_/admin?q=${person.username}`, json)).json.accounts[0].suspended, true);

  assert.equal((await main.post(`/_/admin/accounts/${person.id}/suspend`, { suspended: false }, json)).status, 200);
  assert.equal((await host.get(`/sus-${person.id}.html`)).status, 200);
  assert.equal((await sync.get('/_/sync/nodes', { headers: { 'x-api-key': key } })).status, 200);
  assert.equal((await kiln.client().post('/_/login', { email: p.email, password: p.password }, json)).status, 200);
});

test('sign-ups: closed, by invitation link only (each link once), open again; new accounts start on the chosen plan', async () => {
  const { main } = await admin();
  const signup = (c = kiln.client(), invite?: string) => {
    const n = newPerson();
    return c.post(
      '/_/signup',
      { email: n.email, username: n.username, password: n.password, ...(invite ? { invite } : {}) },
      json,
    );
  };
  assert.equal((await main.post('/_/admin/settings', { signups: 'closed', defaultPlan: 'free' }, json)).status, 200);
  const closed = await signup();
  assert.equal(closed.status, 403);
  assert.equal(closed.json.code, 'signups-closed');
  // The page says so before any form, and the header offers no sign-up (#25.7).
  const closedPage = cheerio.load((await kiln.client().page('/_/signup')).text);
  assert.equal(closedPage('h1').text(), 'Sign-ups are closed');
  assert.equal(closedPage('form[action="/_/signup"]').length, 0);
  assert.equal(closedPage('header a[href$="/_/signup"]').length, 0);
  assert.equal(closedPage('header a[href$="/_/login"]').length, 1);
  // A form sent anyway (sign-ups closed while it was open) goes back to the page with the reason.
  const n = newPerson();
  const sent = await kiln.client().post(
    '/_/signup',
    { email: n.email, username: n.username, password: n.password },
    {
      form: true,
      headers: { accept: 'text/html' },
    },
  );
  assert.equal(sent.status, 302);
  assert.match(String(sent.headers.location), /^\/_\/signup/);

  assert.equal(
    (await main.post('/_/admin/settings', { signups: 'invite', defaultPlan: 'personal' }, json)).status,
    200,
  );
  assert.equal((await signup()).status, 403);
  const uninvited = cheerio.load((await kiln.client().page('/_/signup')).text);
  assert.equal(uninvited('h1').text(), 'Sign-up is by invitation');
  assert.equal(uninvited('form[action="/_/signup"]').length, 0);
  // From the page: the link shows on it, in a field to copy (not only in a banner or the address bar).
  const fromPage = await main.post('/_/admin/invites', {}, { headers: { accept: 'text/html' } });
  assert.equal(fromPage.status, 200, fromPage.text);
  const shown = cheerio.load(fromPage.text)('#invite-url').attr('value') ?? '';
  assert.match(shown, /\/_\/signup\?invite=[A-Za-z0-9_-]{20,}$/);
  assert.equal(cheerio.load(fromPage.text)('label[for=invite-url]').length, 1);
  const made = await main.post('/_/admin/invites', {}, json);
  const invite = new URL(made.json.url).searchParams.get('invite')!;
  const page = cheerio.load((await kiln.client().page(`/_/signup?invite=${invite}`)).text);
  assert.equal(page('input[name=invite]').attr('value'), invite, 'the form carries the invitation');
  const welcomed = await signup(kiln.client(), invite);
  assert.equal(welcomed.status, 201, welcomed.text);
  assert.equal((await signup(kiln.client(), invite)).status, 403, 'each link works once');
  const listed = await main.get(`/_/admin?q=${welcomed.json.username}`, json);
  assert.equal(listed.json.accounts[0].plan, 'personal');

  assert.equal((await main.post('/_/admin/settings', { signups: 'sometimes', defaultPlan: 'free' }, json)).status, 400);
  assert.equal((await main.post('/_/admin/settings', { signups: 'open', defaultPlan: 'free' }, json)).status, 200);
  assert.equal((await signup()).status, 201);
});

test('sign-up is offered (header, home page, sign-in page) only while sign-ups are open', async () => {
  const { main } = await admin();
  const offers = async () => {
    const links: Record<string, number> = {};
    for (const path of ['/', '/_/login', '/_/reset']) {
      const $ = cheerio.load((await kiln.client().page(path)).text);
      assert.equal($('header a[href$="/_/login"]').length, 1, `${path} offers sign-in`);
      links[path] = $('a[href*="/_/signup"]').length;
    }
    return links;
  };
  for (const signups of ['closed', 'invite']) {
    assert.equal((await main.post('/_/admin/settings', { signups, defaultPlan: 'free' }, json)).status, 200);
    assert.deepEqual(await offers(), { '/': 0, '/_/login': 0, '/_/reset': 0 }, signups);
  }
  assert.equal((await main.post('/_/admin/settings', { signups: 'open', defaultPlan: 'free' }, json)).status, 200);
  // Open: the header and the body's "Create an account" / "No account yet? Sign up"; other pages offer sign-in.
  assert.deepEqual(await offers(), { '/': 2, '/_/login': 2, '/_/reset': 0 });
});

test('support: an administrator signs in as an account, and its activity feed says who did; a test mail goes out', async () => {
  const { main, me } = await admin();
  const p = newPerson({ plan: 'maker' });
  const person = await createPerson(kiln.services, p);
  const as = await main.post(`/_/admin/accounts/${person.id}/impersonate`, {}, json);
  assert.equal(as.status, 200, as.text);
  const account = await main.get('/_/account', json);
  assert.equal(account.json.account.username, person.username, 'signed in as the account');
  const activity = await main.get('/_/activity', json);
  assert.deepEqual(
    [activity.json.activity[0].kind, activity.json.activity[0].by, activity.json.activity[0].client],
    ['impersonated', me.username, 'administrator'],
  );
  const plain = kiln.client();
  await signedIn(kiln, plain);
  assert.equal((await plain.post(`/_/admin/accounts/${person.id}/impersonate`, {}, json)).status, 403);

  const { main: admin2 } = await admin();
  const sent = await admin2.post('/_/admin/mail-test', { to: 'ops@example.com' }, json);
  assert.equal(sent.status, 200, sent.text);
  assert.match(sent.json.msg, /outbox/);
  assert.equal((await mailsTo(kiln, 'ops@example.com')).length, 1);
  assert.equal((await admin2.post('/_/admin/mail-test', { to: 'nope' }, json)).status, 400);
});

test("an administrator sets each plan's upload size; uploads and the dashboard follow at once", async () => {
  const { main } = await admin();
  const limitsOf = { signups: 'open', defaultPlan: 'free', uploadFree: 1, uploadPersonal: 20, uploadMaker: 100 };
  assert.equal((await main.post('/_/admin/settings', limitsOf, json)).status, 200);
  assert.deepEqual((await main.get('/_/admin', json)).json.uploadMb, { free: 1, personal: 20, maker: 100 });
  const user = kiln.client();
  await signedIn(kiln, user, { plan: 'free' });
  assert.match(
    cheerio
      .load((await user.page('/_/dashboard')).text)('#usage')
      .text(),
    /uploads up to 1\.0 MB each/,
  );
  const boundary = '----kilnlimit';
  const big = Buffer.alloc(1536 * 1024, 1);
  const up = await user.post(
    '/_/upload',
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`),
      big,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    { headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' } },
  );
  assert.equal(up.status, 413);
  assert.match(up.json.msg, /limited to 1 MB on the free plan/);
  assert.equal((await main.post('/_/admin/settings', { ...limitsOf, uploadFree: 0 }, json)).status, 400);
  assert.equal((await main.post('/_/admin/settings', { ...limitsOf, uploadFree: 10 }, json)).status, 200);
});
