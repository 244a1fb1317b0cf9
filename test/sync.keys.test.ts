// Sync keys from the dashboard and the shell: who may generate one (402 otherwise), the key shown
// once (hcsk_ + 64 hex, only its SHA-256 kept, one year), listing by prefix in the Active tab,
// revocation (then 401), and `kiln key add`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { SyncApi, kilnCmd } from './support/sync-client.ts';
import type { Client } from './support/client.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const KEY = /^hcsk_[0-9a-f]{64}$/;
const apiFor = (key: string) =>
  new SyncApi({ port: Number(new URL(kiln.url).port), host: kiln.config.rootDomain, apiKey: key });
const generate = (c: Client) => c.post('/_/dashboard/keys', {}, { headers: { 'x-requested-with': 'fetch' } });

test('a paid account generates a key from the dashboard: shown once, hash only, one year, listed by its first 12 characters', async () => {
  const c = kiln.client();
  const me = await signedIn(kiln, c, { plan: 'personal' });
  const res = await generate(c);
  assert.equal(res.status, 201, res.text);
  assert.equal(res.json.msgType, 'success');
  const key: string = res.json.key;
  assert.match(key, KEY);
  assert.equal(res.json.prefix, key.slice(0, 12));
  const days = (Date.parse(res.json.expiresAt) - Date.now()) / 86_400_000;
  assert.ok(days > 364 && days <= 366, String(days));
  // Only the SHA-256 of the key is stored.
  const rows = await kiln.services.database.db
    .selectFrom('sync_keys')
    .selectAll()
    .where('account_id', '=', me.id)
    .execute();
  assert.equal(rows.length, 1);
  assert.equal(rows[0].key_hash, createHash('sha256').update(key).digest('hex'));
  assert.ok(!JSON.stringify(rows).includes(key.slice(5)));
  // The key works.
  const status = await apiFor(key).status();
  assert.equal(status.username, me.username);
  // The list shows the prefix, never the key.
  const list = await c.get('/_/dashboard/keys');
  assert.equal(list.json.keys.length, 1);
  assert.equal(list.json.keys[0].prefix, key.slice(0, 12));
  assert.equal(list.json.keys[0].state, 'active');
  assert.ok(!list.text.includes(key));
  const page = await c.page('/_/dashboard/keys');
  assert.equal(page.status, 200);
  assert.match(page.text, /Generate sync key/);
  assert.ok(page.text.includes(`${key.slice(0, 12)}…`));
  assert.ok(!page.text.includes(key));
});

test('a browser form post redirects (POST-redirect-GET) to the page that shows the key once; a reload makes no second key and shows none', async () => {
  const c = kiln.client();
  await signedIn(kiln, c, { plan: 'maker' });
  const res = await c.post('/_/dashboard/keys', {}, { form: true, headers: { accept: 'text/html' } });
  assert.equal(res.status, 303);
  assert.equal(res.headers.location, '/_/dashboard/keys');
  assert.doesNotMatch(res.headers.location!, /hcsk_/, 'the key never travels in a URL');
  const shown = await c.page('/_/dashboard/keys');
  const key = /hcsk_[0-9a-f]{64}/.exec(shown.text)?.[0];
  assert.ok(key, 'the page shows the key');
  assert.match(shown.text, /shown only once/);
  assert.match(String(shown.headers['cache-control']), /no-store/);
  const again = await c.page('/_/dashboard/keys');
  assert.ok(!again.text.includes(key!), 'a reload shows it no more');
  const listed = await c.get('/_/dashboard/keys', { headers: { accept: 'application/json' } });
  assert.equal(listed.json.keys.length, 1, 'one key: reloading generated none');
});

test("generation needs a plan of one's own or an owner/editor role on a team whose plan includes sync (402 payment-required)", async () => {
  const freeClient = kiln.client();
  const free = await signedIn(kiln, freeClient, { plan: 'free' });
  const refused = await generate(freeClient);
  assert.equal(refused.status, 402);
  assert.equal(refused.json.code, 'payment-required');
  assert.equal(refused.json.msgType, 'error');
  assert.match(refused.json.msg, /paid plan/);
  assert.match(refused.json.msg, /team/);
  // Browsers come back to the page with the message.
  const form = await freeClient.post('/_/dashboard/keys', {}, { form: true, headers: { accept: 'text/html' } });
  assert.equal(form.status, 302);
  assert.match(String(form.headers.location), /^\/_\/dashboard\/keys\?msg=.*paid\+plan.*msgType=error/);
  assert.equal(
    (await kiln.services.database.db.selectFrom('sync_keys').select('id').where('account_id', '=', free.id).execute())
      .length,
    0,
  );

  // A viewer of a paid team, or an editor of a free team: still no.
  const ownerClient = kiln.client();
  const owner = await signedIn(kiln, ownerClient, { plan: 'personal' });
  const paidTeam = await createTeam(kiln.services, {
    username: `pt-${owner.username}`,
    ownerId: owner.id,
    plan: 'personal',
  });
  const freeTeam = await createTeam(kiln.services, {
    username: `ft-${owner.username}`,
    ownerId: owner.id,
    plan: 'free',
  });
  await setMember(await actingAs(kiln.services, owner.id), {
    teamId: paidTeam.id,
    username: free.username,
    role: 'viewer',
  });
  await setMember(await actingAs(kiln.services, owner.id), {
    teamId: freeTeam.id,
    username: free.username,
    role: 'editor',
  });
  assert.equal((await generate(freeClient)).status, 402);
  // An editor of the paid team: yes.
  await setMember(await actingAs(kiln.services, owner.id), {
    teamId: paidTeam.id,
    username: free.username,
    role: 'editor',
  });
  const ok = await generate(freeClient);
  assert.equal(ok.status, 201, ok.text);
  assert.match(ok.json.key, KEY);
});

test('revoking in the Active tab: the key moves to "Expired and revoked" and every request with it answers 401', async () => {
  const c = kiln.client();
  await signedIn(kiln, c, { plan: 'personal' });
  const a = (await generate(c)).json;
  const b = (await generate(c)).json;
  assert.equal((await apiFor(a.key).raw('GET', '/nodes')).status, 200);
  const active = await c.page('/_/dashboard/keys');
  assert.match(active.text, /Active \(2\)/);
  assert.ok(active.text.includes(`action="/_/dashboard/keys/${a.id}/revoke"`));
  const r = await c.post(`/_/dashboard/keys/${a.id}/revoke`, {}, { form: true, headers: { accept: 'text/html' } });
  assert.equal(r.status, 302);
  assert.match(String(r.headers.location), /msgType=success/);
  const gone = await apiFor(a.key).raw('GET', '/nodes');
  assert.equal(gone.status, 401);
  assert.equal(gone.json.code, 'revoked-key');
  assert.equal((await apiFor(b.key).raw('GET', '/nodes')).status, 200);
  const after = await c.page('/_/dashboard/keys');
  assert.match(after.text, /Active \(1\)/);
  assert.ok(!after.text.includes(`${a.prefix}…`));
  const inactive = await c.page('/_/dashboard/keys?tab=inactive');
  assert.ok(inactive.text.includes(`${a.prefix}…`));
  assert.match(inactive.text, /revoked/);
  // Someone else's key id: 404, nothing revoked.
  const other = kiln.client();
  await signedIn(kiln, other, { plan: 'personal' });
  const foreign = await other.post(
    `/_/dashboard/keys/${b.id}/revoke`,
    {},
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(foreign.status, 404);
  assert.equal((await apiFor(b.key).raw('GET', '/nodes')).status, 200);
});

test('signed out: the keys page sends browsers to the login page and programs get 401', async () => {
  const c = kiln.client();
  const page = await c.page('/_/dashboard/keys');
  assert.equal(page.status, 302);
  assert.match(String(page.headers.location), /^\/_\/login/);
  const api = await generate(c);
  assert.equal(api.status, 401);
});

test('the account menu links to the sync keys', async () => {
  const c = kiln.client();
  await signedIn(kiln, c);
  const page = await c.page('/_/dashboard');
  assert.match(page.text, /href="\/_\/dashboard\/keys"/);
});

test('kiln key add --user prints a working key; refuses without a plan (unless --force) and without --user', async () => {
  const c = kiln.client();
  const paid = await signedIn(kiln, c, { plan: 'personal' });
  const run = await kilnCmd(kiln, ['key', 'add', '--user', paid.username]);
  assert.equal(run.code, 0, run.stderr);
  const key = run.stdout.trim();
  assert.match(key, KEY);
  assert.equal((await apiFor(key).status()).username, paid.username);

  const free = await signedIn(kiln, kiln.client(), { plan: 'free' });
  const refused = await kilnCmd(kiln, ['key', 'add', '--user', free.username]);
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /paid plan/);
  const forced = await kilnCmd(kiln, ['key', 'add', '--user', free.username, '--force']);
  assert.equal(forced.code, 0, forced.stderr);
  // A forced key on a free plan: reading works, writing is 402.
  const api = apiFor(forced.stdout.trim());
  assert.equal((await api.raw('GET', '/nodes')).status, 200);
  assert.equal((await api.raw('POST', '/nodes', { body: { type: 'folder', name: 'x', parentId: 0 } })).status, 402);

  const missing = await kilnCmd(kiln, ['key', 'add']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing --user/);
  const nobody = await kilnCmd(kiln, ['key', 'add', '--user', 'no-such-person-here']);
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /no person named/);
});
