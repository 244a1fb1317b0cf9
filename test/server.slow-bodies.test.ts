// Slow request bodies (security review #22, finding 8). A request without credentials (no session of
// this host, no valid sync key that acts on this host (#43, item 6), no valid share token) has
// ANON_BODY_TIMEOUT_MS (here 1 s) to send its body: then it is answered 408 and its connection closed,
// while a signed-in, key-holding or share-guest request keeps REQUEST_TIMEOUT_MS. And one client address holds at most MAX_REQUESTS_PER_ADDRESS (here
// 5) requests in flight in one process: more answer 429 `rate-limited` with Retry-After until one ends
// (answered, aborted or cut); open live streams count only against their own cap.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder } from './support/sync-client.ts';
import { signedIn, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { loadConfig } from '../src/config.ts';
import { createNode } from '../src/nodes/tree.ts';
import { setSharing, shareCookieName } from '../src/sharing/share.ts';
import { authCookieName } from '../src/http/cookies.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';

const CAP = 5;
let capped: TestKiln;
let quick: TestKiln;
before(async () => {
  capped = await startKiln({ env: { MAX_REQUESTS_PER_ADDRESS: String(CAP) } });
  quick = await startKiln({ env: { ANON_BODY_TIMEOUT_MS: '1000' } });
});
after(async () => {
  await capped?.stop();
  await quick?.stop();
});

const portOf = (kiln: TestKiln) => Number(new URL(kiln.url).port);
/** A loopback address of its own (all of 127.0.0.0/8 reaches the server): one client machine. */
const newAddress = () => {
  const b = randomBytes(3);
  return `127.${b[0]}.${b[1]}.${Math.max(2, b[2] % 255)}`;
};

/** Waits until `cond` holds (checked every 20 ms; gives up after 20 s with `what`). */
async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** A request whose body arrives one byte every 200 ms over a raw socket, until `finish()` sends the rest.
 *  The body is JSON after 200 spaces (whitespace JSON allows), so dripping never completes it. */
class SlowBody {
  socket: net.Socket;
  answer = '';
  closed = false;
  private sent = 0;
  private readonly body: string;
  private timer?: NodeJS.Timeout;

  constructor(
    kiln: TestKiln,
    o: {
      address?: string;
      method?: string;
      path: string;
      host?: string;
      headers?: Record<string, string>;
      json?: object;
    },
  ) {
    this.body = ' '.repeat(200) + JSON.stringify(o.json ?? {});
    const headers = {
      host: o.host ?? kiln.config.rootDomain,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(this.body)),
      'x-requested-with': 'fetch',
      ...o.headers,
    };
    const head = `${o.method ?? 'POST'} ${o.path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
    this.socket = net.connect({ port: portOf(kiln), host: '127.0.0.1', localAddress: o.address ?? '127.0.0.1' });
    this.socket.on('connect', () => {
      this.socket.write(head);
      this.drip();
      this.timer = setInterval(() => this.drip(), 200);
    });
    this.socket.on('data', (d) => (this.answer += d.toString('latin1')));
    this.socket.on('close', () => {
      clearInterval(this.timer);
      this.closed = true;
    });
    this.socket.on('error', () => {});
  }

  private drip() {
    if (this.sent < this.body.length - 1 && this.socket.writable) this.socket.write(this.body[this.sent++]);
  }

  /** Sends the rest of the body; resolves with the answer's status once it has arrived. */
  async finish(): Promise<number> {
    clearInterval(this.timer);
    this.socket.write(this.body.slice(this.sent));
    await until(() => /\r\n\r\n/.test(this.answer), 'the answer to a finished body');
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(this.answer)?.[1]);
  }

  get status(): number | undefined {
    const m = /^HTTP\/1\.1 (\d{3})/.exec(this.answer);
    return m ? Number(m[1]) : undefined;
  }

  abort() {
    clearInterval(this.timer);
    this.socket.destroy();
  }
}

/** A plain GET from `address`; resolves with status, headers and body. */
function getFrom(kiln: TestKiln, address: string, path = '/_/health') {
  const c = kiln.client();
  c.address = address;
  return c.get(path, { headers: { accept: 'application/json' } });
}

test('defaults: 30 s for an anonymous body, 64 requests in flight per address', () => {
  const c = loadConfig({});
  assert.equal(c.anonBodyTimeoutMs, 30_000);
  assert.equal(c.maxRequestsPerAddress, 64);
  assert.equal(loadConfig({ ANON_BODY_TIMEOUT_MS: '2500', MAX_REQUESTS_PER_ADDRESS: '7' }).anonBodyTimeoutMs, 2500);
  assert.equal(loadConfig({ MAX_REQUESTS_PER_ADDRESS: '7' }).maxRequestsPerAddress, 7);
  assert.throws(() => loadConfig({ MAX_REQUESTS_PER_ADDRESS: '0' }), /MAX_REQUESTS_PER_ADDRESS/);
});

test('one address holds at most MAX_REQUESTS_PER_ADDRESS requests in flight: the next is 429 until one ends', async () => {
  const address = newAddress();
  const inFlight = () => capped.services.requestsInFlight.count(address);
  const slow = Array.from({ length: CAP }, () => new SlowBody(capped, { address, path: '/_/login' }));
  await until(() => inFlight() === CAP, `${CAP} slow bodies in flight`);

  const refused = await getFrom(capped, address);
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.json.code, 'rate-limited');
  assert.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After');
  assert.equal(refused.headers.connection, 'close');
  const bodyToo = new SlowBody(capped, { address, path: '/_/login' });
  await until(() => bodyToo.closed, 'a refused slow body is answered and its connection closed');
  assert.equal(bodyToo.status, 429);
  assert.equal((await getFrom(capped, newAddress())).status, 200, 'another address is not held back');
  for (const s of slow) assert.equal(s.closed, false, 'the slow bodies are still open');

  // An aborted request gives its slot back.
  slow[0].abort();
  await until(() => inFlight() === CAP - 1, 'the aborted request released its slot');
  assert.equal((await getFrom(capped, address)).status, 200, 'the freed slot serves the next request');
  // An answered one too (the body finished: the login form answers).
  assert.ok((await slow[1].finish()) < 500);
  await until(() => inFlight() === CAP - 2, 'the answered request released its slot');
  for (const s of slow) s.abort();
  await until(() => inFlight() === 0, 'every slot back: nothing leaks');
  assert.equal((await getFrom(capped, address)).status, 200);
});

test('live streams count against their own cap only, not against requests in flight', async () => {
  const { key } = await keyHolder(capped);
  const streams: SseClient[] = [];
  for (let i = 0; i < CAP + 1; i++) {
    const sse = await SseClient.open({
      port: portOf(capped),
      host: capped.config.rootDomain,
      path: '/_/sync/stream',
      headers: { 'x-api-key': key },
    });
    assert.equal(sse.status, 200, `stream ${i + 1} opens`);
    streams.push(sse);
  }
  await until(() => capped.services.requestsInFlight.count('127.0.0.1') === 0, 'open streams hold no request slot');
  assert.equal(capped.services.streamsByAddress.get('127.0.0.1'), CAP + 1);
  for (const s of streams) s.close();
});

test('an anonymous slow body is cut after ANON_BODY_TIMEOUT_MS (408, connection closed); credentials keep the long timeout', async () => {
  // Signed in on the main app, a valid sync key, a share guest's save: all started before the anonymous one.
  const client = quick.client();
  await signedIn(quick, client);
  const signedInBody = new SlowBody(quick, {
    path: '/_/dashboard/nodes',
    headers: { cookie: client.jar.header(quick.config.rootDomain)! },
    json: { type: 'folder', name: 'slowly-made' },
  });
  const { key } = await keyHolder(quick);
  const keyBody = new SlowBody(quick, {
    path: '/_/sync/nodes',
    headers: { 'x-api-key': key },
    json: { type: 'folder', name: 'synced-slowly', parentId: 0 },
  });
  const owner = await signedIn(quick, quick.client());
  const doc = await createNode(await actingAs(quick.services, owner.id), {
    ownerId: owner.id,
    parentId: 0,
    type: 'site',
    name: `shared-slowly-${owner.id}.html`,
    html: '<html><body>x</body></html>',
  });
  const shared = await setSharing(quick.services, doc, true);
  const token = new URL(shared.shareUrl!).searchParams.get('token')!;
  const host = quick.hostOf(owner.username);
  const guestBody = new SlowBody(quick, {
    path: '/_/save',
    host,
    headers: {
      cookie: `${shareCookieName(doc)}=${token}`,
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': `http://${host}/${doc.name}`,
      origin: `http://${host}`,
    },
  });
  const forgedKey = { 'x-api-key': `hcsk_${'0'.repeat(64)}` };
  const forged = new SlowBody(quick, { path: '/_/login', headers: forgedKey });
  // The sync API refuses a bad key before reading the body: answered at once, and the connection closed.
  const refusedEarly = new SlowBody(quick, { path: '/_/sync/nodes', headers: forgedKey });
  const fakeSession = new SlowBody(quick, {
    path: '/_/dashboard/nodes',
    headers: { cookie: `${authCookieName(quick.config)}=not-a-session` },
  });
  const anonymous = new SlowBody(quick, { path: '/_/login' });

  await until(() => refusedEarly.closed, 'a body refused before it is read does not hold its connection');
  assert.match(refusedEarly.answer, /^HTTP\/1\.1 401 [\s\S]*\r\nconnection: close\r\n/i);
  for (const cut of [anonymous, forged, fakeSession]) {
    await until(() => cut.closed, 'the server closes the connection of a body without credentials');
    assert.match(cut.answer, /^HTTP\/1\.1 408 /, 'answered 408 before closing');
    assert.match(cut.answer, /\r\nconnection: close\r\n/i);
  }
  for (const kept of [signedInBody, keyBody, guestBody])
    assert.equal(kept.closed, false, 'a request with credentials outlives the anonymous body timeout');
  assert.equal(await signedInBody.finish(), 201, signedInBody.answer);
  assert.notEqual(await keyBody.finish(), 408, keyBody.answer);
  assert.notEqual(await guestBody.finish(), 408, guestBody.answer);
});

test("a sync key keeps the long timeout only where it may act: the main app, its own host, its teams' hosts", async () => {
  const mine = await keyHolder(quick);
  const other = await keyHolder(quick);
  // A team of `other`'s where the key's person is an editor: its host is one the key acts on (the bus).
  const team = await createTeam(quick.services, { username: `t${other.person.username}`, ownerId: other.person.id });
  await setMember(await actingAs(quick.services, other.person.id), {
    teamId: team.id,
    username: mine.person.username,
    role: 'editor',
  });
  const headers = { 'x-api-key': mine.key };
  const send = { channel: 'slow', type: 'note', v: 1, payload: {}, sender: 'test' };
  const busOn = (username: string) =>
    new SlowBody(quick, { path: '/_/bus/send', host: quick.hostOf(username), headers, json: send });
  const onMain = new SlowBody(quick, {
    path: '/_/sync/nodes',
    headers,
    json: { type: 'folder', name: 'keyed-slowly', parentId: 0 },
  });
  const onOwnHost = busOn(mine.person.username);
  const onTeamHost = busOn(team.username);
  // Another account's host: the key is valid, but acts on nothing there.
  const onOtherHost = busOn(other.person.username);

  await until(() => onOtherHost.closed, 'the server closes a slow body whose key does not act on that host');
  assert.match(onOtherHost.answer, /^HTTP\/1\.1 408 /, 'answered 408 before closing');
  assert.match(onOtherHost.answer, /\r\nconnection: close\r\n/i);
  for (const kept of [onMain, onOwnHost, onTeamHost])
    assert.equal(kept.closed, false, 'a key where it acts outlives the anonymous body timeout');
  assert.equal(await onMain.finish(), 201, onMain.answer);
  assert.equal(await onOwnHost.finish(), 200, onOwnHost.answer);
  assert.equal(await onTeamHost.finish(), 200, onTeamHost.answer);
});
