// Payments out, against a local stand-in for the Stripe API (the stripe package pointed at it with
// STRIPE_API_URL; every request it receives is recorded and asserted), never the internet: the billing
// page's buttons create Checkout sessions for a plan (303 to Stripe's address), and open the Customer
// Portal of an account that has a Stripe customer; without a key the answer is 503.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';

interface Recorded {
  method: string;
  path: string;
  auth: string;
  body: URLSearchParams;
}
const recorded: Recorded[] = [];
let standIn: http.Server;
let kiln: TestKiln;
let unconfigured: TestKiln;

before(async () => {
  standIn = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      recorded.push({
        method: req.method!,
        path: req.url!,
        auth: req.headers.authorization ?? '',
        body: new URLSearchParams(raw),
      });
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/checkout/sessions')
        return res.end(
          JSON.stringify({
            id: 'cs_test_1',
            object: 'checkout.session',
            url: 'https://checkout.stripe.test/c/pay/cs_test_1',
          }),
        );
      if (req.url === '/v1/billing_portal/sessions')
        return res.end(
          JSON.stringify({
            id: 'bps_test_1',
            object: 'billing_portal.session',
            url: 'https://billing.stripe.test/p/session/1',
          }),
        );
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'no such route' } }));
    });
  });
  await new Promise<void>((r) => standIn.listen(0, '127.0.0.1', r));
  const port = (standIn.address() as AddressInfo).port;
  kiln = await startKiln({
    env: {
      STRIPE_SECRET_KEY: 'sk_test_standin',
      STRIPE_PRICE_PERSONAL: 'price_personal_test',
      STRIPE_PRICE_MAKER: 'price_maker_test',
      STRIPE_API_URL: `http://127.0.0.1:${port}`,
    },
  });
  unconfigured = await startKiln();
});
after(async () => {
  await kiln.stop();
  await unconfigured.stop();
  standIn.close();
});

const json = { headers: { accept: 'application/json' } };

test('the billing page offers the plans; buying one creates a Checkout session at Stripe and sends the browser there', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'free' });
  const page = cheerio.load((await main.page('/_/billing')).text);
  assert.deepEqual(
    page('form[action="/_/billing/checkout"] input[name=plan]')
      .map((_, e) => page(e).attr('value'))
      .get(),
    ['personal', 'maker'],
  );
  assert.equal(page('form[action="/_/billing/portal"]').length, 0, 'nothing to manage yet');
  // Prices carry their currency (CURRENCY, USD by default).
  assert.match(
    page('main').text(),
    /Personal: \$6 \/ month or \$48 \/ year\.\s+Maker: \$15 \/ month or \$120 \/ year\./,
  );

  const res = await main.post(
    '/_/billing/checkout',
    { plan: 'maker' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(res.status, 303);
  assert.equal(res.headers.location, 'https://checkout.stripe.test/c/pay/cs_test_1');
  const call = recorded.at(-1)!;
  assert.equal(call.method, 'POST');
  assert.equal(call.path, '/v1/checkout/sessions');
  assert.equal(call.auth, 'Bearer sk_test_standin');
  assert.equal(call.body.get('mode'), 'subscription');
  assert.equal(call.body.get('line_items[0][price]'), 'price_maker_test');
  assert.equal(call.body.get('customer_email'), me.email);
  assert.equal(call.body.get('metadata[plan]'), 'maker', 'the webhook reads the plan from here');
  assert.equal(call.body.get('client_reference_id'), String(me.id));
  assert.match(call.body.get('success_url')!, /\/_\/billing\?checkout=done$/);

  assert.equal((await main.post('/_/billing/checkout', { plan: 'gold' }, json)).status, 400);
  assert.equal((await kiln.client().post('/_/billing/checkout', { plan: 'maker' }, json)).status, 401);
});

test('the Customer Portal opens for an account with a Stripe customer; without payments configured it is 503', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'personal' });
  assert.equal((await main.post('/_/billing/portal', {}, json)).status, 400, 'no customer yet');
  await kiln.services.database.db
    .updateTable('accounts')
    .set({ stripe_customer_id: 'cus_test_42' })
    .where('id', '=', me.id)
    .execute();
  const page = cheerio.load((await main.page('/_/billing')).text);
  assert.equal(page('form[action="/_/billing/portal"]').length, 1);
  const res = await main.post('/_/billing/portal', {}, json);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.url, 'https://billing.stripe.test/p/session/1');
  const call = recorded.at(-1)!;
  assert.equal(call.path, '/v1/billing_portal/sessions');
  assert.equal(call.body.get('customer'), 'cus_test_42');
  assert.match(call.body.get('return_url')!, /\/_\/billing$/);

  const other = unconfigured.client();
  await signedIn(unconfigured, other);
  const refused = await other.post('/_/billing/checkout', { plan: 'maker' }, json);
  assert.equal(refused.status, 503);
  assert.equal(refused.json.code, 'payments-not-configured');
  assert.match((await other.page('/_/billing')).text, /Plans are given by the administrator/);
});
