// The hot path (src/http/hot-path.ts) with a slow bus: the process that made a change drops what it
// keeps of the account at once, before its own event comes back from Redis; other processes drop theirs
// when the event reaches them. Runs in the PostgreSQL + Redis run (Redis behind a proxy that holds back
// every pub/sub message from Redis until the test lets it through, while command answers pass at once).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { signedIn } from './support/people.ts';
import type { Client } from './support/client.ts';
import { saveDocument } from '../src/save/pipeline.ts';
import { hotAnswers } from './support/metrics.ts';
import { until } from './support/wait.ts';
import { channels, type KilnEvent } from '../src/events/bus.ts';

const REDIS = process.env.KILN_TEST_REDIS_URL;
const skip = (storage !== 'postgres' || !REDIS) && 'Redis is used by the PostgreSQL + Redis run only';

let proxy: TcpProxy;
let kiln: TestKiln;
let main: Client;
let docHost: string;
let accountId: number;
const PAGE = (text: string) => `<!DOCTYPE html>\n<html><body><p>${text}</p></body></html>\n`;

before(async () => {
  if (skip) return;
  const u = new URL(REDIS!);
  proxy = await startTcpProxy(u.hostname, Number(u.port || 6379));
  kiln = await startKiln({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
  main = kiln.client();
  const alice = await signedIn(kiln, main);
  docHost = kiln.hostOf(alice.username);
  accountId = alice.id;
});
after(async () => {
  await kiln?.stop();
  await proxy?.close();
});

test('after a save, this process never answers from what it kept before it, though the event comes back from Redis late', {
  skip,
}, async () => {
  const created = await main.post('/_/dashboard/nodes', { type: 'site', name: 'slow-bus.html', html: PAGE('v0') });
  assert.equal(created.status, 201, created.text);
  const id = created.json.node.id;
  const visitor = () => kiln.client(docHost);
  // The account's watch subscribes through the proxy; wait until pages are kept and served from memory.
  const hot = () => hotAnswers(kiln.client());
  const deadline = Date.now() + 10_000;
  for (let n = await hot(); (await hot()) === n && Date.now() < deadline; ) await visitor().get('/slow-bus.html');
  assert.ok(Date.now() < deadline, 'pages are served from memory');
  // What of the account's channel comes back to this process from Redis (with the hot path's watch).
  const heard: KilnEvent[] = [];
  const stop = kiln.services.events.subscribe(channels.account(accountId), (e) => heard.push(e));
  await kiln.services.events.subscribed(channels.account(accountId));
  try {
    for (let i = 1; i <= 3; i++) {
      await visitor().get('/slow-bus.html');
      // RESP pub/sub deliveries are `*3 $7 message …`; nothing else Kiln reads from Redis contains that.
      proxy.hold((chunk) => chunk.includes('\r\nmessage\r\n'));
      const html = PAGE(`v${i}`);
      const before = heard.length;
      await saveDocument(kiln.services, {
        nodeId: id,
        bytes: Buffer.from(html),
        by: { kind: 'browser', accountId: null, writer: null },
      });
      const res = await visitor().get('/slow-bus.html');
      // Its own event has not come back (the proxy holds it): only the local drop can have made this fresh.
      assert.equal(heard.length, before, 'the check ran before the event came back');
      assert.equal(res.body.toString(), html, `save ${i}`);
      // Once the event is back, what the next round's visitor reads is kept again.
      proxy.release();
      await until(() => heard.length > before, { what: `the event of save ${i} to come back from Redis` });
    }
  } finally {
    stop();
    proxy.release();
  }
});
