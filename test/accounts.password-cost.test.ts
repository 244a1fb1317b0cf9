// Servers hash passwords at the production cost. Test processes that start a Kiln in-process make their
// accounts' hashes cheaper (test/support/kiln.ts calls `cheapHashesForTests`); this file does not load
// that support, so it sees what a server does, and it checks that nothing in src/ can turn the cheap cost on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PARAMS, hashPassword, verifyPassword } from '../src/accounts/passwords.ts';

test('a password is hashed with scrypt N=2^15, r=8, p=1, and verifies', async () => {
  assert.deepEqual({ N: PARAMS.N, r: PARAMS.r, p: PARAMS.p }, { N: 32768, r: 8, p: 1 });
  const hash = await hashPassword('correct horse battery staple');
  assert.match(hash, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  assert.equal(await verifyPassword('correct horse battery staple', hash), true);
  assert.equal(await verifyPassword('wrong horse battery staple', hash), false);
});

test('only tests can make hashes cheap: nothing in src/ calls cheapHashesForTests', () => {
  const root = path.join(import.meta.dirname, '..', 'src');
  const callers = (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => readFileSync(path.join(root, f), 'utf8').includes('cheapHashesForTests('))
    .map((f) => f.replaceAll(path.sep, '/'));
  assert.deepEqual(callers, ['accounts/passwords.ts'], 'only its own definition names it');
});
