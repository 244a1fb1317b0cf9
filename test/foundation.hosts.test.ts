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
