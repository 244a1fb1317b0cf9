// A browser save of a page this process saved before sends PostgreSQL only the bytes that changed (src/core/
// splice.ts, src/store/saves.ts); SQLite writes the row whole, in-process. Either way the stored row must come
// out as exactly the bytes sent: these read it back from the database, past every cache of the process.
import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { storedContent } from '../src/store/nodes.ts';
import { versionContent } from '../src/save/history.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const FIRST = `<!DOCTYPE html>\n<html><body>\n${'  <li>Élément numéro ☃ pending</li>\n'.repeat(400)}</body></html>\n`;

async function ownerWithDocument(name: string) {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const node = await createNode(kiln.services, person.id, {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html: FIRST,
  });
  const host = kiln.hostOf(person.username);
  const url = `http://${host}/${name}`;
  const doc = main.on(host);
  const save = async (html: string) => {
    const res = await doc.post('/_/save', html, {
      headers: {
        'content-type': 'text/plain;charset=UTF-8',
        'document-url': url,
        'save-trigger': 'user',
        origin: new URL(url).origin,
        'sec-fetch-site': 'same-origin',
      },
    });
    assert.equal(res.status, 200, res.text);
  };
  const stored = async () => (await storedContent(kiln.services.database.db, node.id))?.html.toString('utf8');
  return { node, save, stored };
}

test('edits at the start, in the middle and at the end, growing and shrinking, in multi-byte text: the row is each save', async () => {
  const { node, save, stored } = await ownerWithDocument('splice-edits.html');
  const edits: Array<(html: string) => string> = [
    (h) => h.replace('pending', 'done ✓'),
    (h) => h.replace('<!DOCTYPE html>', '<!doctype html>'),
    (h) => `${h}<!-- ☃☃ -->`,
    (h) => h.replace('numéro ☃', 'n°'),
    (h) => h.replace(/<!-- ☃☃ -->$/, ''),
    (h) => h.replace('</body>', '<p>Ünïcödé 😀</p></body>'),
    (h) => h.replace('😀', '😁'),
    (h) => h.slice(0, 200) + h.slice(4000),
    (h) => `${h.slice(0, 100)}${'<b>new</b>'.repeat(300)}${h.slice(100)}`,
    (h) => h.replace(/done ✓/g, 'pending'),
  ];
  // A splice that came out wrong would be caught and the row written whole, with this line: none may come.
  const errors = mock.method(console, 'error');
  let html = FIRST;
  const sent = [FIRST];
  for (const edit of edits) {
    html = edit(html);
    await save(html);
    sent.push(html);
    assert.equal(await stored(), html);
  }
  assert.deepEqual(
    errors.mock.calls.map((c) => c.arguments),
    [],
  );
  errors.mock.restore();
  // Every version still reads back as what was saved.
  const versions = await kiln.services.database.db
    .selectFrom('versions')
    .select(['id', 'backup_number'])
    .where('node_id', '=', node.id)
    .orderBy('backup_number')
    .execute();
  assert.equal(versions.length, sent.length);
  for (const [i, v] of versions.entries())
    assert.equal((await versionContent(kiln.services.database.db, v.id)).bytes.toString('utf8'), sent[i]);
});

test('a row that is not what the process believes it is (changed behind its back) is written whole: the save stores what was sent', async () => {
  const { node, save, stored } = await ownerWithDocument('splice-guard.html');
  const second = FIRST.replace('pending', 'second');
  await save(second);
  // The same length, other bytes: as if something but a save had written the row.
  const foreign = second.replace('second', 'SECOND');
  await kiln.services.database.db
    .updateTable('node_contents')
    .set({ html: Buffer.from(foreign) })
    .where('node_id', '=', node.id)
    .execute();
  const third = second.replace('</body>', '<p>third</p></body>');
  const errors = mock.method(console, 'error', () => {});
  await save(third);
  errors.mock.restore();
  assert.equal(await stored(), third);
  // PostgreSQL is sent only the change, and finds the row is not what it was made from (SQLite writes it whole).
  if (kiln.services.database.dialect === 'postgres')
    assert.match(String(errors.mock.calls[0]?.arguments[0]), /content row was not its newest version's bytes/);
});
