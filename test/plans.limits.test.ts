// Plans through HTTP: site counts, upload sizes, and the allowances (subdomains, custom domains,
// multi-tenant apps) that grow with months active — on an injected clock. Every refusal names the limit
// and how to raise it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, sessionsFor, storeSessions, actingAs } from './support/people.ts';
import type { Client } from './support/client.ts';
import type { Clock } from '../src/clock.ts';
import { createPerson, type NewPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { addMonths, assertCanAddCustomDomain, monthsActive } from '../src/billing/plans.ts';
import { KilnError } from '../src/errors.ts';

const START = new Date('2026-01-31T12:00:00.000Z');
let now = START;
const clock: Clock = { now: () => new Date(now) };
const MB = 1024 * 1024;

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln({ clock });
});
after(() => kiln.stop());

/** A person created at the clock's time (the plan starts then), with a client signed in now. */
async function member(over: Partial<NewPerson> = {}) {
  const input = newPerson(over);
  const person = await createPerson(kiln.services, input);
  const main = kiln.client();
  await signInNow(main, person);
  return { person, main, host: main.on(kiln.hostOf(person.username)) };
}

/** Sessions live 30 days on the server's clock: sign in again after moving it. */
async function signInNow(c: Client, person: { id: number; username: string }) {
  storeSessions(
    c.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, person.id, person.username, clock.now()),
  );
}

const ajax = { headers: { 'x-requested-with': 'fetch' } };
const createSite = (c: Client, name: string) => c.post('/_/dashboard/nodes', { type: 'site', name }, ajax);
const plan = async (c: Client) => {
  const res = await c.get('/_/billing');
  assert.equal(res.status, 200, res.text);
  return res.json.plan;
};

test('sites: the 11th document on the free plan is refused naming the limit; paid plans report unlimited; a lapsed plan is back to 10', async () => {
  now = START;
  const free = await member({ plan: 'free' });
  for (let i = 0; i < 10; i++) assert.equal((await createSite(free.main, `q-${free.person.id}-${i}.html`)).status, 201);
  const over = await createSite(free.main, `q-${free.person.id}-10.html`);
  assert.equal(over.status, 403);
  assert.equal(over.json.code, 'quota-exceeded');
  assert.equal(over.json.limit, 'sites');
  assert.equal(over.json.max, 10);
  assert.match(over.json.msg, /free plan allows 10 documents/);
  assert.match(over.json.msg, /Upgrade to Personal or Maker/);
  const summary = await plan(free.main);
  assert.deepEqual(summary.sites, { used: 10, max: 10, unlimited: false });

  const paid = await member({ plan: 'personal' });
  for (let i = 0; i < 11; i++) assert.equal((await createSite(paid.main, `p-${paid.person.id}-${i}.html`)).status, 201);
  assert.deepEqual((await plan(paid.main)).sites, { used: 11, max: null, unlimited: true });
  const page = await paid.main.page('/_/billing');
  assert.match(page.text, /11 \(unlimited\)/);

  // The subscription ends: the free plan's limit applies again, and the refusal says how to lift it.
  await kiln.services.database.db
    .updateTable('accounts')
    .set({ has_active_subscription: 0 })
    .where('id', '=', paid.person.id)
    .execute();
  const lapsed = await createSite(paid.main, `p-${paid.person.id}-11.html`);
  assert.equal(lapsed.status, 403);
  assert.equal(lapsed.json.limit, 'sites');
  assert.match(lapsed.json.msg, /Personal subscription has ended; renewing it lifts the limit/);
  assert.equal((await plan(paid.main)).effectivePlan, 'free');

  const admin = await member({ isSuperadmin: true, plan: 'free' });
  for (let i = 0; i < 11; i++)
    assert.equal((await createSite(admin.main, `a-${admin.person.id}-${i}.html`)).status, 201);
});

/** The owner's document and a client on its host, ready for `/_/upload`. */
async function uploader(p: Partial<NewPerson>) {
  const m = await member(p);
  const page = await createNode(await actingAs(kiln.services, m.person.id), {
    ownerId: m.person.id,
    parentId: 0,
    type: 'site',
    name: `up-${m.person.username}.html`,
    html: '<p>page</p>',
  });
  const pageUrl = `http://${kiln.hostOf(m.person.username)}/${page.name}`;
  return (bytes: number, name = 'file.bin') =>
    m.host.post(
      '/_/upload',
      { fileName: name, fileBody: Buffer.alloc(bytes, 1).toString('base64') },
      { headers: { 'page-url': pageUrl } },
    );
}

test('upload sizes: free 10 MB, Personal 20 MB, Maker 100 MB; a larger file is 413 naming the limit and the plans that allow more', async () => {
  now = START;
  const free = await uploader({ plan: 'free' });
  assert.equal((await free(10 * MB)).status, 200);
  let res = await free(10 * MB + 1);
  assert.equal(res.status, 413);
  assert.equal(res.json.code, 'too-large', 'the code hyperclay-local’s host conformance page expects');
  assert.equal(res.json.limit, 'uploadSize');
  assert.equal(res.json.max, 10 * MB);
  assert.match(res.json.msg, /limited to 10 MB on the free plan/);
  assert.match(res.json.msg, /Upgrade to Personal \(20 MB\) or Maker \(100 MB\)/);

  const personal = await uploader({ plan: 'personal' });
  assert.equal((await personal(20 * MB)).status, 200);
  res = await personal(20 * MB + 1);
  assert.equal(res.status, 413);
  assert.equal(res.json.max, 20 * MB);
  assert.match(res.json.msg, /Upgrade to Maker \(100 MB\)/);

  const maker = await uploader({ plan: 'maker' });
  assert.equal((await maker(21 * MB)).status, 200);
  const m = await member({ plan: 'maker' });
  assert.equal((await plan(m.main)).uploadSize, 100 * MB);
});

test('allowances grow by one each whole calendar month active, up to the tier’s cap', async () => {
  now = START; // 31 January: months end on the last day of shorter months
  const personal = await member({ plan: 'personal' });
  const maker = await member({ plan: 'maker' });
  const free = await member({ plan: 'free' });
  const at = async (date: string) => {
    now = new Date(date);
    for (const m of [personal, maker, free]) await signInNow(m.main, m.person);
    const [p, k, f] = await Promise.all([plan(personal.main), plan(maker.main), plan(free.main)]);
    const maxes = (x: any) => [
      x.monthsActive,
      x.allowances.subdomains.max,
      x.allowances.customDomains.max,
      x.allowances.apps.max,
    ];
    return {
      p: maxes(p),
      k: maxes(k),
      f: maxes(f),
      pGrows: p.allowances.apps.growsAt,
      pDomainGrows: p.allowances.customDomains.growsAt,
    };
  };
  let r = await at('2026-01-31T12:00:00.000Z');
  assert.deepEqual(r.p, [0, 1, 1, 2]);
  assert.deepEqual(r.k, [0, 3, 2, 5]);
  assert.deepEqual(r.f, [0, 1, 0, 1]);
  assert.equal(r.pGrows, '2026-02-28T12:00:00.000Z');
  r = await at('2026-02-28T11:59:59.999Z');
  assert.deepEqual(r.p, [0, 1, 1, 2], 'not a whole month yet');
  r = await at('2026-02-28T12:00:00.000Z');
  assert.deepEqual(r.p, [1, 2, 2, 3]);
  assert.deepEqual(r.k, [1, 4, 3, 6]);
  assert.deepEqual(r.f, [0, 1, 0, 1], 'the free plan does not grow');
  assert.equal(r.pGrows, '2026-03-31T12:00:00.000Z');
  r = await at('2026-04-01T00:00:00.000Z');
  assert.deepEqual(r.p, [2, 3, 3, 4]);
  assert.equal(r.pDomainGrows, null, 'Personal custom domains are at their cap of 3');
  r = await at('2027-03-01T00:00:00.000Z');
  assert.deepEqual(r.p, [13, 5, 3, 10], 'Personal caps: 5 subdomains, 3 domains, 10 apps');
  assert.deepEqual(r.k, [13, 16, 10, 18]);
  assert.equal(r.pGrows, null);
  r = await at('2029-01-31T12:00:00.000Z');
  assert.deepEqual(r.k, [36, 20, 10, 41]);
  r = await at('2031-06-01T00:00:00.000Z');
  assert.equal(r.k[3], 50, 'Maker caps at 50 apps');
  now = START;

  // The calendar rule itself.
  assert.equal(addMonths(new Date('2026-01-31T00:00:00Z'), 1).toISOString(), '2026-02-28T00:00:00.000Z');
  assert.equal(addMonths(new Date('2028-01-31T00:00:00Z'), 1).toISOString(), '2028-02-29T00:00:00.000Z');
  const acct = {
    plan: 'personal' as const,
    hasActiveSubscription: true,
    planStartedAt: '2026-01-15T00:00:00.000Z',
    isSuperadmin: false,
  };
  assert.equal(monthsActive(acct, new Date('2026-03-14T23:59:59Z')), 1);
  assert.equal(monthsActive(acct, new Date('2026-03-15T00:00:00Z')), 2);
  assert.equal(
    monthsActive({ ...acct, hasActiveSubscription: false }, new Date('2027-01-01T00:00:00Z')),
    0,
    'a lapsed plan counts no months',
  );
});

test('multi-tenant apps: the allowance refuses one app too many, naming the limit and when it grows; a month later it is allowed', async () => {
  now = START;
  const enable = (c: Client, id: number) => c.post(`/_/dashboard/nodes/${id}/app`, { enableSignups: true }, ajax);
  const site = async (c: Client, name: string) => {
    const res = await createSite(c, name);
    assert.equal(res.status, 201, res.text);
    return res.json.node.id as number;
  };

  const free = await member({ plan: 'free' });
  assert.equal((await enable(free.main, await site(free.main, `fa-${free.person.id}-1.html`))).status, 200);
  const first = await site(free.main, `fa-${free.person.id}-2.html`);
  let res = await enable(free.main, first);
  assert.equal(res.status, 403);
  assert.equal(res.json.code, 'quota-exceeded');
  assert.equal(res.json.limit, 'apps');
  assert.match(res.json.msg, /Free plan allows 1 multi-tenant app and this account has 1/);
  assert.match(
    res.json.msg,
    /upgrade to Personal \(2, growing by 1 each month up to 10\) or Maker \(5, growing by 1 each month up to 50\)/,
  );
  // Browsers get the dashboard back with the message.
  const browser = await free.main.post(
    `/_/dashboard/nodes/${first}/app`,
    { enableSignups: 'true' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(browser.status, 302);
  assert.match(new URL(browser.headers.location!, 'http://x').searchParams.get('msg')!, /allows 1 multi-tenant app/);

  const personal = await member({ plan: 'personal' });
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await site(personal.main, `pa-${personal.person.id}-${i}.html`));
  assert.equal((await enable(personal.main, ids[0])).status, 200);
  assert.equal((await enable(personal.main, ids[1])).status, 200);
  assert.equal((await enable(personal.main, ids[1])).status, 200, 'enabling an app again is not a new one');
  res = await enable(personal.main, ids[2]);
  assert.equal(res.status, 403);
  assert.equal(res.json.max, 2);
  assert.equal(res.json.growsAt, '2026-02-28T12:00:00.000Z');
  assert.match(res.json.msg, /Personal plan allows 2 multi-tenant apps after 0 months active and this account has 2/);
  assert.match(res.json.msg, /grows by 1 on 2026-02-28 \(up to 10\)/);
  assert.match(res.json.msg, /upgrade to Maker/);

  now = new Date('2026-02-28T12:00:00.000Z');
  await signInNow(personal.main, personal.person);
  assert.equal((await enable(personal.main, ids[2])).status, 200);
  now = START;
});

test('custom domains: none on the free plan (402 payment-required), then the allowance (403 quota-exceeded) until it grows', async () => {
  now = START;
  const s = kiln.services;
  const refusal = async (id: number) => {
    try {
      await assertCanAddCustomDomain(s, id);
      return null;
    } catch (err) {
      assert.ok(err instanceof KilnError);
      return err;
    }
  };
  const addRow = (accountId: number, domain: string, status: 'pending' | 'failed' = 'pending') =>
    s.database.db
      .insertInto('domains')
      .values({
        account_id: accountId,
        domain,
        status,
        ssl_status: null,
        provider_id: null,
        dns_instructions: '{}',
        created_at: START.toISOString(),
      })
      .execute();

  const free = await createPerson(s, newPerson({ plan: 'free' }));
  const none = (await refusal(free.id))!;
  assert.equal(none.status, 402);
  assert.equal(none.code, 'payment-required');
  assert.equal(none.extra?.limit, 'customDomains');
  assert.match(
    none.message,
    /Free plan includes no custom domains\. Upgrade to Personal \(1, growing by 1 each month up to 3\) or Maker/,
  );

  const personal = await createPerson(s, newPerson({ plan: 'personal' }));
  assert.equal(await refusal(personal.id), null);
  await addRow(personal.id, `a${personal.id}.example.com`);
  await addRow(personal.id, `f${personal.id}.example.com`, 'failed'); // failed ones do not count
  const full = (await refusal(personal.id))!;
  assert.equal(full.status, 403);
  assert.equal(full.code, 'quota-exceeded');
  assert.match(full.message, /allows 1 custom domain after 0 months active and this account has 1/);
  assert.match(full.message, /remove a domain first/);
  now = new Date('2026-02-28T12:00:00.000Z');
  assert.equal(await refusal(personal.id), null);

  // A lapsed subscription is the free plan's none, and the message says so.
  await s.database.db
    .updateTable('accounts')
    .set({ has_active_subscription: 0 })
    .where('id', '=', personal.id)
    .execute();
  const lapsed = (await refusal(personal.id))!;
  assert.equal(lapsed.status, 402);
  assert.match(lapsed.message, /Personal subscription has ended; renew it/);
  now = START;
});
