// Redis goes away (every connection cut, new ones refused): saves, sign-ins and page loads carry on
// without waiting on it (the bus and the rate-limit counters fail soft), and the process stays up.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn } from './support/people.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createPerson } from '../src/accounts/people.ts';

const REDIS = process.env.KILN_TEST_REDIS_URL;
const skip = (storage !== 'postgres' || !REDIS) && 'Redis is used by the PostgreSQL + Redis run only';
let kiln: TestKiln;
let proxy: TcpProxy;

before(async () => {
  if (skip) return;
  const u = new URL(REDIS!);
  proxy = await startTcpProxy(u.hostname, Number(u.port || 6379));
  kiln = await startKiln({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
});
after(async () => {
  if (skip) return;
  await kiln?.stop();
  await proxy?.close();
});

const doc = (n: number) => `<!DOCTYPE html><html><body><p>save ${n}</p></body></html>`;

test('with Redis gone, saves and sign-ins answer at once and succeed; the process stays up', { skip, timeout: 60_000 }, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  await createNode(kiln.services, me.id, { ownerId: me.id, parentId: 0, type: 'site', name: 'r.html', html: doc(0) });
  const owner = main.on(host);
  const input = newPerson();
  await createPerson(kiln.services, input);

  proxy.cut();
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 1; i <= 5; i++) {
    const started = Date.now();
    const res = await owner.post('/_/save', doc(i), { headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/r.html` } });
    assert.equal(res.status, 200, res.text);
    // Before: each save waited out the bus's 2 s command timeout. A generous bound, far below that.
    assert.ok(Date.now() - started < 1_500, `save ${i} took ${Date.now() - started} ms`);
  }
  assert.equal((await kiln.client(host).get('/r.html')).text, doc(5));
  const started = Date.now();
  const login = await kiln.client().post('/_/login', { email: input.email, password: input.password });
  assert.equal(login.status, 200, login.text);
  assert.ok(Date.now() - started < 1_500, `sign-in took ${Date.now() - started} ms`);
  const ready = await kiln.client().get('/_/ready');
  assert.equal(ready.status, 503);
  assert.equal(ready.json.checks.redis, 'unavailable');

  proxy.restore();
  let back = false;
  for (let i = 0; i < 100 && !back; i++) {
    back = (await kiln.client().get('/_/ready')).status === 200;
    if (!back) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(back, 'ready again once Redis is back');
});
