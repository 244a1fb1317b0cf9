// Who may spend the operator's AI engine, and what the engine is given (issue 43, items 3 and 5), over HTTP:
// - app users (people who signed up on someone's app) never run the built-in engines, confirmed or not;
// - an account runs them only once its email is confirmed (a developer confirms its own address by the
//   email form of its account page);
// - a daily budget per account (requests, and bytes sent to the engine), set per plan on the admin page,
//   which shows each account's usage today; a refused request leaves a line in the account's activity;
// - the engine command runs with PATH, HOME, LANG and the variables AI_EDIT_ENV names, nothing else of the
//   server's environment (no DATABASE_URL, webhook secrets or keys).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { movableClock, startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn, actingAs } from './support/people.ts';
import { mailsTo } from './support/stripe.ts';
import { SseClient } from './support/sse.ts';
import type { Client } from './support/client.ts';
import { createNode } from '../src/nodes/tree.ts';
import { ConfigError, ENV_HELP, loadConfig } from '../src/config.ts';

const ENGINE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support/ai-engine.mjs');
const json = { headers: { accept: 'application/json' } };
const DAY = 24 * 60 * 60 * 1000;

/** What the server's environment holds besides: none of it may reach an engine. */
const SECRETS: Record<string, string> = {
  DATABASE_URL: 'postgres://kiln:db-secret-4711@db.internal/kiln',
  STRIPE_WEBHOOK_SECRET: 'whsec_gate_secret_4712',
  STRIPE_SECRET_KEY: 'sk_live_gate_4713',
  DOMAIN_WEBHOOK_SECRET: 'domain-hook-secret-4714',
  S3_SECRET_ACCESS_KEY: 's3-secret-4715',
  AI_EDIT_OTHER_API_KEY: 'sk-ant-other-engine-4716',
  KILN_SYNC_KEY: `hcsk_${'7'.repeat(64)}`,
};

let kiln: TestKiln;
let port: number;
let dir: string;
const clock = movableClock();
const saved: Record<string, string | undefined> = {};
before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-ai-gate-'));
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  kiln = await startKiln({
    clock: clock.clock,
    env: {
      AI_EDIT_COMMAND: `"${process.execPath}" ${ENGINE} ${dir}/edit edit`,
      AI_EDIT_ENV: 'ENGINE_HINT',
      ENGINE_HINT: 'passed on',
      STRIPE_WEBHOOK_SECRET: SECRETS.STRIPE_WEBHOOK_SECRET,
      DOMAIN_WEBHOOK_SECRET: SECRETS.DOMAIN_WEBHOOK_SECRET,
      AI_EDIT_TIMEOUT_MS: '20000',
    },
  });
  port = Number(new URL(kiln.url).port);
});
after(async () => {
  await kiln.stop();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(dir, { recursive: true, force: true });
});

const ELEMENT = '<p data-edit-id="intro">Hello there</p>';

interface Asker {
  /** A client holding a session of the host. */
  doc: Client;
  host: string;
  page: string;
  bus: SseClient;
}

/** The person behind `c` opens the bus of their own host, with a page of theirs to ask from. */
async function asker(c: Client, owner: { id: number; username: string }): Promise<Asker> {
  const host = kiln.hostOf(owner.username);
  const page = `gate-${owner.username}.html`;
  await createNode(await actingAs(kiln.services, owner.id), {
    ownerId: owner.id,
    parentId: 0,
    type: 'site',
    name: page,
    html: `<!doctype html><html><body>${ELEMENT}</body></html>`,
  });
  const bus = await SseClient.open({
    port,
    host,
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { cookie: c.jar.header(host) ?? '', 'sec-fetch-site': 'same-origin' },
  });
  await bus.comment('connected');
  return { doc: c.on(host), host, page, bus };
}

let n = 0;
async function ask(a: Asker, elementHTML = ELEMENT) {
  const id = `gate-${++n}`;
  const res = await a.doc.post(
    '/_/bus/send',
    {
      channel: 'ai-edit',
      type: 'ai-edit/request',
      v: 1,
      sender: 'page-gate01',
      payload: { id, editId: 'intro', tag: 'p', elementHTML, comment: 'make it friendlier', contextRefs: [] },
    },
    {
      headers: {
        'page-url': `http://${a.host}/${a.page}`,
        origin: `http://${a.host}`,
        'sec-fetch-site': 'same-origin',
      },
    },
  );
  assert.equal(res.status, 200, res.text);
  return id;
}

/** The handler's frames for a request up to its end (`done` or `error`). */
async function answers(a: Asker, id: string) {
  const got: Array<{ type: string; payload: any }> = [];
  for (;;) {
    const f = (await a.bus.next({ timeoutMs: 30_000 })).json;
    if (f.payload?.id !== id || f.sender === 'page-gate01') continue;
    got.push(f);
    if (f.type === 'ai-edit/done' || f.type === 'ai-edit/error') return got;
  }
}

/** The administrator's client (signed in on first use). */
let adminClient: Client | null = null;
async function admin(): Promise<Client> {
  if (!adminClient) {
    adminClient = kiln.client();
    await signedIn(kiln, adminClient, { isSuperadmin: true });
  }
  return adminClient;
}
const setAiEdit = async (body: Record<string, string>) =>
  (await admin()).post(
    '/_/admin/ai-edit',
    { free: '1', personal: '1', maker: '1', ...body },
    { headers: { origin: `http://${kiln.config.rootDomain}`, accept: 'application/json' } },
  );

test('an app user’s AI request is refused, before and after confirming the email: the engine never runs for them', async () => {
  // A developer's document, turned into an app that anyone may sign up on.
  const main = kiln.client();
  const dev = await signedIn(kiln, main);
  const made = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: `public-${dev.username}.html`, html: `<!doctype html><html><body>${ELEMENT}</body></html>` },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(made.status, 201, made.text);
  const on = await main.post(
    `/_/dashboard/nodes/${made.json.node.id}/app`,
    { enableSignups: true },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(on.status, 200, on.text);
  const appHost = kiln.hostOf(dev.username);
  const visitor = kiln.client(appHost);
  const email = `visitor-${dev.username}@example.com`;
  const signup = await visitor.post(
    '/_/app/signup',
    { app: `public-${dev.username}.html`, email, password: 'Appuser-pw-9-kiln' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(signup.status, 201, signup.text);
  const handoff = new URL(signup.json.signInUrl);
  assert.equal((await visitor.on(handoff.host).page(handoff.pathname + handoff.search)).status, 302);
  const user = await kiln.services.database.db
    .selectFrom('accounts')
    .select(['id', 'username'])
    .where('username', '=', signup.json.username)
    .executeTakeFirstOrThrow();
  const a = await asker(visitor, user);
  try {
    const first = await answers(a, await ask(a));
    assert.deepEqual(
      first.map((f) => f.type),
      ['ai-edit/error'],
      'refused before any engine acks',
    );
    assert.equal(first[0].payload.code, 'ai-edit-app-user');
    assert.match(first[0].payload.message, /AI editing is for the developers of this Kiln/);
    // Confirming the email changes nothing for an app user.
    const mail = (await mailsTo(kiln, email)).find((m) => m.text.includes('/_/app/confirm/'))!;
    const link = new URL(/https?:\/\/\S+/.exec(mail.text)![0]);
    assert.equal((await kiln.client(link.host).page(link.pathname)).status, 200);
    const again = await answers(a, await ask(a));
    assert.equal(again.at(-1)!.type, 'ai-edit/error');
    assert.equal(again.at(-1)!.payload.code, 'ai-edit-app-user');
  } finally {
    a.bus.close();
  }
});

test('an unconfirmed account’s request is refused; the same account, once it confirmed its address, runs', async () => {
  const p = newPerson({ emailConfirmed: false });
  const c = kiln.client();
  const person = await signedIn(kiln, c, p);
  const a = await asker(c, person);
  try {
    const refused = await answers(a, await ask(a));
    assert.deepEqual(
      refused.map((f) => f.type),
      ['ai-edit/error'],
    );
    assert.equal(refused[0].payload.code, 'email-unconfirmed');
    assert.match(refused[0].payload.message, /Confirm your email/);
    // Confirming its own address: the account page's email form with the address it has.
    const asked = await c.post('/_/account/email', { email: p.email, password: p.password }, json);
    assert.equal(asked.status, 200, asked.text);
    assert.match(asked.json.msg, /confirmation link/);
    const mail = (await mailsTo(kiln, p.email)).at(-1)!;
    assert.match(mail.subject, /Confirm your email address/);
    const link = /\/_\/account\/email\/[A-Za-z0-9_-]+/.exec(mail.text)![0];
    const confirmed = await kiln.client().post(link, {}, json);
    assert.equal(confirmed.status, 200, confirmed.text);
    assert.equal((await c.get('/_/account', json)).json.account.email, p.email);
    const ran = await answers(a, await ask(a));
    assert.equal(ran.at(-1)!.type, 'ai-edit/done', JSON.stringify(ran.at(-1)));
    assert.equal(ran.at(-1)!.payload.html, '<p data-edit-id="intro">Hello there — edited</p>');
  } finally {
    a.bus.close();
  }
});

test('the daily budget, set per plan by the administrator: the (N+1)th request and the one past the bytes are refused, usage on the admin page, a line in the activity, a new day starts over', async () => {
  const c = kiln.client();
  const person = await signedIn(kiln, c);
  const a = await asker(c, person);
  try {
    // The defaults are on the page; the administrator sets 2 requests a day for the free plan.
    const panel = await (await admin()).get('/_/admin', json);
    assert.ok(panel.json.aiEdit.budgets.free.requests > 2);
    const set = await setAiEdit({ requestsFree: '2', kbFree: '1000' });
    assert.equal(set.status, 200, set.text);
    assert.match(set.json.msg, /free: 2 requests and 1000 KB a day/);
    assert.deepEqual((await (await admin()).get('/_/admin', json)).json.aiEdit.budgets.free, {
      requests: 2,
      bytes: 1000 * 1024,
    });
    for (let i = 0; i < 2; i++) assert.equal((await answers(a, await ask(a))).at(-1)!.type, 'ai-edit/done');
    const third = await answers(a, await ask(a));
    assert.equal(third.at(-1)!.type, 'ai-edit/error');
    assert.equal(third.at(-1)!.payload.code, 'ai-edit-budget');
    assert.match(third.at(-1)!.payload.message, /2 AI edits a day.*used today/);
    // The admin page shows the account's usage today, in JSON and on the page.
    const listed = await (await admin()).get(`/_/admin?q=${person.username}`, json);
    const row = listed.json.accounts.find((r: { username: string }) => r.username === person.username);
    assert.equal(row.aiEditToday.requests, 2);
    assert.ok(row.aiEditToday.bytes > 0);
    const page = await (await admin()).page(`/_/admin?q=${person.username}`);
    assert.match(page.text, /data-label="AI edits today">2 ·/);
    assert.match(page.text, /name="requestsFree"[^>]*value="2"/);
    // The refusal is in the account's activity, so the owner sees why.
    const feed = await c.get('/_/activity', json);
    const lines = feed.json.activity.filter((l: { kind: string }) => l.kind === 'ai-edit');
    assert.equal(lines[0].aiEdit.outcome, 'over budget');
    assert.equal(lines[0].aiEdit.in, 0, 'nothing went to the engine');
    assert.equal(lines.filter((l: any) => l.aiEdit.outcome === 'done').length, 2);
    // A new day (UTC) starts over.
    clock.advance(DAY);
    assert.equal((await answers(a, await ask(a))).at(-1)!.type, 'ai-edit/done');

    // Bytes: a budget one large request fits in and a second does not.
    const big = `<p data-edit-id="intro">${'words '.repeat(400)}</p>`;
    await setAiEdit({ requestsFree: '100', kbFree: '1000' });
    const bc = kiln.client();
    const bp = await signedIn(kiln, bc);
    const ba = await asker(bc, bp);
    try {
      assert.equal((await answers(ba, await ask(ba, big))).at(-1)!.type, 'ai-edit/done');
      const used = (await (await admin()).get(`/_/admin?q=${bp.username}`, json)).json.accounts[0].aiEditToday.bytes;
      assert.ok(used > 1024, `one request sent ${used} bytes`);
      await setAiEdit({ requestsFree: '100', kbFree: String(Math.ceil(used / 1024)) });
      const over = await answers(ba, await ask(ba, big));
      assert.equal(over.at(-1)!.type, 'ai-edit/error');
      assert.equal(over.at(-1)!.payload.code, 'ai-edit-budget');
      assert.match(over.at(-1)!.payload.message, /KB sent to the engine a day/);
    } finally {
      ba.bus.close();
    }
  } finally {
    clock.reset();
    await setAiEdit({ requestsFree: '30', kbFree: '4096' });
    a.bus.close();
  }
});

test('the engine command runs with PATH, HOME, LANG and what AI_EDIT_ENV names: no database URL, webhook secret or key', async () => {
  const c = kiln.client();
  const a = await asker(c, await signedIn(kiln, c));
  try {
    assert.equal((await answers(a, await ask(a))).at(-1)!.type, 'ai-edit/done');
    const raw = readFileSync(path.join(dir, 'edit/env.json'), 'utf8');
    const env = JSON.parse(raw);
    const allowed = new Set(['PATH', 'HOME', 'LANG', 'ENGINE_HINT']);
    assert.deepEqual(
      Object.keys(env).filter((k) => !allowed.has(k)),
      [],
      raw,
    );
    assert.equal(env.ENGINE_HINT, 'passed on');
    assert.equal(env.PATH, process.env.PATH);
    for (const [k, v] of Object.entries(SECRETS)) assert.ok(!raw.includes(v), `${k} reached the engine`);
  } finally {
    a.bus.close();
  }
  // `kiln --help` lists AI_EDIT_ENV; it may not name Kiln's own settings.
  assert.ok(ENV_HELP.some(([k]) => k === 'AI_EDIT_ENV'));
  for (const name of ['DATABASE_URL', 'STRIPE_WEBHOOK_SECRET', 'KILN_SYNC_KEY', 'AI_EDIT_API_KEY'])
    assert.throws(
      () => loadConfig({ AI_EDIT_COMMAND: 'cat', AI_EDIT_ENV: `FOO,${name}` }),
      (err: Error) => err instanceof ConfigError && err.message.includes(name),
    );
});
