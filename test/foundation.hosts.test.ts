import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

test('unknown hosts answer 404 with JSON {msg, msgType}', async () => {
  const res = await kiln.client('nobody.example.com').get('/');
  assert.equal(res.status, 404);
  assert.equal(res.json.msgType, 'error');
  assert.equal(typeof res.json.msg, 'string');
});

test('a document host for a username that does not exist answers 404', async () => {
  const res = await kiln.client(kiln.hostOf('ghost')).get('/');
  assert.equal(res.status, 404);
});

test('every main-app answer forbids framing; on document hosts only Kiln’s own pages do, never the account’s documents', async () => {
  const { actingAs, signedIn } = await import('./support/people.ts');
  const { createNode } = await import('../src/nodes/tree.ts');
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  for (const client of [main, kiln.client('localhost:8080'), kiln.client('127.0.0.1')]) {
    for (const path of ['/', '/_/login', '/_/dashboard', '/_/no-such-page', '/_/billing']) {
      for (const res of [await client.page(path), await client.get(path)]) {
        assert.equal(
          res.headers['content-security-policy'],
          "frame-ancestors 'none'",
          `${client.host}${path} ${res.status}`,
        );
        assert.equal(res.headers['x-frame-options'], 'DENY', `${client.host}${path}`);
      }
    }
  }
  const post = await kiln.client().post('/_/login', { email: 'x@example.com', password: 'wrong-password-1' });
  assert.equal(post.headers['x-frame-options'], 'DENY');

  const host = kiln.hostOf(person.username);
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'framed.html',
    html: '<p>frame me</p>',
  });
  // On a document host the account's own document is framed as its owner chooses; what Kiln renders
  // there itself (a redirect to sign in, an error page) is not (#22: test/security.framing.test.ts).
  const doc = await kiln.client(host).page('/framed.html');
  assert.equal(doc.headers['x-frame-options'], undefined);
  assert.doesNotMatch(String(doc.headers['content-security-policy'] ?? ''), /frame-ancestors/);
  for (const path of ['/_/login', '/missing.txt']) {
    const res = await kiln.client(host).page(path);
    assert.equal(res.headers['x-frame-options'], 'DENY', path);
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, path);
  }
});
