// A signed-in person's page view answered from memory (src/http/hot-path.ts, issue #49): the route's answer to the
// same request is kept for their session and replayed before the framework, and it goes as soon as anything it
// depends on changes, in every process: the session (signed out, or ended by a suspension), the person's account
// (suspended), their membership of the team whose host it is (removed) and their role there (made a viewer, made an
// editor), the document (saved), the session's own end. Each test first waits until the process that will be asked
// answers the person's page from memory (its hot answers count goes up), then makes the change through the OTHER
// process's HTTP, then asks once: the very next request must be answered as the change says.
//
// With KILN_TEST_STORAGE=postgres (and KILN_TEST_REDIS_URL) the views go to process B and the changes to process A,
// two `kiln serve` children on one PostgreSQL and one Redis; with SQLite both are one Kiln (in this process).
// Against a cache that is never dropped every test but the first fails: B would answer from memory as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKiln, storage, freshPostgres, movableClock, type TestKiln } from './support/kiln.ts';
import { kilnRun, spawnKilns, type ChildKiln } from './support/child.ts';
import { Client, type Res } from './support/client.ts';
import { actingAs, newPerson, sessionsFor } from './support/people.ts';
import { hotAnswers } from './support/metrics.ts';
import { until } from './support/wait.ts';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import type { Services } from '../src/services.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createHostSession, createLogin } from '../src/accounts/sessions.ts';
import { authCookieName } from '../src/http/cookies.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { createNode, setVisibility } from '../src/nodes/tree.ts';
import { limits } from '../src/limits.ts';

const REDIS_URL = process.env.KILN_TEST_REDIS_URL;
const twoProcesses = storage === 'postgres' && !!REDIS_URL;
const ROOT = 'kiln.localhost:8080';

/** Where the views go (B) and where the changes go (A): one Kiln on SQLite. */
let ports: { a: number; b: number };
/** This process's services on the same database, for setting up people, teams and documents. */
let setup: Services;
let kiln: TestKiln | undefined;
let children: ChildKiln[] = [];
let dropDb: (() => Promise<void>) | undefined;
const dirs: string[] = [];
/** The environment the `kiln` command line runs with to change the same instance. */
let cliEnv: Record<string, string>;

before(async () => {
  if (!twoProcesses) {
    kiln = await startKiln();
    setup = kiln.services;
    const port = Number(new URL(kiln.url).port);
    ports = { a: port, b: port };
    cliEnv = { DATA_DIR: kiln.config.dataDir, ROOT_DOMAIN: ROOT };
    return;
  }
  const pg = await freshPostgres();
  dropDb = pg.drop;
  for (let i = 0; i < 3; i++) dirs.push(mkdtempSync(path.join(os.tmpdir(), 'kiln-ownerview-')));
  const env = (dir: string) => ({
    DATABASE_URL: pg.url,
    REDIS_URL: REDIS_URL!,
    DATA_DIR: dir,
    ROOT_DOMAIN: ROOT,
    LOG_LEVEL: 'error',
  });
  cliEnv = env(dirs[2]);
  setup = await createServices(loadConfig(cliEnv));
  children = await spawnKilns([env(dirs[0]), env(dirs[1])]);
  ports = { a: children[0].port, b: children[1].port };
});

after(async () => {
  await Promise.all(children.map((c) => c.kill()));
  if (twoProcesses && setup) await closeServices(setup);
  await kiln?.stop();
  await dropDb?.();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const page = (text: string) => `<!DOCTYPE html>\n<html><body><h1>${text}</h1></body></html>\n`;
const hostOf = (username: string) => `${username}.${ROOT}`;
/** A browser's top-level page load. */
const NAVIGATION = {
  accept: 'text/html',
  'sec-fetch-dest': 'document',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-site': 'none',
};
const hasToolbar = (r: Res) => r.text.includes('data-kiln-toolbar');

/** A person with a login (its cookie in `main`, a browser on the main app) and a session on `host` (default: their
 *  own), its cookie in `doc`: the same browser's tab on that host, its jar apart so that what the main app clears
 *  stays there (as another tab or a copied cookie would keep it). */
async function person(over: Parameters<typeof newPerson>[0] = {}, host?: string) {
  const p = await createPerson(setup, newPerson(over));
  const docHost = host ?? hostOf(p.username);
  const { db } = setup.database;
  const login = await createLogin(db, p.id, new Date());
  const session = await createHostSession(
    db,
    { id: login.id, accountId: p.id, expiresAt: login.expiresAt },
    docHost.replace(/:\d+$/, ''),
    new Date(),
  );
  const name = authCookieName(setup.config);
  const main = new Client(ports.a, ROOT);
  main.jar.store(ROOT, `${name}=${login.token}; Path=/; HttpOnly`);
  const b = new Client(ports.b, docHost);
  b.jar.store(docHost, `${name}=${session.token}; Path=/; HttpOnly`);
  const a = new Client(ports.a, docHost);
  a.jar = b.jar;
  return { ...p, main, b, a, host: docHost };
}

/** A private document of `ownerId`'s (a person or a team) made by `by`. */
async function privateDoc(by: number, ownerId: number, name: string, s: Services = setup) {
  const ctx = await actingAs(s, by);
  const node = await createNode(ctx, { ownerId, parentId: 0, type: 'site', name, html: page(name) });
  await setVisibility(ctx, { nodeId: node.id, visibility: 'private' });
  return node;
}

/** The process that takes `client`'s requests (B) answers this page view from memory: asked until its hot answers
 *  count grows by the view (the first answer sets the page's cookies, the next one is kept, the one after that is
 *  the kept one). Returns that answer. */
async function servedFromMemory(client: Client, url: string, headers: Record<string, string> = NAVIGATION) {
  return (await keptAfter(client, url, headers)).kept;
}

/** `servedFromMemory`, with the route's answer to the request just before (the same request: its cookies no longer
 *  changed). */
async function keptAfter(client: Client, url: string, headers: Record<string, string>) {
  const metrics = new Client(client.port, ROOT);
  let last: Res | undefined;
  let route: Res | undefined;
  let cookie = '';
  await until(
    async () => {
      const n = await hotAnswers(metrics);
      const asked = client.jar.header(client.host);
      const r = await client.get(url, { headers });
      const hot = (await hotAnswers(metrics)) === n + 1;
      if (!hot) {
        route = r;
        cookie = asked;
      }
      last = r;
      return hot && asked === cookie;
    },
    { what: `${client.host}${url} from memory`, timeout: 20_000 },
  );
  return { kept: last!, route: route! };
}

test('the kept answer is the route’s, byte for byte: its 200 (toolbar, cookies, private, Vary) and its 304', async () => {
  const owner = await person({ plan: 'maker' });
  await privateDoc(owner.id, owner.id, `${owner.username}-notes.html`);
  const url = `/${owner.username}-notes.html`;
  // The route's answer to a request (its cookies settled), then the same request answered from memory.
  const { route, kept } = await keptAfter(owner.b, url, NAVIGATION);
  const { date: _d1, ...routeHeaders } = route.headers;
  const { date: _d2, ...keptHeaders } = kept.headers;
  assert.deepEqual(keptHeaders, routeHeaders);
  assert.equal(kept.status, 200);
  assert.ok(kept.body.equals(route.body));
  assert.ok(hasToolbar(kept), 'the toolbar’s tag');
  assert.equal(kept.headers['cache-control'], 'private, no-cache');
  assert.equal(kept.headers.vary, 'Cookie');
  assert.match(String(kept.headers['set-cookie']), /isAdminOfCurrentResource=true/);
  assert.match(String(kept.headers['content-security-policy']), /frame-ancestors 'self'/);
  assert.equal(kept.headers['x-frame-options'], 'SAMEORIGIN');
  // Revalidation: the route's 304 (with the 200's caching headers), then the same from memory.
  const conditional = { ...NAVIGATION, 'if-none-match': String(kept.headers.etag) };
  const { route: route304, kept: kept304 } = await keptAfter(owner.b, url, conditional);
  assert.equal(route304.status, 304);
  assert.equal(kept304.status, 304);
  const { date: _d3, ...h304 } = route304.headers;
  const { date: _d4, ...k304 } = kept304.headers;
  assert.deepEqual(k304, h304);
  assert.equal(k304['cache-control'], 'private, no-cache');
  assert.equal(k304.vary, 'Cookie');
  // A HEAD is the kept 200 without its body.
  const head = await owner.b.request('HEAD', url, { headers: NAVIGATION });
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.equal(head.headers['content-length'], kept.headers['content-length']);
});

test('signed out through the other process: the very next view of a private page is refused', async () => {
  const owner = await person({ plan: 'maker' });
  await privateDoc(owner.id, owner.id, `${owner.username}-diary.html`);
  assert.ok(hasToolbar(await servedFromMemory(owner.b, `/${owner.username}-diary.html`)));
  // The main app's sign-out ends the login and every host session of it; this tab keeps its cookie.
  const out = await owner.main.post('/_/logout', {});
  assert.equal(out.status, 200, out.text);
  const next = await owner.b.get(`/${owner.username}-diary.html`, { headers: NAVIGATION });
  assert.equal(next.status, 404, 'the revoked session is nobody: a private page is not there');
  assert.equal(hasToolbar(next), false);
  assert.equal((await owner.a.get(`/${owner.username}-diary.html`, { headers: NAVIGATION })).status, 404);
});

test('every sign-in ended from the account page: the very next view is refused', async () => {
  const owner = await person({ plan: 'maker' });
  await privateDoc(owner.id, owner.id, `${owner.username}-ledger.html`);
  assert.ok(hasToolbar(await servedFromMemory(owner.b, `/${owner.username}-ledger.html`)));
  const ended = await owner.main.post('/_/account/sessions/end-all', {});
  assert.equal(ended.status, 200, ended.text);
  assert.equal((await owner.b.get(`/${owner.username}-ledger.html`, { headers: NAVIGATION })).status, 404);
});

/** A team with a private document, its owner, and a member in `role` with a session on the team's host. */
async function team(role: 'editor' | 'viewer') {
  const owner = await person({ plan: 'maker' });
  const t = await createTeam(setup, { username: `t${owner.username}`, ownerId: owner.id, plan: 'maker' });
  const host = hostOf(t.username);
  const member = await person({}, host);
  await setMember(await actingAs(setup, owner.id), { teamId: t.id, username: member.username, role });
  const doc = await privateDoc(owner.id, t.id, `${t.username}-plan.html`);
  return { owner, team: t, member, url: `/${doc.name}` };
}

const setRole = (owner: { main: Client }, teamId: number, username: string, role: string) =>
  owner.main.post(`/_/dashboard/teams/${teamId}/members`, { username, role });

test('a member removed through the other process: the very next view of the team’s private page is refused', async () => {
  const { owner, team: t, member, url } = await team('editor');
  assert.ok(hasToolbar(await servedFromMemory(member.b, url)));
  const removed = await owner.main.post(`/_/dashboard/teams/${t.id}/members/${member.id}/remove`, {});
  assert.equal(removed.status, 200, removed.text);
  const next = await member.b.get(url, { headers: NAVIGATION });
  assert.equal(next.status, 404, 'a former member is a visitor there');
  assert.equal((await member.a.get(url, { headers: NAVIGATION })).status, 404);
});

test('an editor made a viewer: the very next view has no edit controls; made an editor again: it has them', async () => {
  const { owner, team: t, member, url } = await team('editor');
  assert.ok(hasToolbar(await servedFromMemory(member.b, url)));
  assert.equal((await setRole(owner, t.id, member.username, 'viewer')).status, 200);
  const asViewer = await member.b.get(url, { headers: NAVIGATION });
  assert.equal(asViewer.status, 200, 'a viewer reads the team’s private pages');
  assert.equal(hasToolbar(asViewer), false);
  assert.match(String(asViewer.headers['set-cookie']), /isAdminOfCurrentResource=;/, 'the edit cookie is removed');
  // The viewer's page is kept in turn; a promotion (which ends no grant) drops it as well.
  assert.equal(hasToolbar(await servedFromMemory(member.b, url)), false);
  assert.equal((await setRole(owner, t.id, member.username, 'editor')).status, 200);
  const asEditor = await member.b.get(url, { headers: NAVIGATION });
  assert.ok(hasToolbar(asEditor), 'edit controls at once');
  assert.match(String(asEditor.headers['set-cookie']), /isAdminOfCurrentResource=true/);
});

test('an editor made a viewer by the `kiln` command line (a process of its own; on SQLite with a bus of its own): the very next view has no edit controls', async () => {
  const { team: t, member, url } = await team('editor');
  assert.ok(hasToolbar(await servedFromMemory(member.b, url)));
  const cli = await kilnRun(cliEnv, [
    'team',
    'member',
    'add',
    '--team',
    t.username,
    '--user',
    member.username,
    '--role',
    'viewer',
  ]);
  assert.equal(cli.code, 0, cli.out);
  const next = await member.b.get(url, { headers: NAVIGATION });
  assert.equal(next.status, 200, 'a viewer reads the team’s private pages');
  assert.equal(hasToolbar(next), false);
  assert.equal(hasToolbar(await member.a.get(url, { headers: NAVIGATION })), false);
});

test('a member’s account suspended by an administrator: the very next view of the team’s page is refused', async () => {
  const { member, url } = await team('viewer');
  const admin = await person({ isSuperadmin: true });
  assert.equal((await servedFromMemory(member.b, url)).status, 200);
  // The team's host is not suspended: only the member is.
  const done = await admin.main.post(`/_/admin/accounts/${member.id}/suspend`, { suspended: true });
  assert.equal(done.status, 200, done.text);
  assert.equal((await member.b.get(url, { headers: NAVIGATION })).status, 404);
});

test('a save through the other process: the very next view has the new bytes', async () => {
  const owner = await person({ plan: 'maker' });
  await privateDoc(owner.id, owner.id, `${owner.username}-draft.html`);
  assert.match((await servedFromMemory(owner.b, `/${owner.username}-draft.html`)).text, /draft\.html/);
  const saved = await owner.a.post('/_/save', page('second draft'), {
    headers: { 'content-type': 'text/plain', 'document-url': `http://${owner.host}/${owner.username}-draft.html` },
  });
  assert.equal(saved.status, 200, saved.text);
  const next = await owner.b.get(`/${owner.username}-draft.html`, { headers: NAVIGATION });
  assert.match(next.text, /second draft/);
  assert.ok(hasToolbar(next));
});

test('a session that expires is refused at once, though its page was kept', async () => {
  // One Kiln in this process, on a clock the test moves.
  const moved = movableClock();
  const k = await startKiln({ clock: moved.clock });
  try {
    const p = await createPerson(k.services, newPerson({ plan: 'maker' }));
    const sessions = await sessionsFor(k.services.database.db, k.config, p.id, p.username);
    await privateDoc(p.id, p.id, `${p.username}-soon.html`, k.services);
    const doc = k.client(k.hostOf(p.username));
    doc.jar.store(doc.host, `${authCookieName(k.config)}=${sessions.host}; Path=/; HttpOnly`);
    assert.ok(hasToolbar(await servedFromMemory(doc, `/${p.username}-soon.html`)));
    moved.advance(limits.loginTokenLifetimeMs + 1000);
    assert.equal((await doc.get(`/${p.username}-soon.html`, { headers: NAVIGATION })).status, 404);
  } finally {
    await k.stop();
  }
});
