// Payments: the Stripe webhook (signatures valid / invalid / missing / replayed), the Person a checkout
// creates, the welcome link mailed to the buyer, and what the end of a subscription changes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, newPerson } from './support/people.ts';
import { SyncApi } from './support/sync-client.ts';
import {
  WEBHOOK_SECRET,
  checkoutEvent,
  subscriptionEvent,
  deliver,
  mailsTo,
  welcomePath,
  newId,
} from './support/stripe.ts';
import { createPerson } from '../src/accounts/people.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln({ env: { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } });
  await signedIn(kiln, kiln.client()); // set up (the first account exists)
});
after(() => kiln.stop());

let n = 0;
const email = () => `buyer${process.pid}x${++n}@example.com`;

async function personByEmail(address: string) {
  return kiln.services.database.db
    .selectFrom('people')
    .innerJoin('accounts', 'accounts.id', 'people.account_id')
    .select([
      'accounts.id',
      'accounts.username',
      'accounts.plan',
      'accounts.has_active_subscription',
      'accounts.plan_started_at',
      'accounts.stripe_customer_id',
      'accounts.stripe_subscription_id',
      'people.password_hash',
      'people.email_confirmed',
      'people.account_type',
    ])
    .where('people.email', '=', address)
    .executeTakeFirst();
}

const eventRows = async (id: string) =>
  kiln.services.database.db.selectFrom('webhook_events').selectAll().where('event_id', '=', id).execute();

/** A completed checkout whose buyer chose a username and password through the mailed link. */
async function boughtAndWelcomed(plan = 'personal') {
  const address = email();
  const ev = checkoutEvent({ email: address, plan });
  assert.equal((await deliver(kiln, ev)).status, 200);
  const [mail] = await mailsTo(kiln, address);
  const browser = kiln.client();
  const username = `paid${process.pid.toString(36)}${++n}`;
  const password = `Paid-plan-pw-${n}-x9!`;
  const res = await browser.post(welcomePath(mail.text), { username, password });
  assert.equal(res.status, 200, res.text);
  const o = ev.data.object;
  return { address, username, password, browser, customer: o.customer, subscription: o.subscription };
}

test('a signed checkout.session.completed creates a developer with the paid plan, no password yet, and mails a welcome link', async () => {
  const address = email();
  const ev = checkoutEvent({ email: address, plan: 'maker' });
  const res = await deliver(kiln, ev);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(
    { received: res.json.received, duplicate: res.json.duplicate, action: res.json.action },
    { received: true, duplicate: false, action: 'person created' },
  );

  const p = (await personByEmail(address))!;
  assert.ok(p, 'person created');
  assert.equal(p.plan, 'maker');
  assert.equal(p.has_active_subscription, 1);
  assert.ok(p.plan_started_at);
  assert.equal(p.account_type, 'dev');
  assert.equal(p.password_hash, null);
  assert.equal(p.email_confirmed, 0);
  assert.equal(p.stripe_customer_id, ev.data.object.customer);
  assert.equal(p.stripe_subscription_id, ev.data.object.subscription);
  assert.match(p.username, /^pending--[0-9a-f]{16}$/, 'a placeholder username nobody can choose');

  const mails = await mailsTo(kiln, address);
  assert.equal(mails.length, 1);
  assert.match(mails[0].subject, /Maker/);
  assert.match(mails[0].text, new RegExp(`^${kiln.config.baseUrl.replace(/[.]/g, '\\.')}/_/welcome/`, 'm'));
  const token = await kiln.services.database.db
    .selectFrom('email_tokens')
    .select(['purpose', 'used_at'])
    .where('account_id', '=', p.id)
    .execute();
  assert.deepEqual(token, [{ purpose: 'checkout', used_at: null }]);
  assert.equal((await eventRows(ev.id)).length, 1);
});

test('the placeholder username cannot be signed into, chosen at signup or typed at login', async () => {
  const address = email();
  await deliver(kiln, checkoutEvent({ email: address }));
  const p = (await personByEmail(address))!;
  const login = await kiln.client().post('/_/login', { email: address, password: 'anything-at-all-1' });
  assert.equal(login.status, 401);
  const signup = await kiln
    .client()
    .post('/_/signup', { email: email(), username: 'pending--abc', password: 'Kiln-pw-long-enough-1' });
  assert.equal(signup.status, 400);
  assert.match(signup.json.msg, /two hyphens/);
  const byName = await kiln.client().post('/_/login', { username: p.username, password: 'anything-at-all-1' });
  assert.equal(byName.status, 401);
});

test('the welcome link: GET shows the form; bad input keeps the link; POST sets username and password and signs in; the link then is gone', async () => {
  const address = email();
  await deliver(kiln, checkoutEvent({ email: address, plan: 'personal' }));
  const path = welcomePath((await mailsTo(kiln, address))[0].text);

  const browser = kiln.client();
  const form = await browser.page(path);
  assert.equal(form.status, 200);
  assert.match(form.text, new RegExp(`action="${path}"`));
  assert.match(form.text, /name="username"/);
  assert.match(form.text, /name="password"/);
  assert.ok(form.text.includes(address));

  // Refusals leave the link usable: an invalid name (400), a common password (400), a taken username (409).
  const taken = await createPerson(kiln.services, newPerson());
  const HTML = { accept: 'text/html' };
  let res = await browser.post(
    path,
    { username: 'No Spaces', password: 'Fine-password-123' },
    { form: true, headers: HTML },
  );
  assert.equal(res.status, 302);
  assert.match(new URL(res.headers.location!, 'http://x').searchParams.get('msg')!, /Username may contain only/);
  res = await browser.post(
    path,
    { username: 'fresh-name', password: 'password' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(res.status, 400);
  res = await browser.post(path, { username: taken.username, password: 'Fine-password-123' });
  assert.equal(res.status, 409);
  assert.equal(res.json.code, 'username-taken');
  res = await browser.post(path, { username: 'pending--0123456789abcdef', password: 'Fine-password-123' });
  assert.equal(res.status, 400);

  const username = `welcomed${process.pid.toString(36)}${n}`;
  res = await browser.post(path, { username, password: 'Fine-password-123' }, { form: true, headers: HTML });
  assert.equal(res.status, 302);
  assert.equal(new URL(res.headers.location!, 'http://x').pathname, '/_/dashboard');
  assert.ok(browser.jar.get('__Host-auth_token', kiln.config.rootDomain), 'signed in');
  const dash = await browser.page('/_/dashboard');
  assert.equal(dash.status, 200);
  assert.ok(dash.text.includes(username));

  const p = (await personByEmail(address))!;
  assert.equal(p.username, username);
  assert.equal(p.email_confirmed, 1);
  assert.equal(p.has_active_subscription, 1);
  // The password works for a fresh sign-in, by email or by username.
  assert.equal((await kiln.client().post('/_/login', { email: address, password: 'Fine-password-123' })).status, 200);
  assert.equal((await kiln.client().post('/_/login', { username, password: 'Fine-password-123' })).status, 200);
  // The link is used up.
  assert.equal((await kiln.client().page(path)).status, 400);
  const again = await kiln.client().post(path, { username: `${username}x`, password: 'Fine-password-123' });
  assert.equal(again.status, 400);
  assert.equal(again.json.code, 'invalid-token');
  assert.equal((await kiln.client().page('/_/welcome/not-a-token')).status, 400);
});

test('signatures: a wrong secret, a changed body, a missing or malformed header are refused with 401 and change nothing', async () => {
  const address = email();
  const ev = checkoutEvent({ email: address });
  const cases: Array<[string, Parameters<typeof deliver>[2], string]> = [
    ['wrong secret', { secret: 'whsec_not_the_right_one' }, 'invalid-signature'],
    ['missing header', { signature: null }, 'missing-signature'],
    ['garbage header', { signature: 't=1,v1=deadbeef' }, 'invalid-signature'],
    [
      'body changed after signing',
      { body: JSON.stringify({ ...ev, data: { object: { ...ev.data.object, metadata: { plan: 'maker' } } } }) },
      'invalid-signature',
    ],
  ];
  for (const [name, opts, code] of cases) {
    const res = await deliver(kiln, ev, opts);
    assert.equal(res.status, 401, name);
    assert.equal(res.json.code, code, name);
    assert.equal(res.json.msgType, 'error', name);
  }
  // An old signature (outside Stripe's 5-minute tolerance) is refused too.
  const Stripe = (await import('stripe')).default;
  const payload = JSON.stringify(ev);
  const stale = new Stripe('sk_test_kiln').webhooks.generateTestHeaderString({
    payload,
    secret: WEBHOOK_SECRET,
    timestamp: Math.floor(Date.now() / 1000) - 3600,
  });
  assert.equal((await deliver(kiln, payload, { signature: stale })).status, 401);

  assert.equal(await personByEmail(address), undefined);
  assert.equal((await eventRows(ev.id)).length, 0);
  assert.equal((await mailsTo(kiln, address)).length, 0);
  // The same event, rightly signed, still works afterwards.
  assert.equal((await deliver(kiln, ev)).status, 200);
  assert.ok(await personByEmail(address));
});

test('a Kiln without STRIPE_WEBHOOK_SECRET refuses every webhook', async () => {
  const bare = await startKiln();
  try {
    const address = email();
    const res = await deliver(bare, checkoutEvent({ email: address }));
    assert.equal(res.status, 503);
    assert.equal(res.json.code, 'webhook-not-configured');
    const row = await bare.services.database.db
      .selectFrom('people')
      .select('account_id')
      .where('email', '=', address)
      .executeTakeFirst();
    assert.equal(row, undefined);
  } finally {
    await bare.stop();
  }
});

test('replays of one event id change nothing: sequential and concurrent deliveries make one person and one mail', async () => {
  const address = email();
  const ev = checkoutEvent({ email: address, plan: 'personal' });
  const first = await deliver(kiln, ev);
  assert.equal(first.json.duplicate, false);
  const again = await deliver(kiln, ev);
  assert.equal(again.status, 200);
  assert.equal(again.json.duplicate, true);
  const burst = await Promise.all(Array.from({ length: 6 }, () => deliver(kiln, ev)));
  assert.deepEqual(
    burst.map((r) => [r.status, r.json.duplicate]),
    Array.from({ length: 6 }, () => [200, true]),
  );
  assert.equal((await mailsTo(kiln, address)).length, 1);
  assert.equal(
    (await kiln.services.database.db.selectFrom('people').select('account_id').where('email', '=', address).execute())
      .length,
    1,
  );

  // A new event for a second concurrent burst: exactly one delivery does the work.
  const other = email();
  const ev2 = checkoutEvent({ email: other });
  const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(kiln, ev2)));
  assert.deepEqual(
    answers.map((r) => r.status),
    [200, 200, 200, 200, 200],
  );
  assert.equal(answers.filter((r) => r.json.duplicate === false).length, 1);
  assert.equal((await mailsTo(kiln, other)).length, 1);

  // A replay after the buyer was welcomed does not reset anything either.
  const done = await boughtAndWelcomed();
  const p = (await personByEmail(done.address))!;
  const evs = await kiln.services.database.db.selectFrom('webhook_events').select('event_id').execute();
  assert.ok(evs.length >= 3);
  assert.equal(p.username, done.username);
});

test('the plan comes from metadata, else from the amount paid (6/48 Personal, 15/120 Maker), else Personal', async () => {
  const cases: Array<[{ plan?: string; amount?: number }, string]> = [
    [{ plan: 'maker' }, 'maker'],
    [{ plan: 'Personal' }, 'personal'],
    [{ amount: 1500 }, 'maker'],
    [{ amount: 12000 }, 'maker'],
    [{ amount: 600 }, 'personal'],
    [{ amount: 4800 }, 'personal'],
    [{ amount: 999 }, 'personal'],
    [{}, 'personal'],
    [{ plan: 'free', amount: 1500 }, 'maker'],
  ];
  for (const [o, plan] of cases) {
    const address = email();
    assert.equal((await deliver(kiln, checkoutEvent({ email: address, ...o }))).status, 200);
    assert.equal((await personByEmail(address))!.plan, plan, JSON.stringify(o));
  }
});

test('a checkout by someone who already has an account upgrades it in place and says so by mail', async () => {
  const free = await createPerson(kiln.services, newPerson({ plan: 'free' }));
  const res = await deliver(kiln, checkoutEvent({ email: free.email, plan: 'maker' }));
  assert.equal(res.json.action, 'account upgraded');
  const p = (await personByEmail(free.email))!;
  assert.equal(p.username, free.username);
  assert.equal(p.plan, 'maker');
  assert.equal(p.has_active_subscription, 1);
  assert.notEqual(p.password_hash, null);
  const mails = await mailsTo(kiln, free.email);
  assert.equal(mails.length, 1);
  assert.match(mails[0].subject, /Maker plan is active/);
  assert.doesNotMatch(mails[0].text, /welcome/);
});

test('a session still unpaid waits: nothing is created until the payment succeeds', async () => {
  const address = email();
  const ev = checkoutEvent({ email: address, paymentStatus: 'unpaid' });
  assert.equal((await deliver(kiln, ev)).status, 200);
  assert.equal(await personByEmail(address), undefined);
  const succeeded = {
    ...ev,
    id: newId('evt'),
    type: 'checkout.session.async_payment_succeeded',
    data: { object: { ...ev.data.object, payment_status: 'paid' } },
  };
  assert.equal((await deliver(kiln, succeeded)).json.action, 'person created');
  assert.equal((await personByEmail(address))!.has_active_subscription, 1);
});

test('subscription end clears the flag: sync keys then list, read and delete, but writes answer 402; renewal restores them', async () => {
  const buyer = await boughtAndWelcomed('personal');
  // The buyer generates a sync key in the dashboard (a paid plan of their own).
  const gen = await buyer.browser.post('/_/dashboard/keys', {}, { headers: { 'x-requested-with': 'fetch' } });
  assert.equal(gen.status, 201, gen.text);
  const api = new SyncApi({ port: Number(new URL(kiln.url).port), host: kiln.config.rootDomain, apiKey: gen.json.key });
  const a = await api.create({
    type: 'site',
    name: `${buyer.username}-a.html`,
    parentId: 0,
    content: '<html><p>a</p></html>',
  });
  const b = await api.create({
    type: 'site',
    name: `${buyer.username}-b.html`,
    parentId: 0,
    content: '<html><p>b</p></html>',
  });
  assert.ok((await api.upload(a.id, '<html><p>a2</p></html>')).etag);

  // An update that keeps the subscription active changes nothing.
  let res = await deliver(
    kiln,
    subscriptionEvent('customer.subscription.updated', {
      subscription: buyer.subscription,
      customer: buyer.customer,
      status: 'past_due',
    }),
  );
  assert.equal(res.json.action, 'subscription active');
  assert.equal(
    (await api.raw('PUT', `/nodes/${a.id}/content`, { body: { content: '<html><p>a3</p></html>' } })).status,
    200,
  );

  res = await deliver(
    kiln,
    subscriptionEvent('customer.subscription.deleted', {
      subscription: buyer.subscription,
      customer: buyer.customer,
      status: 'canceled',
    }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.json.action, 'subscription ended');
  const p = (await personByEmail(buyer.address))!;
  assert.equal(p.has_active_subscription, 0);
  assert.equal(p.plan, 'personal', 'the tier bought is remembered for a renewal');

  const put = await api.raw('PUT', `/nodes/${a.id}/content`, { body: { content: '<html><p>after</p></html>' } });
  assert.equal(put.status, 402);
  assert.equal(put.json.code, 'payment-required');
  assert.equal(
    (
      await api.raw('POST', '/nodes', {
        body: { type: 'site', name: `${buyer.username}-c.html`, parentId: 0, content: 'x' },
      })
    ).status,
    402,
  );
  assert.equal(
    (await api.raw('PATCH', `/nodes/${b.id}/rename`, { body: { newName: `${buyer.username}-b2.html` } })).status,
    402,
  );
  // Listing, reading and deleting still work.
  assert.equal((await api.list()).nodes.length, 2);
  assert.equal((await api.download(a.id)).content, '<html><p>a3</p></html>');
  await api.delete(b.id);
  assert.equal((await api.list()).nodes.length, 1);
  // No new key, and the dashboard's plan page says the subscription ended.
  const again = await buyer.browser.post('/_/dashboard/keys', {}, { headers: { 'x-requested-with': 'fetch' } });
  assert.equal(again.status, 402);
  const plan = await buyer.browser.get('/_/billing');
  assert.equal(plan.json.plan.effectivePlan, 'free');
  assert.equal(plan.json.plan.hasActiveSubscription, false);
  assert.match((await buyer.browser.page('/_/billing')).text, /subscription has ended/);

  // A replayed end event changes nothing; a renewal (updated → active) restores writing.
  res = await deliver(
    kiln,
    subscriptionEvent('customer.subscription.updated', {
      subscription: buyer.subscription,
      customer: buyer.customer,
      status: 'active',
    }),
  );
  assert.equal(res.json.action, 'subscription active');
  assert.equal((await personByEmail(buyer.address))!.has_active_subscription, 1);
  assert.equal(
    (await api.raw('PUT', `/nodes/${a.id}/content`, { body: { content: '<html><p>renewed</p></html>' } })).status,
    200,
  );

  // updated with a non-active status ends it too.
  res = await deliver(
    kiln,
    subscriptionEvent('customer.subscription.updated', {
      subscription: buyer.subscription,
      customer: buyer.customer,
      status: 'unpaid',
    }),
  );
  assert.equal(res.json.action, 'subscription ended');
  assert.equal(
    (await api.raw('PUT', `/nodes/${a.id}/content`, { body: { content: '<html><p>x</p></html>' } })).status,
    402,
  );
});

test('subscription events find the account by customer id; another subscription of the same customer, or an unknown one, changes nothing', async () => {
  const buyer = await boughtAndWelcomed('maker');
  let res = await deliver(
    kiln,
    subscriptionEvent('customer.subscription.deleted', {
      subscription: newId('sub'),
      customer: buyer.customer,
      status: 'canceled',
    }),
  );
  assert.match(res.json.action, /another subscription/);
  assert.equal((await personByEmail(buyer.address))!.has_active_subscription, 1);
  res = await deliver(
    kiln,
    subscriptionEvent('customer.subscription.deleted', {
      subscription: newId('sub'),
      customer: newId('cus'),
      status: 'canceled',
    }),
  );
  assert.match(res.json.action, /no account/);
  // The plan follows a subscription change to another price.
  res = await deliver(
    kiln,
    subscriptionEvent('customer.subscription.updated', {
      subscription: buyer.subscription,
      customer: buyer.customer,
      status: 'active',
      unitAmount: 600,
    }),
  );
  assert.equal((await personByEmail(buyer.address))!.plan, 'personal');
  // Unknown event types are acknowledged.
  res = await deliver(kiln, {
    id: newId('evt'),
    object: 'event',
    type: 'invoice.paid',
    data: { object: { id: newId('in'), object: 'invoice' } },
  });
  assert.equal(res.status, 200);
  assert.equal(res.json.action, 'ignored');
});

test('a checkout by another Stripe customer never takes over an account that already has an active subscription', async () => {
  const buyer = await boughtAndWelcomed('maker');
  const before = (await personByEmail(buyer.address))!;
  const stranger = checkoutEvent({ email: buyer.address, plan: 'personal' });
  const res = await deliver(kiln, stranger);
  assert.equal(res.status, 200, res.text);
  assert.match(res.json.action, /^ignored/);
  assert.deepEqual(await personByEmail(buyer.address), before, 'nothing changed on the account');
  // The stranger's subscription events then cannot end the account's plan.
  await deliver(
    kiln,
    subscriptionEvent('customer.subscription.deleted', {
      subscription: stranger.data.object.subscription,
      customer: stranger.data.object.customer,
      status: 'canceled',
    }),
  );
  assert.equal((await personByEmail(buyer.address))!.has_active_subscription, 1);
  const mails = await mailsTo(kiln, buyer.address);
  assert.match(mails.at(-1)!.subject, /not applied/);
  // The same customer buying again (e.g. another tier) still upgrades in place.
  const again = await deliver(
    kiln,
    checkoutEvent({
      email: buyer.address,
      plan: 'personal',
      customer: buyer.customer,
      subscription: buyer.subscription,
    }),
  );
  assert.equal(again.json.action, 'account upgraded');
  assert.equal((await personByEmail(buyer.address))!.plan, 'personal');
});
