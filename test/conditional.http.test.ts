// If-Match on every route that takes it, read one way (src/core/conditional.ts), as RFC 9110 §13.1.1 and
// the conditional saves of the Malleable HTML File spec have it: `*` (any current version), a list of tags
// (the write goes ahead when one of them is the current etag), each quoted, bare (clayjs) or weak (`W/`,
// what a compressing proxy makes of an ETag). An empty or unreadable If-Match is a condition nobody can
// meet: 412 `conflict` with the current etag, never a blind write. Routes: the browser save (a document,
// and an upload open in the code editor), the sync API's content write and its rename, move and delete,
// and a collection record's PUT.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { keyHolder } from './support/sync-client.ts';
import { markedCollection } from './support/collections.ts';
import { createNode } from '../src/nodes/tree.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const sum = (s: string | Buffer) => createHash('sha256').update(s).digest('hex').slice(0, 16);
const STALE = '0123456789abcdef';

/** The headers that must go ahead for a resource whose etag is `etag`, and those that must be 412. */
const holding = (etag: string) => ({
  'a list naming it': `"${STALE}", "${etag}"`,
  'a list of weak tags naming it': `W/"${STALE}", W/"${etag}"`,
  'a bare tag in a list': `${STALE}, ${etag}`,
  '*': '*',
});
const failing = {
  'a list naming none': `"${STALE}", "fedcba9876543210"`,
  'an empty header': '',
  'only commas': ' , ,',
  'an unterminated tag': `"${STALE}`,
  'tags run together': `"${STALE}""${STALE}"`,
};

async function owner() {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const host = kiln.hostOf(person.username);
  return { main, person, host, doc: main.on(host) };
}

test('the browser save: a list with the current etag saves, `*` saves, weak and bare tags count; empty, unreadable or stale is 412 and saves nothing', async () => {
  const { person, host, doc } = await owner();
  const name = `cond-${person.username}.html`;
  let current = '<!doctype html><html><body>v0</body></html>';
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html: current,
  });
  const save = (body: string, ifMatch: string) =>
    doc.post('/_/save', body, {
      headers: {
        'content-type': 'text/plain;charset=UTF-8',
        'document-url': `http://${host}/${name}`,
        origin: `http://${host}`,
        'sec-fetch-site': 'same-origin',
        'if-match': ifMatch,
      },
    });
  for (const [what, header] of Object.entries(failing)) {
    const res = await save(`<html><body>lost ${what}</body></html>`, header);
    assert.equal(res.status, 412, `${what}: ${res.text}`);
    assert.equal(res.json.code, 'conflict', what);
    assert.equal(res.json.etag, sum(current), what);
    assert.equal((await doc.get(`/${name}`)).text, current, `${what}: nothing saved`);
  }
  // Each case names the etag of the save before it.
  for (const what of Object.keys(holding(''))) {
    const next = `<html><body>after ${what}</body></html>`;
    const res = await save(next, holding(sum(current))[what as keyof ReturnType<typeof holding>]);
    assert.equal(res.status, 200, `${what}: ${res.text}`);
    assert.equal(res.json.etag, sum(next), what);
    assert.equal((await doc.get(`/${name}`)).text, next, what);
    current = next;
  }
});

test('the code editor’s save of an upload: a list with its etag saves; an empty If-Match is 412', async () => {
  const { main, person, host, doc } = await owner();
  const page = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: `edit-${person.username}.html`,
    html: '<html></html>',
  });
  const up = await doc.post(
    '/_/upload',
    { fileName: 'notes.md', fileBody: Buffer.from('# one').toString('base64') },
    { headers: { 'page-url': `http://${host}/${page.name}` } },
  );
  assert.equal(up.status, 200, up.text);
  const url = `http://${kiln.config.rootDomain}/_/edit/uploads/${person.username}/notes.md`;
  const save = (body: string, ifMatch: string) =>
    main.post('/_/save', body, { headers: { 'content-type': 'text/plain', 'document-url': url, 'if-match': ifMatch } });
  const empty = await save('# lost', '');
  assert.equal(empty.status, 412, empty.text);
  assert.equal(empty.json.etag, sum('# one'));
  const listed = await save('# two', `"${STALE}", "${sum('# one')}"`);
  assert.equal(listed.status, 200, listed.text);
  assert.equal((await kiln.client(host).get('/notes.md')).text, '# two');
  const stale = await save('# lost', `"${STALE}", W/"${sum('# one')}"`);
  assert.equal(stale.status, 412, stale.text);
  assert.equal((await kiln.client(host).get('/notes.md')).text, '# two');
});

test('the sync API: PUT content, rename, move and delete take a list and `*`; an empty If-Match is 412, not a blind write', async () => {
  const { api } = await keyHolder(kiln);
  const site = await api.create({ type: 'site', name: `s-${Date.now()}.html`, parentId: 0, content: '<html>1</html>' });
  const put = (content: string, ifMatch: string) =>
    api.raw('PUT', `/nodes/${site.id}/content`, { body: { content }, headers: { 'if-match': ifMatch } });
  for (const [what, header] of Object.entries(failing)) {
    const res = await put('<html>lost</html>', header);
    assert.equal(res.status, 412, `${what}: ${res.text}`);
    assert.equal(res.json.code, 'conflict', what);
    assert.equal(res.json.etag, sum('<html>1</html>'), what);
  }
  assert.equal((await api.download(site.id)).content, '<html>1</html>');
  const listed = await put('<html>2</html>', `"${STALE}", "${sum('<html>1</html>')}"`);
  assert.equal(listed.status, 200, listed.text);
  assert.equal((await put('<html>3</html>', '*')).status, 200);
  const weak = await put('<html>4</html>', `W/"${STALE}", W/"${sum('<html>3</html>')}"`);
  assert.equal(weak.status, 200, weak.text);

  const etag = sum('<html>4</html>');
  const folder = await api.create({ type: 'folder', name: `f-${Date.now()}`, parentId: 0 });
  const rename = (ifMatch: string, newName: string) =>
    api.raw('PATCH', `/nodes/${site.id}/rename`, { body: { newName }, headers: { 'if-match': ifMatch } });
  const renamedEmpty = await rename('', `x-${Date.now()}.html`);
  assert.equal(renamedEmpty.status, 412, renamedEmpty.text);
  const renamed = await rename(`"${STALE}", "${etag}"`, `r-${Date.now()}.html`);
  assert.equal(renamed.status, 200, renamed.text);
  const move = (ifMatch: string) =>
    api.raw('PATCH', `/nodes/${site.id}/move`, {
      body: { newParentId: folder.id },
      headers: { 'if-match': ifMatch },
    });
  const movedStale = await move(`"${STALE}", "fedcba9876543210"`);
  assert.equal(movedStale.status, 412, movedStale.text);
  const moved = await move(`"${STALE}", "${etag}"`);
  assert.equal(moved.status, 200, moved.text);
  const del = (ifMatch: string) => api.raw('DELETE', `/nodes/${site.id}`, { headers: { 'if-match': ifMatch } });
  const deletedEmpty = await del('');
  assert.equal(deletedEmpty.status, 412, deletedEmpty.text);
  assert.ok(
    (await api.list()).nodes.some((n) => n.id === site.id),
    'not deleted',
  );
  const deleted = await del('*');
  assert.equal(deleted.status, 200, deleted.text);
});

test('a collection record’s PUT: a list naming its etag writes, `*` writes; an empty or stale If-Match is 412 and writes nothing', async () => {
  const c = await markedCollection(kiln);
  const made = await c.visitor.post(c.records, { data: { n: 1 } }, { headers: { 'x-submit-token': c.token } });
  assert.equal(made.status, 201, made.text);
  const key = made.json.id as string;
  // A record's etag is the checksum of its file, as the sync API lists it.
  const etag = async () =>
    (
      await kiln.services.database.db
        .selectFrom('nodes')
        .select('checksum')
        .where('owner_id', '=', c.me.id)
        .where('name', '=', `${key}.json`)
        .executeTakeFirstOrThrow()
    ).checksum!;
  const put = (data: unknown, ifMatch: string) =>
    c.owner.put(`${c.records}/${key}`, { data }, { headers: { 'if-match': ifMatch } });
  for (const header of ['', `"${STALE}", "fedcba9876543210"`, `"${STALE}`]) {
    const res = await put({ n: 'lost' }, header);
    assert.equal(res.status, 412, `${JSON.stringify(header)}: ${res.text}`);
    assert.equal(res.json.code, 'conflict');
  }
  assert.deepEqual((await c.owner.get(`${c.records}/${key}`)).json.data, { n: 1 });
  const listed = await put({ n: 2 }, `"${STALE}", "${await etag()}"`);
  assert.equal(listed.status, 200, listed.text);
  assert.equal((await put({ n: 3 }, '*')).status, 200);
  assert.deepEqual((await c.owner.get(`${c.records}/${key}`)).json.data, { n: 3 });
});
