// Rate limits through HTTP: the general limiter (100 requests / 15 minutes per client address on the
// account pages and anonymous writes), the strict limiter (5 an hour: signup, sync-key generation,
// share-token regeneration), their headers, what they leave alone (documents, sync keys, signed-in
// work, webhooks), and their windows on an injected clock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { newPerson, sessionsFor, storeSessions, actingAs } from './support/people.ts';
import type { Res } from './support/client.ts';
import type { Clock } from '../src/clock.ts';
import { createPerson, type NewPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { createNode } from '../src/nodes/tree.ts';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../src/paths.ts';

let now = new Date('2026-06-01T08:00:00.000Z');
const clock: Clock = { now: () => new Date(now) };
let kiln: TestKiln;
before(async () => {
  kiln = await startKiln({ clock, env: { STRIPE_WEBHOOK_SECRET: 'whsec_ratelimit_test' } });
  await createPerson(kiln.services, newPerson()); // set up
});
after(() => kiln.stop());

const MEMORY = storage === 'sqlite';
const ajax = { 'x-requested-with': 'fetch' };

async function member(over: Partial<NewPerson> = {}) {
  const input = newPerson(over);
  const person = await createPerson(kiln.services, input);
  const main = kiln.client();
  storeSessions(
    main.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, person.id, person.username, clock.now()),
  );
  return { person, main, input };
}

/** Five sign-ups from one address: the strict limiter's whole hour. */
async function signUpFive(visitor: ReturnType<TestKiln['client']>) {
  for (let i = 0; i < 5; i++) {
    const p = newPerson();
    assert.equal(
      (await visitor.post('/_/signup', { email: p.email, username: p.username, password: p.password })).status,
      201,
    );
  }
}

function limitHeaders(res: Res) {
  return {
    limit: res.headers['ratelimit-limit'],
    remaining: res.headers['ratelimit-remaining'],
    reset: res.headers['ratelimit-reset'],
    policy: res.headers['ratelimit-policy'],
  };
}

function assertRefused(res: Res, limit: number, windowSeconds: number) {
  assert.equal(res.status, 429, res.text);
  const retry = Number(res.headers['retry-after']);
  assert.ok(retry >= 1 && retry <= windowSeconds, `Retry-After ${res.headers['retry-after']}`);
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  assert.equal(Number(res.headers['ratelimit-reset']), retry);
  assert.equal(res.headers['ratelimit-policy'], `${limit};w=${windowSeconds}`);
}

/** A failed sign-in: a form submission to an account page (each with its own email, so the login
 *  limiter, keyed on address + email, stays out of the way). */
const failedLogin = (c: ReturnType<TestKiln['client']>, path = '/_/login') =>
  c.post(path, { email: `nobody-${Math.random().toString(36).slice(2)}@example.com`, password: 'whatever-it-is' });

test('general limiter: 100 submissions to the account pages per address in 15 minutes, then 429 with Retry-After; viewing the pages never counts; other addresses go on', async () => {
  const visitor = kiln.client();
  for (let i = 1; i <= 100; i++) {
    const res = await failedLogin(visitor);
    assert.equal(res.status, 401, `request ${i}`);
    assert.deepEqual(limitHeaders(res), {
      limit: '100',
      remaining: String(100 - i),
      reset: limitHeaders(res).reset,
      policy: '100;w=900',
    });
    assert.ok(Number(res.headers['ratelimit-reset']) > 0 && Number(res.headers['ratelimit-reset']) <= 900);
    if (i % 25 === 0) {
      // A person looking at the forms uses up nothing.
      const view = await (i % 50 ? visitor.page('/_/login') : visitor.page('/_/signup'));
      assert.equal(view.status, 200);
      assert.equal(view.headers['ratelimit-limit'], undefined);
    }
  }
  const json = await failedLogin(visitor);
  assertRefused(json, 100, 900);
  assert.deepEqual([json.json.code, json.json.msgType], ['rate-limited', 'error']);
  assert.match(
    json.json.msg,
    /Too many requests from your address: at most 100 per 15 minutes\. Try again in \d+ (minute|second)/,
  );
  const page = await visitor.post(
    '/_/login',
    { email: 'x@example.com', password: 'whatever-it-is' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assertRefused(page, 100, 900);
  assert.match(page.headers['content-type'] ?? '', /text\/html/);
  assert.match(page.text, /Too many requests/);
  assert.equal((await visitor.page('/_/login')).status, 200, 'the form itself still shows');
  // The same pages on a document host count for the same address.
  const owner = await member();
  const onHost = await failedLogin(visitor.on(kiln.hostOf(owner.person.username)));
  assert.equal(onHost.status, 429);

  // Another visitor (another address) is not affected.
  const other = await failedLogin(kiln.client());
  assert.equal(other.status, 401);
  assert.equal(other.headers['ratelimit-remaining'], '99');

  // What the general limiter leaves alone, even for the exhausted address: documents, the data API,
  // signed-in work, webhooks.
  const doc = await createNode(await actingAs(kiln.services, owner.person.id), {
    ownerId: owner.person.id,
    parentId: 0,
    type: 'site',
    name: `rl-${owner.person.username}.html`,
    html: '<html><p>hi</p></html>',
  });
  const read = await visitor.on(kiln.hostOf(owner.person.username)).get(`/${doc.name}`);
  assert.equal(read.status, 200);
  assert.equal(read.headers['ratelimit-limit'], undefined);
  const signedInMain = owner.main;
  signedInMain.address = visitor.address;
  const created = await signedInMain.post(
    '/_/dashboard/nodes',
    { type: 'site', name: `rl2-${owner.person.username}.html` },
    { headers: ajax },
  );
  assert.equal(created.status, 201);
  assert.equal(created.headers['ratelimit-limit'], undefined);
  const hook = await visitor.post('/_/webhooks/stripe', '{}', {
    headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
  });
  assert.equal(hook.status, 401, 'reaches the webhook (bad signature), not the limiter');
});

test('general limiter: encoded paths that reach the account pages (/%5f/login, /_/%6cogin …) count like the plain ones', async () => {
  const visitor = kiln.client();
  const variants = ['/%5f/login', '/_/%6cogin', '/%5F/login', '/_/%6c%6f%67%69%6e', '/%5f/%6c%6f%67%69%6e?x=1'];
  for (let i = 1; i <= 100; i++) {
    const path = variants[i % variants.length];
    const res = await failedLogin(visitor, path);
    assert.equal(res.status, 401, `${path} reaches the login`);
    assert.equal(res.headers['ratelimit-remaining'], String(100 - i), path);
  }
  assert.equal((await failedLogin(visitor, '/%5f/login')).status, 429);
  assert.equal((await failedLogin(visitor, '/_/%73ignup')).status, 429, 'the sign-up form too');
});

test('general limiter: anonymous writes to /_/ count; sync-key requests and share guests do not', async () => {
  const visitor = kiln.client();
  const owner = await member({ plan: 'personal' });
  const host = kiln.hostOf(owner.person.username);
  const anon = await visitor.on(host).post('/_/save', '<html><p>x</p></html>', {
    headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/nothing.html` },
  });
  assert.ok(anon.status >= 400 && anon.status < 500);
  assert.equal(anon.headers['ratelimit-remaining'], '99');

  // A desktop sync client makes many writes from one address: none is counted.
  const { key } = await createSyncKey(kiln.services, owner.person.id);
  const made = await visitor.post(
    '/_/sync/nodes',
    { type: 'site', name: `sync-${owner.person.username}.html`, parentId: 0, content: '<html><p>0</p></html>' },
    { headers: { 'x-api-key': key } },
  );
  assert.equal(made.status, 201, made.text);
  for (let i = 1; i <= 110; i++) {
    const put = await visitor.request('PUT', `/_/sync/nodes/${made.json.node.id}/content`, {
      body: { content: `<html><p>${i}</p></html>` },
      headers: { 'x-api-key': key },
    });
    assert.equal(put.status, 200, `sync write ${i}: ${put.text}`);
    assert.equal(put.headers['ratelimit-limit'], undefined);
  }
  // A wrong key is still just a 401 from the sync API.
  const wrong = await visitor.get('/_/sync/nodes', { headers: { 'x-api-key': `hcsk_${'0'.repeat(64)}` } });
  assert.equal(wrong.status, 401);
  assert.equal((await failedLogin(visitor)).headers['ratelimit-remaining'], '98');
  // A key that does not work here exempts nothing: a made-up one, or a valid key of another account, on this host.
  const other = await member({ plan: 'personal' });
  const { key: otherKey } = await createSyncKey(kiln.services, other.person.id);
  for (const [i, k] of [`hcsk_${'0'.repeat(64)}`, otherKey].entries()) {
    const write = await visitor.on(host).post('/_/save', '<html><p>x</p></html>', {
      headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/nothing.html`, 'x-api-key': k },
    });
    assert.ok(write.status >= 400 && write.status < 500, write.text);
    assert.equal(write.headers['ratelimit-remaining'], String(97 - i), `key ${i} is counted`);
  }
});

test('strict limiter on signup: 5 attempts an hour per address, then 429 (a page with the form for browsers); another address signs up', async () => {
  const visitor = kiln.client();
  for (let i = 1; i <= 5; i++) {
    const p = newPerson();
    const res = await visitor.post('/_/signup', { email: p.email, username: p.username, password: p.password });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers['ratelimit-limit'], '5');
    assert.equal(res.headers['ratelimit-remaining'], String(5 - i));
    assert.equal(res.headers['ratelimit-policy'], '5;w=3600');
  }
  const p = newPerson();
  const refused = await visitor.post('/_/signup', { email: p.email, username: p.username, password: p.password });
  assertRefused(refused, 5, 3600);
  assert.match(refused.json.msg, /Too many sign-up attempts: at most 5 per hour/);
  const page = await visitor.post(
    '/_/signup',
    { email: p.email, username: p.username, password: p.password },
    { form: true, headers: { accept: 'text/html' } },
  );
  assertRefused(page, 5, 3600);
  assert.match(page.text, /<form[^>]*action="\/_\/signup"/);
  assert.match(page.text, /Too many sign-up attempts/);
  const nobody = await kiln.services.database.db
    .selectFrom('people')
    .select('account_id')
    .where('email', '=', p.email)
    .executeTakeFirst();
  assert.equal(nobody, undefined, 'nothing was created');

  const elsewhere = await kiln
    .client()
    .post('/_/signup', { email: p.email, username: p.username, password: p.password });
  assert.equal(elsewhere.status, 201);
});

test('strict limiter on sync-key generation and share-token regeneration: 5 an hour per account', async () => {
  const a = await member({ plan: 'personal' });
  const b = await member({ plan: 'personal' });
  b.main.address = a.main.address; // same address, another account: its own count
  for (let i = 1; i <= 5; i++) {
    const res = await a.main.post('/_/dashboard/keys', {}, { headers: ajax });
    assert.equal(res.status, 201, `key ${i}`);
    assert.equal(res.headers['ratelimit-remaining'], String(5 - i));
  }
  const sixth = await a.main.post('/_/dashboard/keys', {}, { headers: ajax });
  assertRefused(sixth, 5, 3600);
  assert.match(sixth.json.msg, /Too many sync keys generated/);
  const page = await a.main.post('/_/dashboard/keys', {}, { form: true, headers: { accept: 'text/html' } });
  assert.equal(page.status, 429);
  const keys = await a.main.get('/_/dashboard/keys');
  assert.equal(keys.json.keys.length, 5);
  assert.equal((await b.main.post('/_/dashboard/keys', {}, { headers: ajax })).status, 201);

  const doc = await createNode(await actingAs(kiln.services, a.person.id), {
    ownerId: a.person.id,
    parentId: 0,
    type: 'site',
    name: `share-${a.person.username}.html`,
    html: '<html><p>s</p></html>',
  });
  assert.equal(
    (await a.main.post(`/_/dashboard/nodes/${doc.id}/sharing`, { enabled: true }, { headers: ajax })).status,
    200,
  );
  for (let i = 1; i <= 5; i++)
    assert.equal(
      (await a.main.post(`/_/dashboard/nodes/${doc.id}/sharing/regenerate`, {}, { headers: ajax })).status,
      200,
      `regenerate ${i}`,
    );
  const again = await a.main.post(`/_/dashboard/nodes/${doc.id}/sharing/regenerate`, {}, { headers: ajax });
  assertRefused(again, 5, 3600);
  assert.match(again.json.msg, /share-token regenerations/);
});

test('windows end: 15 minutes for the general limiter, an hour for the strict one (injected clock, in-memory counters)', {
  skip: MEMORY
    ? false
    : 'Redis counts windows on its own clock; this runs on the in-memory counters (KILN_TEST_STORAGE=sqlite)',
}, async () => {
  const visitor = kiln.client();
  for (let i = 0; i < 100; i++) await failedLogin(visitor);
  assert.equal((await failedLogin(visitor)).status, 429);
  now = new Date(now.getTime() + 14 * 60_000);
  assert.equal((await failedLogin(visitor)).status, 429, 'still inside the window');
  now = new Date(now.getTime() + 60_000);
  const fresh = await failedLogin(visitor);
  assert.equal(fresh.status, 401);
  assert.equal(fresh.headers['ratelimit-remaining'], '99');

  await signUpFive(visitor);
  const p = newPerson();
  const refused = await visitor.post('/_/signup', { email: p.email, username: p.username, password: p.password });
  assert.equal(refused.status, 429);
  now = new Date(now.getTime() + Number(refused.headers['retry-after']) * 1000);
  assert.equal(
    (await visitor.post('/_/signup', { email: p.email, username: p.username, password: p.password })).status,
    201,
  );
});

test('setup, the main sign-up and an app sign-up count in separate buckets', async () => {
  const visitor = kiln.client();
  await signUpFive(visitor);
  const p = newPerson();
  assert.equal(
    (await visitor.post('/_/signup', { email: p.email, username: p.username, password: p.password })).status,
    429,
  );
  // The same address may still sign up to someone's app: the visitors of an app never share a
  // bucket with the developers' sign-ups.
  const owner = await member({ plan: 'maker' });
  const appName = `app-${owner.person.username}.html`;
  const made = await owner.main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: appName, html: '<html><body>app</body></html>' },
    { headers: ajax },
  );
  assert.equal(made.status, 201, made.text);
  assert.equal(
    (await owner.main.post(`/_/dashboard/nodes/${made.json.node.id}/app`, { enableSignups: true }, { headers: ajax }))
      .status,
    200,
  );
  const host = visitor.on(kiln.hostOf(owner.person.username));
  const v = newPerson();
  const appSignup = await host.post('/_/app/signup', {
    app: appName,
    email: v.email,
    username: v.username,
    password: v.password,
  });
  assert.ok(appSignup.status < 400, `app sign-up: ${appSignup.status} ${appSignup.text}`);
  assert.equal(appSignup.headers['ratelimit-remaining'], '4', 'its own bucket: one used of five');
});

test('`kiln ratelimit reset` clears every counter (in memory: the server notices within seconds; Redis: the keys go)', async () => {
  const visitor = kiln.client();
  for (let i = 0; i < 100; i++) await failedLogin(visitor);
  assert.equal((await failedLogin(visitor)).status, 429);
  const env = {
    ...process.env,
    DATA_DIR: kiln.config.dataDir,
    ...(kiln.config.databaseUrl ? { DATABASE_URL: kiln.config.databaseUrl } : {}),
    ...(kiln.config.redisUrl ? { REDIS_URL: kiln.config.redisUrl } : {}),
  };
  const out = execFileSync(process.execPath, [path.join(ROOT, 'bin/kiln.js'), 'ratelimit', 'reset'], {
    env,
  }).toString();
  assert.match(
    out,
    kiln.config.redisUrl ? /Deleted \d+ rate-limit counters? in Redis/ : /clears them within 2 seconds/,
  );
  let status = 429;
  for (let i = 0; i < 60 && status === 429; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await failedLogin(visitor)).status;
  }
  assert.equal(status, 401, 'the address may submit again');
});
