// PostgreSQL: Kiln prepares the statements it sends (src/store/db.ts, `preparing`), so each connection parses and
// plans a statement once. A prepared `select *` would fail for good once a migration from another process (a
// rolling upgrade) adds a column: "cached plan must not change result type". Kiln prepares it afresh and answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startKiln, storage, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';

const skip = storage !== 'postgres' && 'prepared statements are PostgreSQL’s';
let kiln: TestKiln;
before(async () => {
  if (!skip) kiln = await startKiln();
});
after(() => kiln?.stop());

test('a column added by another process does not break the statements already prepared', { skip }, async () => {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'prepared.html',
    html: '<!doctype html><html><body><p>before</p></body></html>',
  });
  const host = kiln.hostOf(person.username);
  const doc = main.on(host);
  // Every pooled connection that serves these prepares the document lookup (a `select * from nodes`).
  const read = () => Promise.all(Array.from({ length: 12 }, () => doc.get('/prepared.html')));
  for (const res of await read()) assert.equal(res.status, 200);

  const other = new pg.Client({ connectionString: kiln.config.databaseUrl! });
  await other.connect();
  try {
    await other.query('ALTER TABLE nodes ADD COLUMN added_by_another_process text');
  } finally {
    await other.end();
  }

  for (const res of await read()) assert.equal(res.status, 200, res.text);
  const saved = await doc.post('/_/save', '<!doctype html><html><body><p>after</p></body></html>', {
    headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/prepared.html` },
  });
  assert.equal(saved.status, 200, saved.text);
  assert.match((await doc.get('/prepared.html')).text, /after/);
});
