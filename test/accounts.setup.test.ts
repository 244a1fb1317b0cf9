// First-run setup and the main app's home page, on a fresh, empty Kiln. Tests run in order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson } from './support/people.ts';
import { buildApp } from '../src/http/app.ts';
import { mainHome } from '../src/http/home.ts';

let kiln: TestKiln;
/** The app as built for serving, for GET `/` on the main host: it calls mainHome through the documents
 *  plugin once that is wired; until then the test mounts mainHome at `/` itself. */
let app: FastifyInstance;
before(async () => {
  kiln = await startKiln();
  app = await buildApp(kiln.services);
  if (!app.hasRoute({ method: 'GET', url: '/' })) app.get('/', (req, reply) => mainHome(req, reply, kiln.services));
  await app.ready();
});
after(async () => {
  await app.close();
  await kiln.stop();
});

const HTML = { accept: 'text/html' };
const home = (cookie?: string) =>
  app.inject({
    method: 'GET',
    url: '/',
    headers: { host: kiln.config.rootDomain, ...HTML, ...(cookie ? { cookie } : {}) },
  });

async function superadmins() {
  return kiln.services.database.db
    .selectFrom('people')
    .innerJoin('accounts', 'accounts.id', 'people.account_id')
    .select([
      'accounts.username',
      'accounts.plan',
      'people.is_superadmin',
      'people.email_confirmed',
      'people.account_type',
    ])
    .execute();
}

test('a fresh Kiln sends / and the signup page to /_/setup, which serves its form', async () => {
  const res = await home();
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location, '/_/setup');
  const signup = await kiln.client().page('/_/signup');
  assert.equal(signup.status, 302);
  assert.equal(signup.headers.location, '/_/setup');
  for (const host of [kiln.config.rootDomain, `127.0.0.1:${kiln.config.port}`]) {
    const page = await kiln.client(host).page('/_/setup');
    assert.equal(page.status, 200);
    assert.match(page.text, /<form class="card" method="post" action="\/_\/setup">/);
    for (const name of ['email', 'username', 'password']) assert.match(page.text, new RegExp(`name="${name}"`));
  }
});

test('setup validates like signup: 400 naming the rule, nothing created', async () => {
  const p = newPerson();
  let res = await kiln.client().post('/_/setup', { email: p.email, username: 'admin', password: p.password });
  assert.equal(res.status, 400);
  assert.match(res.json.msg, /reserved/);
  res = await kiln.client().post('/_/setup', { email: p.email, username: p.username, password: '12345678' });
  assert.equal(res.status, 400);
  assert.match(res.json.msg, /common/);
  res = await kiln.client().post('/_/setup', { email: p.email, username: p.username });
  assert.equal(res.status, 400);
  res = await kiln
    .client()
    .post('/_/setup', { email: p.email, username: 'x', password: p.password }, { form: true, headers: HTML });
  assert.equal(res.status, 302);
  const loc = new URL(res.headers.location!, 'http://h');
  assert.equal(loc.pathname, '/_/setup');
  assert.equal(loc.searchParams.get('msgType'), 'error');
  assert.match(loc.searchParams.get('msg')!, /2 to 40 characters/);
  assert.equal((await superadmins()).length, 0);
});

test('setup refuses cross-site posts with 403', async () => {
  const p = newPerson();
  const res = await kiln
    .client()
    .post(
      '/_/setup',
      { email: p.email, username: p.username, password: p.password },
      { form: true, headers: { origin: 'https://evil.example' } },
    );
  assert.equal(res.status, 403);
  assert.equal((await superadmins()).length, 0);
});

test('setup refuses a bad return target with 400 before creating anything', async () => {
  const p = newPerson();
  for (const evil of ['/%0d%0aSet-Cookie:%20x=1', '/%09/evil.example', '%2f%2fevil.example']) {
    const res = await kiln
      .client()
      .post(`/_/setup?return=${evil}`, { email: p.email, username: p.username, password: p.password });
    assert.equal(res.status, 400, evil);
    assert.equal(res.json.code, 'invalid-return');
    assert.equal((await superadmins()).length, 0);
  }
});

test('setup re-checks inside its transaction: an account committed meanwhile makes it answer 409', async () => {
  const { db, dialect } = kiln.services.database;
  const p = newPerson();
  let settled = false;
  let post!: Promise<Awaited<ReturnType<ReturnType<TestKiln['client']>['post']>>>;
  await db.transaction().execute(async (trx) => {
    // Another request's account, not yet committed: the setup POST passes its first (outside) check.
    await trx
      .insertInto('accounts')
      .values({
        kind: 'person',
        username: 'racer',
        plan: 'free',
        has_active_subscription: 0,
        plan_started_at: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    post = kiln.client().post('/_/setup', { email: p.email, username: p.username, password: p.password });
    post.then(() => (settled = true));
    if (dialect === 'postgres') {
      // Commit only once the setup transaction waits for our lock on accounts (or finished without waiting).
      for (;;) {
        const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
        if (settled || waiting.rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  });
  const res = await post;
  assert.equal(res.status, 409);
  assert.match(res.json.msg, /already set up/);
  assert.equal((await superadmins()).length, 0);
  await db.deleteFrom('accounts').where('username', '=', 'racer').execute();
});

test('four simultaneous setup POSTs create exactly one superadmin; the others answer 409', async () => {
  const results = await Promise.all(
    [1, 2, 3, 4].map(() => {
      const p = newPerson();
      return kiln.client().post('/_/setup', { email: p.email, username: p.username, password: p.password });
    }),
  );
  assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409]);
  const winner = results.find((r) => r.status === 201)!;
  assert.equal(winner.json.msgType, 'success');
  assert.ok(
    winner.setCookies.some((c) => c.startsWith('__Host-auth_token=')),
    'the first superadmin is signed in',
  );
  for (const loser of results.filter((r) => r.status === 409)) {
    assert.equal(loser.json.msgType, 'error');
    assert.match(loser.json.msg, /already set up/);
  }
  const people = await superadmins();
  assert.equal(people.length, 1);
  assert.deepEqual(people[0], {
    username: winner.json.username,
    plan: 'maker',
    is_superadmin: 1,
    email_confirmed: 1,
    account_type: 'dev',
  });
});

test('once an account exists: setup GET goes to login (404 for programs), POST answers 409', async () => {
  const page = await kiln.client().page('/_/setup');
  assert.equal(page.status, 302);
  const loc = new URL(page.headers.location!, 'http://h');
  assert.equal(loc.pathname, '/_/login');
  assert.equal(loc.searchParams.get('msgType'), 'error');
  const json = await kiln.client().get('/_/setup');
  assert.equal(json.status, 404);
  assert.equal(json.json.msgType, 'error');

  const p = newPerson();
  const res = await kiln.client().post('/_/setup', { email: p.email, username: p.username, password: p.password });
  assert.equal(res.status, 409);
  assert.match(res.json.msg, /already set up/);
  const browser = await kiln
    .client()
    .post('/_/setup', { email: p.email, username: p.username, password: p.password }, { form: true, headers: HTML });
  assert.equal(browser.status, 302);
  assert.equal(new URL(browser.headers.location!, 'http://h').pathname, '/_/login');
  assert.equal((await superadmins()).length, 1);

  // Setup never answers on a document host.
  const admin = (await superadmins())[0].username;
  const onDoc = await kiln.client(kiln.hostOf(admin)).page('/_/setup');
  assert.equal(onDoc.status, 404);
});

test('the signup page is open once set up; / shows a landing page to strangers and the dashboard to the signed-in', async () => {
  const signup = await kiln.client().page('/_/signup');
  assert.equal(signup.status, 200);

  const anonymous = await home();
  assert.equal(anonymous.statusCode, 200);
  assert.match(anonymous.headers['content-type'] as string, /text\/html/);
  assert.match(anonymous.body, /href="\/_\/login"/);
  assert.match(anonymous.body, /href="\/_\/signup"/);

  const p = newPerson();
  const client = kiln.client();
  const res = await client.post('/_/signup', { email: p.email, username: p.username, password: p.password });
  assert.equal(res.status, 201);
  const signedIn = await home(`__Host-auth_token=${client.jar.get('__Host-auth_token', kiln.config.rootDomain)}`);
  assert.equal(signedIn.statusCode, 302);
  assert.equal(signedIn.headers.location, '/_/dashboard');
});
