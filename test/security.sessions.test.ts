// Host-scoped sessions (README "Security"): the main app's session cookie is host-only; a document host
// gets its own host-only session through a single-use, 60-second, host-bound grant; a session is valid
// on the host it was minted for only, and only for that host's own account; signing out on any host
// ends the login everywhere; two auth cookies in one request count as none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, sessionsFor, actingAs } from './support/people.ts';
import type { Client, Res } from './support/client.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import type { Clock } from '../src/clock.ts';
import { limits } from '../src/limits.ts';

let kiln: TestKiln;
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
before(async () => (kiln = await startKiln({ clock })));
after(() => kiln.stop());

const DOC = '<!DOCTYPE html><html><head><title>t</title></head><body><p id="x">hello</p></body></html>';
/** What Chromium sends for a top-level page load. */
const NAVIGATE = {
  accept: 'text/html',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
  'sec-fetch-site': 'none',
};

async function person() {
  const input = newPerson();
  const p = await createPerson(kiln.services, input);
  await createNode(await actingAs(kiln.services, p.id), {
    ownerId: p.id,
    parentId: 0,
    type: 'site',
    name: `doc-${p.username}.html`,
    html: DOC,
  });
  return { ...p, password: input.password, doc: `/doc-${p.username}.html` };
}

/** The Set-Cookie that sets `name` (not one that clears it). */
function cookieNamed(res: Res, name: string): string | undefined {
  return res.setCookies.find((c) => c.startsWith(`${name}=`) && !/Max-Age=0/i.test(c));
}

/** Signs in on the main app's form (JSON). */
async function login(client: Client, p: { email: string; password: string }) {
  const res = await client.post('/_/login', { email: p.email, password: p.password });
  assert.equal(res.status, 200, res.text);
  return res;
}

/** Follows the handshake from the main app to `host` for `path`: returns the two answers. */
async function handshake(main: Client, host: string, path: string) {
  const start = await main.page(
    `/_/session/start?host=${encodeURIComponent(host.replace(/:\d+$/, ''))}&return=${encodeURIComponent(path)}`,
  );
  return start;
}

const save = (c: Client, host: string, path: string, html: string, extra: Record<string, string> = {}) =>
  c.post('/_/save', html, {
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}${path}`, ...extra },
  });

test('signing in on the main app sets a host-only session cookie and a hint that carries no authority', async () => {
  const alice = await person();
  const main = kiln.client();
  const res = await login(main, alice);
  const auth = cookieNamed(res, '__Host-auth_token');
  assert.ok(auth, '__Host-auth_token is set');
  assert.doesNotMatch(auth, /;\s*domain=/i, 'host-only: no Domain attribute');
  assert.match(auth, /HttpOnly/i);
  assert.match(auth, /SameSite=Lax/i);
  const hint = cookieNamed(res, 'kiln_signed_in');
  assert.ok(hint);
  assert.match(hint, new RegExp(`;\\s*domain=${kiln.config.rootHostname.replace(/\./g, '\\.')}`, 'i'));
  assert.match(hint, /HttpOnly/i);

  // The browser sends the main cookie to the main app only: a document host sees no session.
  const doc = main.on(kiln.hostOf(alice.username));
  assert.equal(main.jar.get('__Host-auth_token', kiln.hostOf(alice.username)), undefined);
  const page = await doc.get(alice.doc);
  assert.equal(page.status, 200);
  assert.equal(cookieNamed(page, 'isAdminOfCurrentResource'), undefined, 'no edit flag without a host session');
  assert.equal((await save(doc, kiln.hostOf(alice.username), alice.doc, DOC.replace('hello', 'x'))).status, 401);
});

test('a session past its expiry is no session, on the main app and on its document host', async () => {
  const alice = await person();
  const host = kiln.hostOf(alice.username);
  const { main: mainToken, host: hostToken } = await sessionsFor(
    kiln.services.database.db,
    kiln.config,
    alice.id,
    alice.username,
    clock.now(),
  );
  const account = () =>
    kiln.client().get('/_/account', {
      headers: { accept: 'application/json', cookie: `__Host-auth_token=${mainToken}` },
    });
  const saveAs = (html: string) =>
    kiln.client(host).post('/_/save', html, {
      headers: {
        cookie: `__Host-auth_token=${hostToken}`,
        'content-type': 'text/plain;charset=UTF-8',
        'document-url': `http://${host}${alice.doc}`,
      },
    });
  assert.equal((await account()).status, 200);
  assert.equal((await saveAs(DOC.replace('hello', 'before'))).status, 200);
  // A minute past the login's lifetime (the host session ends with it).
  offsetMs = limits.loginTokenLifetimeMs + 60_000;
  try {
    assert.equal((await account()).status, 401);
    assert.equal((await saveAs(DOC.replace('hello', 'after'))).status, 401);
  } finally {
    offsetMs = 0;
  }
  assert.match((await kiln.client(host).get(alice.doc)).text, /before/);
});

test('a main-app session presented on a document host is no session there', async () => {
  const alice = await person();
  const main = kiln.client();
  await login(main, alice);
  const token = main.jar.get('__Host-auth_token', kiln.config.rootDomain)!;
  // As if a browser sent the main app's cookie to the document host (a cookie for the whole root domain did).
  const host = kiln.hostOf(alice.username);
  const res = await kiln.client(host).post('/_/save', DOC.replace('hello', 'stolen'), {
    headers: {
      cookie: `__Host-auth_token=${token}`,
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': `http://${host}${alice.doc}`,
    },
  });
  assert.equal(res.status, 401);
  assert.equal((await kiln.client(host).get(alice.doc)).text, DOC);
});

test("the handshake: a single-use, host-bound grant becomes a host-only session on the owner's host", async () => {
  const alice = await person();
  const bob = await person();
  const main = kiln.client();
  await login(main, alice);
  const aliceHost = kiln.hostOf(alice.username);

  const start = await handshake(main, aliceHost, alice.doc);
  assert.equal(start.status, 302);
  const to = new URL(start.headers.location!);
  assert.equal(to.host, aliceHost);
  assert.equal(to.pathname, '/_/session');
  assert.equal(to.searchParams.get('return'), alice.doc);
  const grant = to.searchParams.get('grant')!;
  assert.match(grant, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(start.headers['referrer-policy'], 'no-referrer');

  // The grant is good on bob's host? No: it was made for alice's.
  const onBob = kiln.client(kiln.hostOf(bob.username));
  const wrongHost = await onBob.page(`/_/session?grant=${grant}&return=/`);
  assert.equal(wrongHost.status, 302);
  assert.equal(cookieNamed(wrongHost, '__Host-auth_token'), undefined);

  const doc = main.on(aliceHost);
  const redeemed = await doc.page(to.pathname + to.search);
  assert.equal(redeemed.status, 302);
  assert.equal(redeemed.headers.location, alice.doc, 'back to the clean URL');
  const cookie = cookieNamed(redeemed, '__Host-auth_token')!;
  assert.ok(cookie, 'a host session cookie');
  assert.doesNotMatch(cookie, /;\s*domain=/i, 'host-only');
  assert.match(cookie, /HttpOnly/i);

  // Used once: a second redemption (a leaked URL) gets nothing.
  const again = await kiln.client(aliceHost).page(to.pathname + to.search);
  assert.equal(cookieNamed(again, '__Host-auth_token'), undefined);

  // Signed in on alice's host as alice: the edit flag and a save.
  const page = await doc.get(alice.doc);
  assert.match(cookieNamed(page, 'isAdminOfCurrentResource') ?? '', /=true/);
  const saved = await save(doc, aliceHost, alice.doc, DOC.replace('hello', 'saved by alice'));
  assert.equal(saved.status, 200, saved.text);

  // The host session is worthless anywhere else: copied to bob's host or the main app, it is nobody.
  const hostToken = main.jar.get('__Host-auth_token', aliceHost)!;
  const onBobWithIt = await kiln.client(kiln.hostOf(bob.username)).post('/_/save', DOC, {
    headers: {
      cookie: `__Host-auth_token=${hostToken}`,
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': `http://${kiln.hostOf(bob.username)}${bob.doc}`,
    },
  });
  assert.equal(onBobWithIt.status, 401);
  const dash = await kiln.client().page('/_/dashboard', { headers: { cookie: `__Host-auth_token=${hostToken}` } });
  assert.equal(dash.status, 302);
  assert.match(dash.headers.location!, /^\/_\/login/);
});

test('a grant expires after 60 seconds', async () => {
  const alice = await person();
  const main = kiln.client();
  await login(main, alice);
  const start = await handshake(main, kiln.hostOf(alice.username), '/');
  const to = new URL(start.headers.location!);
  offsetMs = 61_000;
  try {
    const late = await kiln.client(kiln.hostOf(alice.username)).page(to.pathname + to.search);
    assert.equal(late.status, 302);
    assert.equal(cookieNamed(late, '__Host-auth_token'), undefined);
  } finally {
    offsetMs = 0;
  }
});

test("the main app hands a session only for the person's own host; elsewhere they arrive as a visitor", async () => {
  const alice = await person();
  const bob = await person();
  const main = kiln.client();
  await login(main, alice);
  const res = await handshake(main, kiln.hostOf(bob.username), bob.doc);
  assert.equal(res.status, 302);
  assert.equal(
    res.headers.location,
    `http://${kiln.hostOf(bob.username)}${bob.doc}`,
    'no grant for a host that is not hers',
  );
  // Nobody signed in: the sign-in page first, coming back to the handshake.
  const anon = await handshake(kiln.client(), kiln.hostOf(alice.username), '/');
  assert.equal(anon.status, 302);
  assert.match(anon.headers.location!, /^\/_\/login\?return=%2F_%2Fsession%2Fstart/);
  // Hosts Kiln does not serve: 404.
  assert.equal((await main.page('/_/session/start?host=evil.example&return=/')).status, 404);
  // A return target that leaves the host is not followed.
  const evil = await handshake(main, kiln.hostOf(alice.username), '//evil.example/x');
  assert.ok(!new URL(evil.headers.location!).searchParams.get('return')!.startsWith('//'));
});

test('the owner opening their own host is bounced through the main app once; other hosts never bounce', async () => {
  const alice = await person();
  const bob = await person();
  const main = kiln.client();
  await login(main, alice);
  const aliceDoc = main.on(kiln.hostOf(alice.username));

  // A script's fetch never bounces.
  const fetched = await aliceDoc.get(alice.doc, { headers: { 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' } });
  assert.equal(fetched.status, 200);

  const first = await aliceDoc.get(alice.doc, { headers: NAVIGATE });
  assert.equal(first.status, 302);
  const start = new URL(first.headers.location!);
  assert.equal(start.origin + start.pathname, `${kiln.config.baseUrl}/_/session/start`);
  assert.equal(start.searchParams.get('auto'), '1');
  // Following it lands signed in on her page.
  const viaMain = await main.page(start.pathname + start.search);
  const grantUrl = new URL(viaMain.headers.location!);
  const landed = await aliceDoc.page(grantUrl.pathname + grantUrl.search);
  assert.equal(landed.headers.location, alice.doc);
  const page = await aliceDoc.get(alice.doc, { headers: NAVIGATE });
  assert.equal(page.status, 200);
  assert.match(cookieNamed(page, 'isAdminOfCurrentResource') ?? '', /=true/);

  // Bob's host: alice's hint is not for it: served at once, and it learns nothing of her.
  const onBob = await main.on(kiln.hostOf(bob.username)).get(bob.doc, { headers: NAVIGATE });
  assert.equal(onBob.status, 200);
  assert.equal(cookieNamed(onBob, 'isAdminOfCurrentResource'), undefined);
  assert.doesNotMatch(onBob.text, new RegExp(alice.username));
});

test('a stale hint (signed out on the main app) bounces once and comes straight back', async () => {
  const alice = await person();
  const main = kiln.client();
  await login(main, alice);
  // The main app's session ends, the hint stays behind (another browser profile signed out, say).
  const mainToken = main.jar.get('__Host-auth_token', kiln.config.rootDomain)!;
  await kiln.client().post('/_/logout', {}, { headers: { cookie: `__Host-auth_token=${mainToken}` } });
  const aliceDoc = main.on(kiln.hostOf(alice.username));
  const first = await aliceDoc.get(alice.doc, { headers: NAVIGATE });
  assert.equal(first.status, 302);
  const start = new URL(first.headers.location!);
  const back = await main.page(start.pathname + start.search);
  assert.equal(back.headers.location, `http://${kiln.hostOf(alice.username)}${alice.doc}`);
  assert.ok(
    back.setCookies.some((c) => c.startsWith('kiln_signed_in=;') && /Max-Age=0/i.test(c)),
    'the stale hint is cleared',
  );
  const second = await aliceDoc.get(alice.doc, { headers: NAVIGATE });
  assert.equal(second.status, 200, 'no bounce loop');
});

test('signing out on the main app ends the host sessions of that login; signing out on a host ends the login', async () => {
  const alice = await person();
  const s1 = await sessionsFor(kiln.services.database.db, kiln.config, alice.id, alice.username);
  const host = kiln.hostOf(alice.username);
  const onHost = (token: string) =>
    save(kiln.client(host), host, alice.doc, DOC.replace('hello', String(Math.random())), {
      cookie: `__Host-auth_token=${token}`,
    });
  assert.equal((await onHost(s1.host)).status, 200);
  const out = await kiln.client().post('/_/logout', {}, { headers: { cookie: `__Host-auth_token=${s1.main}` } });
  assert.equal(out.status, 200);
  assert.equal((await onHost(s1.host)).status, 401, 'the host session ended with its login');

  const s2 = await sessionsFor(kiln.services.database.db, kiln.config, alice.id, alice.username);
  const outOnHost = await kiln
    .client(host)
    .post('/_/logout', {}, { headers: { cookie: `__Host-auth_token=${s2.host}` } });
  assert.equal(outOnHost.status, 200);
  const dash = await kiln.client().page('/_/dashboard', { headers: { cookie: `__Host-auth_token=${s2.main}` } });
  assert.equal(dash.status, 302, 'the main-app session ended too');
});

test('two __Host-auth_token cookies in one request (one tossed in by a sibling host) count as signed out', async () => {
  const alice = await person();
  const mallory = await person();
  const a = await sessionsFor(kiln.services.database.db, kiln.config, alice.id, alice.username);
  const m = await sessionsFor(kiln.services.database.db, kiln.config, mallory.id, mallory.username);
  for (const cookie of [
    `__Host-auth_token=${m.main}; __Host-auth_token=${a.main}`,
    `__Host-auth_token=${a.main}; __Host-auth_token=${m.main}`,
  ]) {
    const res = await kiln.client().page('/_/dashboard', { headers: { cookie } });
    assert.equal(res.status, 302);
    assert.match(res.headers.location!, /^\/_\/login/);
  }
  const host = kiln.hostOf(alice.username);
  const tossed = await save(kiln.client(host), host, alice.doc, DOC, {
    cookie: `__Host-auth_token=${m.host}; __Host-auth_token=${a.host}`,
  });
  assert.equal(tossed.status, 401);
});

test("sign-in and sign-up forms are the main app's: a document host sends the browser there", async () => {
  const alice = await person();
  const host = kiln.hostOf(alice.username);
  const res = await kiln.client(host).page('/_/login?return=%2Fnotes.html');
  assert.equal(res.status, 302);
  const to = new URL(res.headers.location!);
  assert.equal(to.origin + to.pathname, `${kiln.config.baseUrl}/_/session/start`);
  assert.equal(to.searchParams.get('host'), host.replace(/:\d+$/, ''));
  assert.equal(to.searchParams.get('return'), '/notes.html');
  const signup = await kiln.client(host).page('/_/signup');
  assert.equal(signup.status, 302);
  assert.ok(signup.headers.location!.startsWith(`${kiln.config.baseUrl}/_/signup`));
  // No password is ever posted to a document host.
  const post = await kiln.client(host).post('/_/login', { email: alice.email, password: alice.password });
  assert.equal(post.status, 404);
  assert.equal(cookieNamed(post, '__Host-auth_token'), undefined);
});
