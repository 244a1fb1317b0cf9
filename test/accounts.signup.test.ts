// Sign-up through HTTP: the free developer account, every validation rule, duplicates, cross-site refusal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn } from './support/people.ts';
import { withMessage } from '../src/http/messages.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
  // Past first-run setup: sign-up is for everyone after the first account.
  await signedIn(kiln, kiln.client());
});
after(() => kiln.stop());

const HTML = { accept: 'text/html' };

async function row(username: string) {
  return kiln.services.database.db
    .selectFrom('accounts')
    .innerJoin('people', 'people.account_id', 'accounts.id')
    .select([
      'accounts.plan',
      'accounts.has_active_subscription',
      'people.account_type',
      'people.is_superadmin',
      'people.email',
      'people.password_hash',
    ])
    .where('accounts.username', '=', username)
    .executeTakeFirst();
}

test('GET /_/signup serves the form on the main app; document hosts send browsers there', async () => {
  const res = await kiln.client().page(withMessage(kiln.services.secret, '/_/signup', 'Hi there', 'success'));
  assert.equal(res.status, 200);
  assert.match(res.text, /<form class="card" method="post" action="\/_\/signup">/);
  for (const name of ['email', 'username', 'password']) assert.match(res.text, new RegExp(`name="${name}"`));
  assert.match(res.text, /class="msg success"[^>]*>Hi there</);
  // On a document host: to the main app's form (no password is typed on an account's host).
  const owner = await signedIn(kiln, kiln.client());
  const onDoc = await kiln.client(kiln.hostOf(owner.username)).page('/_/signup');
  assert.equal(onDoc.status, 302);
  assert.ok(onDoc.headers.location!.startsWith(`${kiln.config.baseUrl}/_/signup?return=`));
});

test('JSON signup creates a free dev account, signs it in, and the password then works for login', async () => {
  const p = newPerson();
  const client = kiln.client();
  const res = await client.post('/_/signup', {
    email: p.email.toUpperCase(),
    username: p.username,
    password: p.password,
  });
  assert.equal(res.status, 201);
  assert.equal(res.json.msgType, 'success');
  assert.equal(res.json.username, p.username);
  const cookie = res.setCookies.find((c) => c.startsWith('__Host-auth_token=') && !/Max-Age=0/i.test(c));
  assert.ok(cookie);
  assert.match(cookie!, /HttpOnly/i);
  assert.doesNotMatch(cookie!, /Domain=/i, 'host-only');
  const page = await client.page('/_/login');
  assert.match(page.text, new RegExp(`signed in as <strong>${p.username}</strong>`));

  const r = await row(p.username);
  assert.deepEqual(
    {
      plan: r!.plan,
      paid: r!.has_active_subscription,
      type: r!.account_type,
      admin: r!.is_superadmin,
      email: r!.email,
    },
    { plan: 'free', paid: 0, type: 'dev', admin: 0, email: p.email.toLowerCase() },
  );
  assert.ok(r!.password_hash && !r!.password_hash.includes(p.password), 'password stored hashed');

  const login = await kiln.client().post('/_/login', { email: p.email, password: p.password });
  assert.equal(login.status, 200);
});

test('browser signup redirects to the dashboard (or a safe return) with the session cookie', async () => {
  let p = newPerson();
  let res = await kiln
    .client()
    .post('/_/signup', { email: p.email, username: p.username, password: p.password }, { form: true, headers: HTML });
  assert.equal(res.status, 302);
  assert.equal(res.headers.location, '/_/dashboard');
  assert.ok(res.setCookies.some((c) => c.startsWith('__Host-auth_token=')));
  p = newPerson();
  res = await kiln
    .client()
    .post(
      '/_/signup',
      { email: p.email, username: p.username, password: p.password, return: '/app.html' },
      { form: true, headers: HTML },
    );
  assert.equal(res.headers.location, '/app.html');
});

test('validation errors answer 400 with a message naming the rule', async () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ email: 'not-an-email' }, /valid email/i],
    [{ username: 'Bad_Name' }, /lowercase letters, digits and hyphens/],
    [{ username: 'x' }, /2 to 40 characters/],
    [{ username: '-alice' }, /hyphen/],
    [{ username: 'admin' }, /"admin" is reserved/],
    [{ username: 'www' }, /"www" is reserved/],
    [{ username: 'mail' }, /reserved/],
    [{ password: 'short' }, /at least 8 characters/],
    [{ password: 'password123' }, /most common/],
    [{ password: 'iloveyou2' }, /most common/],
  ];
  for (const [over, message] of cases) {
    const p = newPerson();
    const res = await kiln
      .client()
      .post('/_/signup', { email: p.email, username: p.username, password: p.password, ...over });
    assert.equal(res.status, 400, JSON.stringify(over));
    assert.equal(res.json.msgType, 'error');
    assert.match(res.json.msg, message, JSON.stringify(over));
    assert.equal(
      res.setCookies.find((c) => c.startsWith('__Host-auth_token=')),
      undefined,
    );
  }
});

test('missing and oversized fields answer 400; a form over 2 MB answers 413', async () => {
  const p = newPerson();
  for (const missing of ['email', 'username', 'password']) {
    const body: Record<string, string> = { email: p.email, username: p.username, password: p.password };
    delete body[missing];
    const res = await kiln.client().post('/_/signup', body);
    assert.equal(res.status, 400, missing);
    assert.match(res.json.msg, new RegExp(missing, 'i'));
  }
  const over: Array<[Record<string, string>, RegExp]> = [
    [{ email: `${'a'.repeat(250)}@x.io` }, /Email must be at most 254/],
    [{ username: 'a'.repeat(41) }, /Username must be at most 40/],
    [{ password: 'Zq9!'.repeat(257) }, /Password must be at most 1024/],
  ];
  for (const [o, message] of over) {
    const res = await kiln
      .client()
      .post('/_/signup', { email: p.email, username: p.username, password: p.password, ...o });
    assert.equal(res.status, 400);
    assert.match(res.json.msg, message);
  }
  const big = await kiln
    .client()
    .post(
      '/_/signup',
      { email: p.email, username: p.username, password: p.password, pad: 'y'.repeat(2 * 1024 * 1024 + 1) },
      { form: true },
    );
  assert.equal(big.status, 413);
  assert.equal(big.json.msgType, 'error');
  assert.equal(await row(p.username), undefined, 'nothing created');
});

test('a taken email or username answers 409 (case-insensitive)', async () => {
  const p = newPerson();
  assert.equal(
    (await kiln.client().post('/_/signup', { email: p.email, username: p.username, password: p.password })).status,
    201,
  );
  const other = newPerson();
  let res = await kiln
    .client()
    .post('/_/signup', { email: p.email.toUpperCase(), username: other.username, password: other.password });
  assert.equal(res.status, 409);
  assert.equal(res.json.msgType, 'error');
  assert.match(res.json.msg, /email/i);
  res = await kiln
    .client()
    .post('/_/signup', { email: other.email, username: p.username.toUpperCase(), password: other.password });
  assert.equal(res.status, 409);
  assert.match(res.json.msg, /username/i);

  // Browsers go back to the form with the message.
  res = await kiln
    .client()
    .post(
      '/_/signup',
      { email: p.email, username: other.username, password: other.password },
      { form: true, headers: HTML },
    );
  assert.equal(res.status, 302);
  const loc = new URL(res.headers.location!, 'http://h');
  assert.equal(loc.pathname, '/_/signup');
  assert.equal(loc.searchParams.get('msgType'), 'error');
  assert.match(loc.searchParams.get('msg')!, /email/i);
});

test('two simultaneous signups for one username: one 201, one 409', async () => {
  const a = newPerson();
  const b = newPerson({ username: a.username });
  const results = await Promise.all([
    kiln.client().post('/_/signup', { email: a.email, username: a.username, password: a.password }),
    kiln.client().post('/_/signup', { email: b.email, username: b.username, password: b.password }),
  ]);
  assert.deepEqual(results.map((r) => r.status).sort(), [201, 409]);
  assert.match(results.find((r) => r.status === 409)!.json.msg, /username/i);
});

test('signup refuses cross-site posts with 403', async () => {
  const p = newPerson();
  const res = await kiln
    .client()
    .post(
      '/_/signup',
      { email: p.email, username: p.username, password: p.password },
      { form: true, headers: { origin: 'https://evil.example' } },
    );
  assert.equal(res.status, 403);
  assert.equal(res.json.msgType, 'error');
  assert.equal(await row(p.username), undefined);
});
