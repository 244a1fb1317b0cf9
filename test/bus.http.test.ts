// The message bus of a document host (#27), as hyperclayjs 1.38 (communication/ai-edit.js) speaks it:
// `GET /_/bus/subscribe?channel=ai-edit` must answer OK with an event stream (that is how the page tells
// the bus is there), `: connected` first, unnamed frames `{channel, type, v, payload, sender, origin, seq}`;
// `POST /_/bus/send` answers `{delivered}`, and a refusal's `error` is what the page shows.
// Only the host's owner is on it (a team's owners and editors): everyone else gets 401/403 and no frame.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, freshPostgres, type TestKiln } from './support/kiln.ts';
import { signedIn, newPerson, sessionsFor, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { Client } from './support/client.ts';
import { spawnKilns, type ChildKiln } from './support/child.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { createSyncKey, revokeSyncKey } from '../src/sync/keys.ts';
import { createPerson } from '../src/accounts/people.ts';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const SAME = (host: string) => ({ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' });

function subscribe(
  host: string,
  opts: { client?: Client | null; key?: string; query?: string; headers?: Record<string, string> } = {},
) {
  const cookie = opts.client?.jar.header(host);
  return SseClient.open({
    port,
    host,
    path: `/_/bus/subscribe?${opts.query ?? 'channel=ai-edit'}`,
    headers: {
      ...(cookie ? { cookie } : {}),
      ...(opts.key ? { 'x-api-key': opts.key } : { 'sec-fetch-site': 'same-origin' }),
      ...opts.headers,
    },
  });
}

function send(client: Client, host: string, body: object, headers: Record<string, string> = SAME(host)) {
  return client
    .on(host)
    .post('/_/bus/send', body, { headers: { 'page-url': `http://${host}/index.html`, ...headers } });
}

const request = (type = 'ai-edit/request', payload: unknown = { id: 'req-1' }) => ({
  channel: 'ai-edit',
  type,
  v: 1,
  payload,
  sender: 'page-abc123',
});

async function owner() {
  const main = kiln.client();
  const p = await signedIn(kiln, main);
  return { main, p, host: kiln.hostOf(p.username) };
}

test('the owner subscribes (an event stream, `: connected` first) and every subscriber hears a message with its seq', async () => {
  const { main, host } = await owner();
  const a = await subscribe(host, { client: main });
  const b = await subscribe(host, { client: main, query: 'channel=other&channel=ai-edit' });
  try {
    assert.equal(a.status, 200);
    assert.match(String(a.headers['content-type']), /^text\/event-stream/);
    assert.equal(a.headers['cache-control'], 'no-cache');
    await a.comment('connected');
    await b.comment('connected');
    assert.ok(a.raw.startsWith(': connected\n\n'));
    const res = await send(main, host, { ...request('note', { hello: 'world' }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.delivered, 2);
    for (const s of [a, b]) {
      const f = await s.next();
      assert.equal(f.id, undefined, 'bus frames carry no id (no replay)');
      assert.equal(f.event, undefined);
      assert.deepEqual(
        { ...f.json, seq: typeof f.json.seq },
        {
          channel: 'ai-edit',
          type: 'note',
          v: 1,
          payload: { hello: 'world' },
          sender: 'page-abc123',
          origin: `http://${host}/index.html`,
          seq: 'number',
        },
      );
    }
    // A channel nobody listens on: delivered 0, and the ai-edit subscribers hear nothing of it.
    const other = await send(main, host, { channel: 'elsewhere', type: 't', payload: 1 });
    assert.equal(other.json.delivered, 0);
    const again = await send(main, host, request('note', { n: 2 }));
    assert.equal(again.status, 200);
    assert.equal((await a.next()).json.payload.n, 2, 'the message on another channel never reached this stream');
  } finally {
    a.close();
    b.close();
  }
});

test('with no engine set and no agent of the owner’s, an AI edit request hears why (not a silent timeout)', async () => {
  const { main, host } = await owner();
  const s = await subscribe(host, { client: main });
  try {
    await s.comment('connected');
    await send(
      main,
      host,
      request('ai-edit/request', { id: 'req-9', tag: 'p', elementHTML: '<p>x</p>', comment: 'hi' }),
    );
    assert.equal((await s.next()).json.type, 'ai-edit/request');
    const answer = (await s.next()).json;
    assert.equal(answer.type, 'ai-edit/error');
    assert.equal(answer.payload.id, 'req-9');
    assert.match(answer.payload.message, /not set up on this Kiln.*kiln ai-edit serve/);
  } finally {
    s.close();
  }
});

test('refusals: anonymous and signed-in strangers 401, another host’s origin 403, bad channels and bodies 400, each with `error`', async () => {
  const { main, host } = await owner();
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  for (const who of [null, stranger]) {
    const s = await subscribe(host, { client: who });
    assert.equal(s.status, 401, s.body);
    assert.equal(JSON.parse(s.body).code, 'login-required');
    assert.ok(!s.raw.includes('data:'));
    s.close();
    const r = await send(who ?? kiln.client(), host, request());
    assert.equal(r.status, 401);
    assert.equal(typeof r.json.error, 'string');
    // Nobody learns what the bus would take: a bad body or channel is refused as nobody first.
    assert.equal((await send(who ?? kiln.client(), host, { channel: 'Bad!' })).status, 401);
    const badSub = await subscribe(host, { client: who, query: 'channel=UPPER' });
    assert.equal(badSub.status, 401);
    badSub.close();
  }
  // The owner's own cookie, posted by a script of another account's host (same site, other origin).
  const evil = kiln.hostOf('mallory');
  const cross = await send(main, host, request(), { origin: `http://${evil}`, 'sec-fetch-site': 'same-site' });
  assert.equal(cross.status, 403);
  assert.equal(cross.json.code, 'cross-origin');
  const crossSub = await subscribe(host, { client: main, headers: { 'sec-fetch-site': 'cross-site' } });
  assert.equal(crossSub.status, 403);
  crossSub.close();
  for (const query of ['', 'channel=', 'channel=UPPER', `channel=${'x'.repeat(65)}`, 'channel=a%20b']) {
    const s = await subscribe(host, { client: main, query });
    assert.equal(s.status, 400, `${query}: ${s.body}`);
    assert.match(JSON.parse(s.body).error, /channel/i);
    assert.equal(JSON.parse(s.body).code, 'invalid-body');
    s.close();
  }
  for (const body of [{ channel: 'Bad!', type: 't' }, { channel: 'ai-edit', type: '' }, { channel: 'ai-edit' }]) {
    const r = await send(main, host, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(typeof r.json.error, 'string');
    assert.equal(r.json.code, 'invalid-body');
  }
  const notJson = await main.on(host).post('/_/bus/send', '{nope', {
    headers: { 'content-type': 'application/json', ...SAME(host) },
  });
  assert.equal(notJson.status, 400);
  assert.equal(notJson.json.error, 'The body is not valid JSON.');
  // The page a message names is a page of this host.
  const elsewhere = await send(main, host, request(), { ...SAME(host), 'page-url': `http://${evil}/index.html` });
  assert.equal(elsewhere.status, 400);
  assert.equal(elsewhere.json.code, 'bad-document-url');
  // The bus is a document host's: the main app has none.
  assert.equal((await main.post('/_/bus/send', request())).status, 404);
});

test('a message over 10 MB is refused with 413 and reaches nobody', async () => {
  const { main, host } = await owner();
  const s = await subscribe(host, { client: main });
  try {
    await s.comment('connected');
    const big = { ...request('note'), payload: 'x'.repeat(10 * 1024 * 1024) };
    const r = await send(main, host, big);
    assert.equal(r.status, 413);
    assert.equal(typeof r.json.error, 'string');
    await send(main, host, request('after'));
    assert.equal((await s.next()).json.type, 'after', 'the large message never reached the subscriber');
  } finally {
    s.close();
  }
});

test('one account’s messages never reach another account’s subscribers', async () => {
  const alice = await owner();
  const bob = await owner();
  const bobs = await subscribe(bob.host, { client: bob.main });
  const alices = await subscribe(alice.host, { client: alice.main });
  try {
    await bobs.comment('connected');
    await alices.comment('connected');
    assert.equal((await send(alice.main, alice.host, request('secret'))).json.delivered, 1);
    assert.equal((await send(bob.main, bob.host, request('mine'))).status, 200);
    assert.equal((await bobs.next()).json.type, 'mine', 'bob hears his own message and nothing of alice’s before it');
    assert.equal((await alices.next()).json.type, 'secret');
  } finally {
    bobs.close();
    alices.close();
  }
});

test('teams: owners and editors are on the team host’s bus, a viewer is refused 403, a stranger 401', async () => {
  const o = await owner();
  const team = await createTeam(kiln.services, { username: `t${o.p.username}`, ownerId: o.p.id, plan: 'maker' });
  const host = kiln.hostOf(team.username);
  const people: Record<string, Client> = { owner: o.main };
  for (const role of ['editor', 'viewer'] as const) {
    const c = kiln.client();
    const p = await signedIn(kiln, c);
    await setMember(await actingAs(kiln.services, o.p.id), { teamId: team.id, username: p.username, role });
    people[role] = c;
  }
  const entered: Record<string, Client> = {};
  for (const [role, c] of Object.entries(people)) entered[role] = await c.enter(host, '/');
  const editorSub = await subscribe(host, { client: entered.editor });
  try {
    assert.equal(editorSub.status, 200);
    await editorSub.comment('connected');
    const r = await send(entered.owner, host, request('from-owner'));
    assert.equal(r.status, 200, r.text);
    assert.equal((await editorSub.next()).json.type, 'from-owner');
    const viewer = await subscribe(host, { client: entered.viewer });
    assert.equal(viewer.status, 403);
    assert.equal(JSON.parse(viewer.body).code, 'viewer');
    viewer.close();
    const vs = await send(entered.viewer, host, request());
    assert.equal(vs.status, 403);
    assert.equal(vs.json.code, 'viewer');
  } finally {
    editorSub.close();
  }
});

test('sync keys: the account’s own key is on its bus; another account’s key is refused 403; a revoked key’s stream ends', async () => {
  const alice = await owner();
  const bob = await owner();
  const aliceKey = await createSyncKey(kiln.services, alice.p.id);
  const bobKey = await createSyncKey(kiln.services, bob.p.id);
  const other = await subscribe(alice.host, { key: bobKey.key });
  assert.equal(other.status, 403);
  other.close();
  const otherSend = await kiln
    .client(alice.host)
    .post('/_/bus/send', request(), { headers: { 'x-api-key': bobKey.key } });
  assert.equal(otherSend.status, 403);
  assert.equal((await subscribe(alice.host, { key: 'hcsk_nope' })).status, 401);
  const agent = await subscribe(alice.host, { key: aliceKey.key });
  assert.equal(agent.status, 200);
  await agent.comment('connected');
  const r = await send(alice.main, alice.host, request());
  assert.equal(r.json.delivered, 1);
  assert.equal((await agent.next()).json.type, 'ai-edit/request');
  const fromAgent = await kiln.client(alice.host).post('/_/bus/send', request('ai-edit/ack'), {
    headers: { 'x-api-key': aliceKey.key },
  });
  assert.equal(fromAgent.status, 200, fromAgent.text);
  await revokeSyncKey(kiln.services, alice.p.id, aliceKey.id);
  await agent.end();
  assert.equal((await subscribe(alice.host, { key: aliceKey.key })).status, 401);
});

test('`/_/meta` says what a send’s `delivered` counts: the subscribers of the process that took it', async () => {
  const { host } = await owner();
  const meta = await kiln.client(host).get('/_/meta');
  assert.equal(meta.status, 200);
  assert.equal(meta.json.bus.deliveredCounts, 'process');
});

// Two Kiln processes on one PostgreSQL and one Redis: a message sent through one reaches the account's
// subscribers on the other, and no other account's.
const REDIS_URL = process.env.KILN_TEST_REDIS_URL;
test('across two processes: delivered to the account’s subscribers on the other process, and to no other account’s', {
  skip: storage === 'postgres' && REDIS_URL ? false : 'two processes need PostgreSQL and Redis (the PostgreSQL pass)',
}, async () => {
  const pgdb = await freshPostgres();
  const dirs = [0, 1, 2].map(() => mkdtempSync(path.join(os.tmpdir(), 'kiln-bus-')));
  const env = (dir: string) => ({
    DATABASE_URL: pgdb.url,
    REDIS_URL: REDIS_URL!,
    DATA_DIR: dir,
    ROOT_DOMAIN: 'kiln.localhost:8080',
    LOG_LEVEL: 'error',
  });
  const setup = await createServices(loadConfig(env(dirs[2])));
  const made: Array<{ username: string; host: string }> = [];
  try {
    for (let i = 0; i < 2; i++) {
      const p = await createPerson(setup, newPerson());
      const sessions = await sessionsFor(setup.database.db, setup.config, p.id, p.username);
      made.push({ username: p.username, host: sessions.host });
    }
  } finally {
    await closeServices(setup);
  }
  let a: ChildKiln | undefined;
  let b: ChildKiln | undefined;
  try {
    [a, b] = await spawnKilns([env(dirs[0]), env(dirs[1])]);
    const host = (i: number) => `${made[i].username}.kiln.localhost:8080`;
    const cookie = (i: number) => `__Host-auth_token=${made[i].host}`;
    const open = (k: ChildKiln, i: number) =>
      SseClient.open({
        port: k.port,
        host: host(i),
        path: '/_/bus/subscribe?channel=ai-edit',
        headers: { cookie: cookie(i) },
      });
    const mine = await open(b, 0);
    const theirs = await open(b, 1);
    try {
      assert.equal(mine.status, 200, mine.body);
      await mine.comment('connected');
      await theirs.comment('connected');
      const sent = await new Client(a.port, host(0)).post('/_/bus/send', request('across'), {
        headers: { cookie: cookie(0) },
      });
      assert.equal(sent.status, 200, sent.text);
      assert.equal((await mine.next()).json.type, 'across');
      // Heard on the other process, counted by the one that took it (none of its own): as /_/meta says.
      assert.equal(sent.json.delivered, 0);
      assert.equal((await new Client(a.port, host(0)).get('/_/meta')).json.bus.deliveredCounts, 'process');
      await new Client(a.port, host(1)).post('/_/bus/send', request('theirs'), { headers: { cookie: cookie(1) } });
      assert.equal((await theirs.next()).json.type, 'theirs', 'the other account heard only its own message');
    } finally {
      mine.close();
      theirs.close();
    }
  } finally {
    await Promise.all([a?.kill(), b?.kill()]);
    await pgdb.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
});
