// Sign-in and sign-out through HTTP: pages, answers, cookies, the limiter, cross-site refusal, input bounds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson } from './support/people.ts';
import { createPerson } from '../src/accounts/people.ts';
import type { Client, Res } from './support/client.ts';
import { withMessage } from '../src/http/messages.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const HTML = { accept: 'text/html' };

/** A person in the database (not signed in anywhere), with the password in clear. */
async function person(over = {}) {
  const input = newPerson(over);
  const p = await createPerson(kiln.services, input);
  return { ...p, password: input.password };
}

/** A Set-Cookie line for `name` (on `domain`; '' = host-only); `cleared` picks the line that clears it. */
function cookieLine(res: Res, name: string, domain?: string, cleared = false): string | undefined {
  return res.setCookies.find(
    (c) =>
      c.startsWith(`${name}=`) &&
      /Max-Age=0/i.test(c) === cleared &&
      (domain === undefined
        ? true
        : domain === ''
          ? !/;\s*domain=/i.test(c)
          : new RegExp(`;\\s*domain=${domain}(;|$)`, 'i').test(c)),
  );
}

/** What the login page says about who is signed in (the user-visible proof of a session). */
async function signedInAs(client: Client): Promise<string | null> {
  const res = await client.page('/_/login');
  assert.equal(res.status, 200);
  return /You are signed in as <strong>([^<]+)<\/strong>/.exec(res.text)?.[1] ?? null;
}

test('GET /_/login serves the form and shows a signed msg/msgType, escaped', async () => {
  const res = await kiln
    .client()
    .page(withMessage(kiln.services.secret, '/_/login', '<b>Hello</b>', 'error', '/_/edit?x=1'));
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'] ?? '', /text\/html/);
  assert.match(res.text, /<form class="card" method="post" action="\/_\/login">/);
  assert.match(res.text, /name="email"/);
  assert.match(res.text, /name="password"/);
  assert.match(res.text, /class="msg error"[^>]*>&lt;b&gt;Hello&lt;\/b&gt;</);
  assert.match(res.text, /name="return" value="\/_\/edit\?x=1"/);
});

test('login pages answer on the main app and its loopback names; a document host sends sign-in to the main app', async () => {
  const alice = await person();
  for (const host of [`127.0.0.1:${kiln.config.port}`, 'localhost:8080']) {
    for (const path of ['/_/login', '/_/logout', '/_/signup']) {
      const res = await kiln.client(host).page(path);
      assert.equal(res.status, 200, `${host}${path}`);
      assert.match(res.text, /<form/);
    }
  }
  const docHost = kiln.hostOf(alice.username);
  for (const path of ['/_/login', '/_/signup']) {
    const res = await kiln.client(docHost).page(path);
    assert.equal(res.status, 302, path);
    assert.ok(res.headers.location!.startsWith(`${kiln.config.baseUrl}/_/`), res.headers.location);
  }
  const out = await kiln.client(docHost).page('/_/logout');
  assert.equal(out.status, 200);
  assert.match(out.text, /<form/);
});

test('JSON login: 200 {msg, msgType, username} and a __Host-auth_token cookie: host-only, HttpOnly, Lax, Secure', async () => {
  const p = await person();
  const client = kiln.client();
  const res = await client.post('/_/login', { email: p.email, password: p.password });
  assert.equal(res.status, 200);
  assert.equal(res.json.msgType, 'success');
  assert.equal(res.json.username, p.username);
  assert.equal(typeof res.json.msg, 'string');
  const line = cookieLine(res, '__Host-auth_token');
  assert.ok(line, '__Host-auth_token set');
  assert.match(line!, /HttpOnly/i);
  assert.match(line!, /SameSite=Lax/i);
  assert.doesNotMatch(line!, /Domain=/i, 'host-only: the main app only');
  assert.match(line!, /Path=\//);
  // `*.localhost` is a secure context for browsers even over http: the __Host- prefix needs Secure.
  assert.match(line!, /;\s*Secure/i);
  const maxAge = Number(/Max-Age=(\d+)/i.exec(line!)?.[1]);
  assert.equal(maxAge, 30 * 24 * 3600);
  // The token is stored hashed, never as sent.
  const token = client.jar.get('__Host-auth_token', kiln.config.rootDomain)!;
  const rows = await kiln.services.database.db
    .selectFrom('sessions')
    .select('token_hash')
    .where('account_id', '=', p.id)
    .execute();
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0].token_hash, token);
  assert.equal(await signedInAs(client), p.username);
  // The cookie never reaches a document host.
  assert.equal(client.jar.get('__Host-auth_token', kiln.hostOf(p.username)), undefined);
});

test('form login from a browser redirects to /_/dashboard or a safe local return', async () => {
  const p = await person();
  const form = (extra: Record<string, string> = {}, path = '/_/login') =>
    kiln.client().post(path, { email: p.email, password: p.password, ...extra }, { form: true, headers: HTML });

  let res = await form();
  assert.equal(res.status, 302);
  assert.equal(res.headers.location, '/_/dashboard');
  assert.ok(cookieLine(res, '__Host-auth_token'));

  res = await form({ return: '/_/edit?file=a.html' });
  assert.equal(res.headers.location, '/_/edit?file=a.html');
  res = await form({}, '/_/login?return=%2Fnotes.html');
  assert.equal(res.headers.location, '/notes.html');
  for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
    res = await form({ return: evil });
    assert.equal(res.status, 400, evil);
    assert.equal(cookieLine(res, 'auth_token'), undefined, evil);
  }
});

/** `return` values that are not same-origin paths, raw or once percent-decoded (as they appear in a query string). */
const EVIL_RETURNS = [
  '%0d%0a',
  '/%0d%0aSet-Cookie:%20x=1',
  '/x%0aLocation:%20//evil.example',
  '/%09/evil.example',
  '/%2f%2fevil.example',
  '/%252f%252fevil.example',
  '/%255cevil.example',
  '/%5cevil.example',
  '/%250d%250a',
  '%2F%2Fevil.example',
  '/%2f%09/evil.example',
  '/x%7f',
  '/%25zz',
];

test('bad return targets (control characters, backslashes, //, and their encodings) are 400 invalid-return before any session', async () => {
  const p = await person();
  for (const evil of EVIL_RETURNS) {
    const page = await kiln.client().page(`/_/login?return=${evil}`);
    assert.equal(page.status, 400, `GET ${evil}`);
    const json = await kiln.client().post(`/_/login?return=${evil}`, { email: p.email, password: p.password });
    assert.equal(json.status, 400, `POST json ${evil}`);
    assert.equal(json.json.code, 'invalid-return', evil);
    assert.equal(cookieLine(json, 'auth_token'), undefined, evil);
    const form = await kiln
      .client()
      .post(
        '/_/login',
        `email=${encodeURIComponent(p.email)}&password=${encodeURIComponent(p.password)}&return=${evil}`,
        {
          headers: { ...HTML, 'content-type': 'application/x-www-form-urlencoded' },
        },
      );
    assert.equal(form.status, 400, `POST form ${evil}`);
    assert.equal(form.headers.location, undefined);
    assert.equal(cookieLine(form, 'auth_token'), undefined, evil);
    const q = newPerson();
    const signup = await kiln
      .client()
      .post(`/_/signup?return=${evil}`, { email: q.email, username: q.username, password: q.password });
    assert.equal(signup.status, 400, `signup ${evil}`);
    assert.equal(signup.json.code, 'invalid-return');
    assert.equal(
      (await kiln.client().post('/_/login', { email: q.email, password: q.password })).status,
      401,
      'no account was created',
    );
  }
  // The refusals created no session.
  const rows = await kiln.services.database.db
    .selectFrom('sessions')
    .select('id')
    .where('account_id', '=', p.id)
    .execute();
  assert.equal(rows.length, 0);
  // Good targets still work, encoded characters in their query included.
  const ok = await kiln
    .client()
    .post(
      `/_/login?return=${encodeURIComponent('/_/edit?path=a%20b.html')}`,
      { email: p.email, password: p.password },
      { form: true, headers: HTML },
    );
  assert.equal(ok.status, 302);
  assert.equal(ok.headers.location, '/_/edit?path=a%20b.html');
});

test('the username works in the email field and in a username field', async () => {
  const p = await person();
  let res = await kiln.client().post('/_/login', { email: p.username.toUpperCase(), password: p.password });
  assert.equal(res.status, 200);
  assert.equal(res.json.username, p.username);
  res = await kiln.client().post('/_/login', { username: p.username, password: p.password });
  assert.equal(res.status, 200);
  res = await kiln
    .client()
    .post('/_/login', { email: `  ${p.email.toUpperCase()} `, password: p.password }, { form: true });
  assert.equal(res.status, 200);
});

test('missing fields answer 400; browsers go back to the form with the message', async () => {
  const p = await person();
  let res = await kiln.client().post('/_/login', { password: p.password });
  assert.equal(res.status, 400);
  assert.equal(res.json.msgType, 'error');
  assert.match(res.json.msg, /email or username/i);
  res = await kiln.client().post('/_/login', { email: p.email });
  assert.equal(res.status, 400);
  assert.match(res.json.msg, /password/i);
  res = await kiln.client().post('/_/login', { email: ['a', 'b'], password: 'x' });
  assert.equal(res.status, 400);
  res = await kiln.client().post('/_/login', undefined);
  assert.equal(res.status, 400);

  res = await kiln.client().post('/_/login', { email: p.email, return: '/x.html' }, { form: true, headers: HTML });
  assert.equal(res.status, 302);
  const loc = new URL(res.headers.location!, 'http://h');
  assert.equal(loc.pathname, '/_/login');
  assert.equal(loc.searchParams.get('msgType'), 'error');
  assert.match(loc.searchParams.get('msg')!, /password/i);
  assert.equal(loc.searchParams.get('return'), '/x.html');
  assert.equal(cookieLine(res, '__Host-auth_token'), undefined);
});

test('wrong password and unknown email both answer 401 with the same message', async () => {
  const p = await person();
  const wrong = await kiln.client().post('/_/login', { email: p.email, password: `${p.password}nope` });
  const unknown = await kiln.client().post('/_/login', { email: `nobody-${p.email}`, password: p.password });
  const unknownName = await kiln.client().post('/_/login', { email: 'nobody-here', password: p.password });
  for (const res of [wrong, unknown, unknownName]) {
    assert.equal(res.status, 401);
    assert.equal(res.json.msgType, 'error');
    assert.equal(cookieLine(res, '__Host-auth_token'), undefined);
  }
  assert.equal(wrong.json.msg, unknown.json.msg);
  assert.equal(wrong.json.msg, unknownName.json.msg);

  const browser = await kiln
    .client()
    .post('/_/login', { email: p.email, password: 'wrong-password' }, { form: true, headers: HTML });
  assert.equal(browser.status, 302);
  const loc = new URL(browser.headers.location!, 'http://h');
  assert.equal(loc.pathname, '/_/login');
  assert.equal(loc.searchParams.get('msg'), wrong.json.msg);
  assert.equal(loc.searchParams.get('msgType'), 'error');
});

test('a password is never posted on a document host; on loopback names the cookie is host-only', async () => {
  const p = await person();
  const docHost = kiln.hostOf(p.username);
  let res = await kiln
    .client(docHost)
    .post('/_/login', { email: p.email, password: p.password }, { form: true, headers: HTML });
  assert.equal(res.status, 404);
  assert.equal(cookieLine(res, '__Host-auth_token'), undefined);

  const loop = kiln.client(`127.0.0.1:${kiln.config.port}`);
  res = await loop.post('/_/login', { email: p.email, password: p.password });
  assert.equal(res.status, 200);
  assert.ok(cookieLine(res, '__Host-auth_token', ''), 'host-only cookie on 127.0.0.1');
  res = await kiln.client('localhost:8080').post('/_/login', { email: p.email, password: p.password });
  assert.ok(cookieLine(res, '__Host-auth_token', ''), 'host-only cookie on localhost');
});

test('logout: GET asks, POST revokes the session server-side and clears cookies on every domain', async () => {
  const p = await person();
  const client = kiln.client();
  await client.post('/_/login', { email: p.email, password: p.password });
  const token = client.jar.get('__Host-auth_token', kiln.config.rootDomain)!;
  assert.ok(token);

  const ask = await client.page('/_/logout');
  assert.equal(ask.status, 200);
  assert.match(ask.text, /<form class="card" method="post" action="\/_\/logout">/);
  assert.match(ask.text, new RegExp(`Sign out <strong>${p.username}</strong>`));

  const res = await client.post(
    '/_/logout',
    {},
    { headers: { cookie: `__Host-auth_token=${token}; share_notes=abc` } },
  );
  assert.equal(res.status, 200);
  assert.deepEqual({ msgType: res.json.msgType }, { msgType: 'success' });
  for (const name of ['__Host-auth_token', 'isAdminOfCurrentResource', 'currentResource', 'share_notes']) {
    assert.ok(cookieLine(res, name, '', true), `${name} cleared host-only`);
  }
  // A cookie an older Kiln set for the whole root domain goes too, and so does the signed-in hint.
  assert.ok(cookieLine(res, 'auth_token', 'kiln\\.localhost', true));
  assert.ok(cookieLine(res, 'kiln_signed_in', 'kiln\\.localhost', true));
  assert.equal(client.jar.get('__Host-auth_token', kiln.config.rootDomain), undefined);

  // The old token no longer authenticates, even when a client kept it.
  const replay = kiln.client();
  replay.jar.store(kiln.config.rootDomain, `__Host-auth_token=${token}; Path=/`);
  assert.equal(await signedInAs(replay), null);
  const revoked = await kiln.services.database.db
    .selectFrom('sessions')
    .select('revoked_at')
    .where('account_id', '=', p.id)
    .executeTakeFirstOrThrow();
  assert.ok(revoked.revoked_at);
});

test('browser logout redirects to the login page with a message', async () => {
  const p = await person();
  const client = kiln.client();
  await client.post('/_/login', { email: p.email, password: p.password });
  assert.equal(await signedInAs(client), p.username);
  const res = await client.post('/_/logout', {}, { form: true, headers: HTML });
  assert.equal(res.status, 302);
  const loc = new URL(res.headers.location!, 'http://h');
  assert.equal(loc.pathname, '/_/login');
  assert.equal(loc.searchParams.get('msgType'), 'success');
  assert.equal(await signedInAs(client), null);
});

test('limiter: the 21st attempt in 15 minutes is 429 with Retry-After; other emails are unaffected', async () => {
  const p = await person();
  const client = kiln.client();
  for (let i = 1; i <= 20; i++) {
    const res = await client.post('/_/login', { email: p.email, password: `wrong-${i}` });
    assert.equal(res.status, 401, `attempt ${i}`);
  }
  const res = await client.post('/_/login', { email: p.email, password: p.password });
  assert.equal(res.status, 429);
  assert.equal(res.json.msgType, 'error');
  const retry = Number(res.headers['retry-after']);
  assert.ok(retry > 0 && retry <= 15 * 60, `Retry-After ${res.headers['retry-after']}`);
  assert.equal(cookieLine(res, '__Host-auth_token'), undefined, 'even the right password is refused');

  const page = await client.post(
    '/_/login',
    { email: p.email.toUpperCase(), password: p.password },
    { form: true, headers: HTML },
  );
  assert.equal(page.status, 429);
  assert.ok(Number(page.headers['retry-after']) > 0);
  assert.match(page.text, /Too many sign-in attempts/);
  assert.match(page.text, /<form/);

  const other = await person();
  const ok = await client.post('/_/login', { email: other.email, password: other.password });
  assert.equal(ok.status, 200);
});

test('limiter: the count is per account, whichever of its email or username is typed', async () => {
  const p = await person();
  const client = kiln.client();
  for (let i = 1; i <= 20; i++) {
    const who = i % 2 ? p.email : p.username.toUpperCase();
    const res = await client.post('/_/login', { email: who, password: `wrong-${i}` });
    assert.equal(res.status, 401, `attempt ${i}`);
  }
  for (const who of [p.email, p.username, ` ${p.email.toUpperCase()} `]) {
    const res = await client.post('/_/login', { email: who, password: p.password });
    assert.equal(res.status, 429, who);
  }
  const username = await client.post('/_/login', { username: p.username, password: p.password });
  assert.equal(username.status, 429, 'the username field too');
  // Another address is not affected (the key keeps the client address).
  assert.equal((await kiln.client().post('/_/login', { email: p.username, password: p.password })).status, 200);
});

test('limiter: a successful sign-in resets the count', async () => {
  const p = await person();
  const client = kiln.client();
  for (let i = 1; i <= 19; i++)
    assert.equal((await client.post('/_/login', { email: p.email, password: `wrong-${i}` })).status, 401);
  assert.equal((await client.post('/_/login', { email: p.email, password: p.password })).status, 200);
  for (let i = 1; i <= 20; i++)
    assert.equal(
      (await client.post('/_/login', { email: p.email, password: `wrong-${i}` })).status,
      401,
      `after reset ${i}`,
    );
  assert.equal((await client.post('/_/login', { email: p.email, password: 'wrong' })).status, 429);
});

test('cross-site form posts are refused with 403; our own hosts are accepted', async () => {
  const p = await person();
  const other = await person();
  for (const origin of [
    'https://evil.example',
    'null',
    'http://kiln.localhost.evil.example',
    'http://a.b.kiln.localhost:8080',
    `http://${kiln.hostOf(other.username)}`,
  ]) {
    const res = await kiln
      .client()
      .post('/_/login', { email: p.email, password: p.password }, { form: true, headers: { origin } });
    assert.equal(res.status, 403, origin);
    assert.equal(res.json.msgType, 'error');
    assert.equal(cookieLine(res, '__Host-auth_token'), undefined);
    const html = await kiln
      .client()
      .post('/_/login', { email: p.email, password: p.password }, { form: true, headers: { origin, ...HTML } });
    assert.equal(html.status, 403);
    assert.match(html.text, /Cross-site/);
    const out = await kiln.client().post('/_/logout', {}, { headers: { origin } });
    assert.equal(out.status, 403);
  }
  for (const origin of [
    'http://kiln.localhost:8080',
    `http://127.0.0.1:${kiln.config.port}`,
    'http://localhost:8080',
  ]) {
    const res = await kiln
      .client()
      .post('/_/login', { email: p.email, password: p.password }, { form: true, headers: { origin } });
    assert.equal(res.status, 200, origin);
  }
  // On a document host (sign-out is the form that exists there): its own origin and the main app's
  // pass; another account's host and loopback names do not.
  const own = kiln.client(kiln.hostOf(p.username));
  for (const origin of [`http://${kiln.hostOf(p.username)}`, 'http://kiln.localhost:8080']) {
    assert.equal((await own.post('/_/logout', {}, { headers: { origin } })).status, 200, origin);
  }
  for (const origin of [`http://${kiln.hostOf(other.username)}`, 'http://127.0.0.1:8080']) {
    assert.equal((await own.post('/_/logout', {}, { headers: { origin } })).status, 403, origin);
  }
});

test('inputs are bounded: 400 for oversized fields, 413 for a form body over 2 MB', async () => {
  const p = await person();
  let res = await kiln.client().post('/_/login', { email: `${'a'.repeat(250)}@x.io`, password: p.password });
  assert.equal(res.status, 400);
  assert.match(res.json.msg, /Email must be at most 254/);
  res = await kiln.client().post('/_/login', { email: p.email, password: 'x'.repeat(1025) });
  assert.equal(res.status, 400);
  assert.match(res.json.msg, /Password must be at most 1024/);
  res = await kiln.client().post('/_/login', { username: 'u'.repeat(41), password: p.password });
  assert.equal(res.status, 400);
  assert.match(res.json.msg, /Username must be at most 40/);

  res = await kiln
    .client()
    .post('/_/login', { email: p.email, password: p.password, pad: 'x'.repeat(2 * 1024 * 1024 + 10) }, { form: true });
  assert.equal(res.status, 413);
  assert.equal(res.json.msgType, 'error');
  res = await kiln
    .client()
    .post(
      '/_/login',
      { email: p.email, password: p.password, pad: 'x'.repeat(2 * 1024 * 1024 + 10) },
      { form: true, headers: HTML },
    );
  assert.equal(res.status, 413);
  assert.match(res.headers['content-type'] ?? '', /text\/html/);
});

test('with an https BASE_URL the auth cookie is Secure (and __Host- prefixed)', async () => {
  const secure = await startKiln({ env: { BASE_URL: 'https://kiln.localhost:8080' } });
  try {
    const input = newPerson();
    await createPerson(secure.services, input);
    const res = await secure.client().post('/_/login', { email: input.email, password: input.password });
    assert.equal(res.status, 200);
    const c = cookieLine(res, '__Host-auth_token')!;
    assert.match(c, /;\s*Secure/i);
    assert.match(c, /;\s*Path=\//i);
    assert.doesNotMatch(c, /;\s*domain=/i, 'host-only');
  } finally {
    await secure.stop();
  }
});
