// Custom domains through HTTP: adding one (pending, DNS instructions), the provider's HMAC-signed
// webhook driving pending → verifying → active → SSL issued (and failed), Caddy's `ask` endpoint,
// documents served on an active domain only, a sign-in there (__Host-auth_token SameSite=None, Secure, scoped
// to the domain), and the 10-calls-a-minute limit of the domain API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import type { Client } from './support/client.ts';
import { signDomainWebhook } from '../src/domains/webhook.ts';
import { checkHostname } from '../src/domains/hostname.ts';

const SECRET = 'test-domain-webhook-secret';
let kiln: TestKiln;
/** The server's clock runs this far ahead of the wall clock (to let in-memory rate-limit windows pass). */
let offsetMs = 0;
before(async () => {
  kiln = await startKiln({
    env: { DOMAIN_WEBHOOK_SECRET: SECRET },
    clock: { now: () => new Date(Date.now() + offsetMs) },
  });
});
after(() => kiln.stop());

let n = 0;
const uniqueDomain = () => `docs-${process.pid}-${++n}.example.com`;
const doc = (text: string) => `<!doctype html>\n<html><body><p>${text}</p></body></html>\n`;

/** A developer on a paid plan (custom domains are a paid allowance). */
async function dev() {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  return { me, main };
}

/** Sends a provider event, signed (or as given). */
function webhook(body: object | string, signature?: string | null, client: Client = kiln.client()) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const sig = signature === undefined ? signDomainWebhook(SECRET, raw) : signature;
  if (sig !== null) headers['x-kiln-signature'] = sig;
  return client.post('/_/webhooks/domains', raw, { headers });
}

let eventNo = 0;
const event = (type: string, domain: string, extra: object = {}) => ({
  id: `evt_${process.pid}_${++eventNo}`,
  type,
  domain,
  ...extra,
});

async function addDomain(main: Client, domain: string) {
  const res = await main.post('/_/dashboard/domains', { domain });
  assert.equal(res.status, 201, res.text);
  return res.json.domain;
}

test('adding a domain: 201 pending with DNS instructions (CNAME to the root domain, TXT value); the page shows them; names are checked; one owner per domain (409)', async () => {
  const { main } = await dev();
  const name = uniqueDomain();
  const res = await main.post('/_/dashboard/domains', { domain: `  ${name.toUpperCase()}. ` });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.json.msgType, 'success');
  const d = res.json.domain;
  assert.equal(d.domain, name, 'normalized: trimmed, lowercase, no trailing dot');
  assert.equal(d.status, 'pending');
  assert.equal(d.sslStatus, null);
  assert.deepEqual(d.dns.cname, { type: 'CNAME', name, value: kiln.config.rootHostname });
  assert.equal(d.dns.txt.type, 'TXT');
  assert.equal(d.dns.txt.name, `_kiln-verification.${name}`);
  assert.match(d.dns.txt.value, /^kiln-verification=[0-9a-f]{32}$/);

  const list = await main.get('/_/dashboard/domains');
  assert.equal(list.status, 200);
  assert.deepEqual(list.json.domains, [d]);
  const page = await main.page('/_/dashboard/domains');
  assert.equal(page.status, 200);
  assert.ok(page.text.includes(d.dns.txt.value), 'the TXT value is on the page');
  assert.match(page.text, /data-status="pending"/);

  // Another account cannot take it; the same account cannot add it twice.
  const other = await dev();
  const taken = await other.main.post('/_/dashboard/domains', { domain: name });
  assert.equal(taken.status, 409);
  assert.equal(taken.json.code, 'domain-taken');
  assert.equal((await main.post('/_/dashboard/domains', { domain: name })).status, 409);

  // Invalid names: 400 through HTTP (a few: each call counts against the per-minute limit), the rest
  // straight through the same check.
  for (const bad of ['https://x.example.com', 'nodots', `a.${kiln.config.rootHostname}`, '1.2.3.4']) {
    const r = await other.main.post('/_/dashboard/domains', { domain: bad });
    assert.equal(r.status, 400, `${bad}: ${r.text}`);
    assert.equal(r.json.code, 'invalid-domain');
  }
  for (const bad of [
    '',
    'localhost',
    'x.localhost',
    'x.example.com/path',
    'x.example.com:8443',
    'me@x.example.com',
    '-x.example.com',
    'x-.example.com',
    'x..example.com',
    'x_y.example.com',
    `${'a'.repeat(64)}.example.com`,
    `${'a.'.repeat(127)}com`,
  ]) {
    assert.equal(checkHostname(bad, kiln.config.rootHostname).ok, false, bad);
  }
  assert.deepEqual(checkHostname('bücher.example', 'kiln.localhost'), { ok: true, domain: 'xn--bcher-kva.example' });
  assert.deepEqual(checkHostname('xn--bcher-kva.example', 'kiln.localhost'), {
    ok: true,
    domain: 'xn--bcher-kva.example',
  });

  // Strangers and app users may not manage domains.
  assert.equal((await kiln.client().post('/_/dashboard/domains', { domain: uniqueDomain() })).status, 401);
  const appUser = kiln.client();
  await signedIn(kiln, appUser, { accountType: 'app_user' });
  assert.equal((await appUser.post('/_/dashboard/domains', { domain: uniqueDomain() })).status, 403);
});

test('each state through the signed webhook: pending → verifying → active (sslStatus pending) → ssl issued; served only when active; ask answers 200 only then', async () => {
  const { me, main } = await dev();
  await main.post('/_/dashboard/nodes', { type: 'site', name: 'index.html', html: doc('home') });
  const appName = `app-${me.username}.html`;
  await main.post('/_/dashboard/nodes', { type: 'site', name: appName, html: doc('app') });
  const name = uniqueDomain();
  const added = await addDomain(main, name);
  const visitor = kiln.client(name);
  const ask = (domain: string) =>
    kiln.client('127.0.0.1:8080').get(`/_/domains/ask?domain=${encodeURIComponent(domain)}`);

  // pending: not served, not asked for.
  assert.equal((await visitor.get('/')).status, 404);
  assert.equal((await ask(name)).status, 404);

  let res = await webhook(event('dns.verifying', name));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.outcome, 'applied');
  assert.equal(res.json.domain.status, 'verifying');
  assert.equal((await visitor.get('/')).status, 404);
  assert.equal((await ask(name)).status, 404);

  // SSL cannot be issued before DNS is verified: 409, nothing changes.
  res = await webhook(event('ssl.issued', name));
  assert.equal(res.status, 409);
  assert.equal(res.json.code, 'invalid-transition');

  res = await webhook(event('dns.verified', name, { providerId: 'prov-123' }));
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.domain.status, 'active');
  assert.equal(res.json.domain.sslStatus, 'pending');
  assert.equal(res.json.domain.providerId, 'prov-123');
  assert.equal((await ask(name)).status, 200);
  assert.equal((await ask(`${name.toUpperCase()}.`)).status, 200);

  // Served: the account's documents at the custom domain.
  const home = await visitor.get('/');
  assert.equal(home.status, 200);
  assert.equal(home.text, doc('home'));
  assert.equal((await visitor.get(`/${appName}`)).text, doc('app'));

  res = await webhook(event('ssl.issued', name));
  assert.equal(res.status, 200);
  assert.equal(res.json.domain.status, 'active');
  assert.equal(res.json.domain.sslStatus, 'issued');
  // The same news again (a new event id) changes nothing.
  res = await webhook(event('ssl.issued', name));
  assert.equal(res.json.outcome, 'unchanged');
  res = await webhook(event('dns.verified', name));
  assert.equal(res.json.outcome, 'unchanged');
  assert.equal(res.json.domain.sslStatus, 'issued', 'a repeated DNS verification does not reset SSL');

  const list = await main.get('/_/dashboard/domains');
  const mine = list.json.domains.find((d: { id: number }) => d.id === added.id);
  assert.equal(mine.status, 'active');
  assert.equal(mine.sslStatus, 'issued');

  // DNS failing later stops serving; verification brings it back.
  res = await webhook(event('dns.failed', name));
  assert.equal(res.json.domain.status, 'failed');
  assert.equal((await visitor.get('/')).status, 404);
  assert.equal((await ask(name)).status, 404);
  res = await webhook(event('dns.verified', name));
  assert.equal(res.json.domain.status, 'active');
  assert.equal((await visitor.get('/')).status, 200);

  // Removing it stops serving at once.
  const removed = await main.post(`/_/dashboard/domains/${added.id}/delete`);
  assert.equal(removed.status, 200, removed.text);
  assert.equal((await visitor.get('/')).status, 404);
  assert.equal((await ask(name)).status, 404);
  assert.equal((await webhook(event('dns.verified', name))).status, 404, 'events for unknown domains are refused');
});

test('webhook signatures: missing or wrong → 401 and no change; a replayed event id → no change; malformed bodies 400; no secret configured → 503', async () => {
  const { main } = await dev();
  const name = uniqueDomain();
  const added = await addDomain(main, name);
  const ev = event('dns.verified', name);
  const raw = JSON.stringify(ev);
  const statusNow = async () =>
    (
      await kiln.services.database.db
        .selectFrom('domains')
        .select('status')
        .where('id', '=', added.id)
        .executeTakeFirstOrThrow()
    ).status;

  let res = await webhook(raw, null);
  assert.equal(res.status, 401);
  assert.equal(res.json.code, 'missing-signature');
  for (const sig of [
    signDomainWebhook('another-secret', raw),
    signDomainWebhook(SECRET, `${raw} `), // the signature of other bytes
    signDomainWebhook(SECRET, raw).replace('sha256=', 'sha1='),
    signDomainWebhook(SECRET, raw).slice(0, -2),
    `sha256=${'0'.repeat(64)}`,
    'garbage',
  ]) {
    res = await webhook(raw, sig);
    assert.equal(res.status, 401, sig);
    assert.equal(await statusNow(), 'pending', 'no state change');
  }
  // The exact bytes are signed: the same JSON re-serialized with other spacing is another body.
  res = await webhook(JSON.stringify(ev, null, 2), signDomainWebhook(SECRET, raw));
  assert.equal(res.status, 401);
  assert.equal(await statusNow(), 'pending');

  res = await webhook(raw);
  assert.equal(res.status, 200, res.text);
  assert.equal(await statusNow(), 'active');
  await webhook(event('dns.failed', name));
  assert.equal(await statusNow(), 'failed');
  // Replaying the captured (validly signed) verification changes nothing.
  res = await webhook(raw);
  assert.equal(res.status, 200);
  assert.equal(res.json.outcome, 'duplicate');
  assert.equal(await statusNow(), 'failed');

  for (const [body, code] of [
    ['not json', 'invalid-body'],
    [JSON.stringify({ type: 'dns.verified', domain: name }), 'invalid'],
    [JSON.stringify({ id: 'x', type: 'dns.exploded', domain: name }), 'invalid'],
  ]) {
    res = await webhook(body);
    assert.equal(res.status, 400, body);
    assert.equal(res.json.code, code, body);
  }

  const bare = await startKiln();
  try {
    const r = await bare.client().post('/_/webhooks/domains', raw, {
      headers: { 'content-type': 'application/json', 'x-kiln-signature': signDomainWebhook(SECRET, raw) },
    });
    assert.equal(r.status, 503);
    assert.equal(r.json.code, 'webhook-not-configured');
  } finally {
    await bare.stop();
  }
});

test('the plan’s custom-domain allowance: none on the free plan (402), Maker starts with 2 (the third: 403 quota-exceeded); removing one makes room', async () => {
  const free = kiln.client();
  await signedIn(kiln, free);
  const r = await free.post('/_/dashboard/domains', { domain: uniqueDomain() });
  assert.equal(r.status, 402, r.text);
  assert.equal(r.json.code, 'payment-required');
  assert.equal(r.json.limit, 'customDomains');

  const { main } = await dev();
  const first = await addDomain(main, uniqueDomain());
  await addDomain(main, uniqueDomain());
  const third = await main.post('/_/dashboard/domains', { domain: uniqueDomain() });
  assert.equal(third.status, 403, third.text);
  assert.equal(third.json.code, 'quota-exceeded');
  assert.match(third.json.msg, /custom domains/);
  assert.equal((await main.post(`/_/dashboard/domains/${first.id}/delete`)).status, 200);
  await addDomain(main, uniqueDomain());
});

test('ask endpoint: 200 for the root domain and existing document hosts, 404 for unknown hosts, 400 without a domain', async () => {
  const { me } = await dev();
  const c = kiln.client('127.0.0.1:8080');
  assert.equal((await c.get(`/_/domains/ask?domain=${kiln.config.rootHostname}`)).status, 200);
  assert.equal((await c.get(`/_/domains/ask?domain=${me.username}.${kiln.config.rootHostname}`)).status, 200);
  assert.equal(
    (await c.get(`/_/domains/ask?domain=nobody-here-${process.pid}.${kiln.config.rootHostname}`)).status,
    404,
  );
  assert.equal((await c.get(`/_/domains/ask?domain=a.b.${kiln.config.rootHostname}`)).status, 404);
  assert.equal((await c.get('/_/domains/ask?domain=never-added.example.org')).status, 404);
  assert.equal((await c.get('/_/domains/ask')).status, 400);
});

test('the owner reaches an active custom domain through the session handshake: a host-only, Secure, HttpOnly cookie there; a private document is then theirs to see', async () => {
  const { me, main } = await dev();
  const created = await main.post('/_/dashboard/nodes', {
    type: 'site',
    name: `private-${me.username}.html`,
    html: doc('mine'),
  });
  await main.post(`/_/dashboard/nodes/${created.json.node.id}/visibility`, { visibility: 'private' });
  const name = uniqueDomain();
  await addDomain(main, name);
  assert.equal((await webhook(event('dns.verified', name))).status, 200);

  const browser = main.on(name);
  assert.equal((await browser.get(`/private-${me.username}.html`)).status, 404);
  // No password is typed on the custom domain: its sign-in page sends the browser to the main app.
  const login = await browser.page('/_/login');
  assert.equal(login.status, 302);
  assert.ok(login.headers.location!.startsWith(`${kiln.config.baseUrl}/_/session/start?host=${name}`));
  // The Domains page's link goes through the handshake.
  const page = await main.page('/_/dashboard/domains');
  assert.ok(page.text.includes(`/_/session/start?host=${name}&amp;return=%2F`));
  const start = await main.page(
    `/_/session/start?host=${name}&return=${encodeURIComponent(`/private-${me.username}.html`)}`,
  );
  assert.equal(start.status, 302);
  const grant = new URL(start.headers.location!);
  assert.equal(grant.hostname, name);
  const landed = await browser.page(grant.pathname + grant.search);
  assert.equal(landed.status, 302);
  const cookie = landed.setCookies.find((c) => c.startsWith('__Host-auth_token=') && !/Max-Age=0/i.test(c));
  assert.ok(cookie, landed.setCookies.join(' | '));
  assert.doesNotMatch(cookie, /; Domain=/i, 'host-only: this domain alone');
  assert.match(cookie, /; SameSite=Lax/i);
  assert.match(cookie, /; Secure/i);
  assert.match(cookie, /; HttpOnly/i);
  // (A test client sends Secure cookies over plain http; a browser would need the domain on TLS.)
  const mine = await browser.get(`/private-${me.username}.html`);
  assert.equal(mine.status, 200);
  assert.equal(mine.text, doc('mine'));
  assert.equal(browser.jar.get('isAdminOfCurrentResource', name), 'true');
  // A pending domain gets no handshake: the host is unknown.
  const pending = uniqueDomain();
  await addDomain(main, pending);
  assert.equal((await main.page(`/_/session/start?host=${pending}&return=/`)).status, 404);
  assert.equal((await kiln.client(pending).post('/_/login', { email: me.email, password: me.password })).status, 404);
});

test('domain management is limited to 10 calls a minute per user: the 11th answers 429 with Retry-After; other users are not affected', async () => {
  const a = await dev();
  const b = await dev();
  await addDomain(a.main, uniqueDomain());
  for (let i = 2; i <= 9; i++) {
    const r = await a.main.get('/_/dashboard/domains');
    assert.equal(r.status, 200, `call ${i}`);
  }
  const tenth = await a.main.get('/_/dashboard/domains');
  assert.equal(tenth.headers['ratelimit-limit'], '10');
  assert.equal(tenth.headers['ratelimit-remaining'], '0');
  const eleventh = await a.main.post('/_/dashboard/domains', { domain: uniqueDomain() });
  assert.equal(eleventh.status, 429);
  assert.equal(eleventh.json.code, 'rate-limited');
  const retry = Number(eleventh.headers['retry-after']);
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${eleventh.headers['retry-after']}`);
  assert.equal((await a.main.get('/_/dashboard/domains')).status, 429);
  assert.equal((await b.main.get('/_/dashboard/domains')).status, 200, 'per user');
  // In memory the window follows the server's clock: a minute later the calls are allowed again.
  // (Redis keeps the window on its own clock; the shared count itself is tested by the limiter's tests.)
  if (kiln.services.limiters.kind === 'memory') {
    offsetMs += 61_000;
    assert.equal((await a.main.get('/_/dashboard/domains')).status, 200);
  }
});
