// The history and data tools over `/_/mcp` with the SDK's client, and documents as resources:
// list_versions / read_version / diff_versions / restore_version (a new save named for the agent, under an etag);
// read_data (the page's `api` rules, private pages too) and write_data (JSON back into the page through its rules,
// the rest of the page kept; data that does not fit is refused and nothing saved); `kiln://` resources listed
// through their template and read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder } from './support/sync-client.ts';
import { call, mcpClient, mcpClientAs, refused } from './support/mcp.ts';
import { personCaller } from '../src/access/caller.ts';
import { actorOfPerson } from '../src/accounts/actors.ts';
import { personRow } from '../src/store/accounts.ts';
import type { Client } from '@modelcontextprotocol/client';

let kiln: TestKiln;
let holder: Awaited<ReturnType<typeof keyHolder>>;
let client: Client;
const RULES =
  '<script type="application/json" data-rules-name="api" data-rules-version="1">{"title": "h1", "items": ".item[]"}</script>';
const page = (title: string, items: string[], extra = '') =>
  `<!DOCTYPE html><html><head>${RULES}</head><body><h1>${title}</h1><ul id="items">${items
    .map((i) => `<li class="item">${i}</li>`)
    .join('')}</ul>${extra}</body></html>`;

before(async () => {
  kiln = await startKiln();
  holder = await keyHolder(kiln);
  client = await mcpClient(kiln, holder.key, { protocolVersion: '2026-07-28', name: 'Cursor' });
});
after(async () => {
  await client.close();
  await kiln.stop();
});
const me = () => holder.person.username;

test('versions: listed newest first with who saved each, read, compared, restored as a new save', async () => {
  const path = `hist-${me()}.html`;
  const made = await call(client, 'create_document', { path, html: page('One', ['a']) });
  const two = await call(client, 'write_document', { path, html: page('Two', ['a', 'b']), etag: made.etag });
  const three = await call(client, 'edit_document', {
    path,
    edits: [{ op: 'replaceText', find: '<h1>Two</h1>', replace: '<h1>Three</h1>' }],
  });
  const listed = await call(client, 'list_versions', { path });
  assert.equal(listed.total, 3);
  assert.deepEqual(
    listed.versions.map((v: any) => v.number),
    [3, 2, 1],
  );
  const agent = `Cursor via sync key ${holder.key.slice(0, 12)}…`;
  assert.ok(listed.versions.every((v: any) => v.savedBy === agent && v.username === me()));
  assert.equal(listed.versions[0].id, three.version.id);
  const first = listed.versions[2];
  const read = await call(client, 'read_version', { id: first.id });
  assert.equal(read.html, page('One', ['a']));
  assert.equal(read.path, path);
  const diff = await call(client, 'diff_versions', { from: first.id, to: two.version.id });
  assert.match(diff.diff, /^-.*One/m);
  assert.match(diff.diff, /^\+.*Two/m);
  const toNow = await call(client, 'diff_versions', { from: first.id });
  assert.match(toNow.diff, /^\+.*Three/m);
  const stale = await refused(client, 'restore_version', { id: first.id, etag: made.etag });
  assert.deepEqual([stale.code, stale.etag], ['conflict', three.etag]);
  const restored = await call(client, 'restore_version', { id: first.id, etag: three.etag });
  assert.deepEqual([restored.changed, restored.version.number], [true, 4]);
  assert.equal((await call(client, 'read_document', { path })).html, page('One', ['a']));
  const after = await call(client, 'list_versions', { path, limit: 1 });
  assert.deepEqual([after.total, after.versions[0].savedBy], [4, agent]);
  assert.equal((await refused(client, 'read_version', { id: 999999999 })).code, 'not-found');
});

test('another person’s versions are refused by the table; a read-only credential reads them but restores nothing', async () => {
  const other = await keyHolder(kiln);
  const theirs = await mcpClient(kiln, other.key);
  await call(theirs, 'create_document', { path: `theirs-${other.person.username}.html`, html: page('X', []) });
  const [v] = (await call(theirs, 'list_versions', { path: `theirs-${other.person.username}.html` })).versions;
  // The table's answer for another person's public document (a private one is not there at all: 404).
  assert.equal((await refused(client, 'read_version', { id: v.id })).code, 'not-owner');
  assert.equal((await refused(client, 'restore_version', { id: v.id })).code, 'not-owner');
  assert.equal((await refused(client, 'diff_versions', { from: v.id })).code, 'not-owner');
  await theirs.close();
  const path = `ro-${me()}.html`;
  await call(client, 'create_document', { path, html: page('RO', []) });
  const [mine] = (await call(client, 'list_versions', { path })).versions;
  const actor = actorOfPerson((await personRow(kiln.services.database.db, { id: holder.person.id }))!, 'key:1')!;
  const readOnly = await mcpClientAs(
    kiln,
    personCaller('key', actor, null, undefined, { accountId: null, folder: null, readOnly: true }),
  );
  assert.equal((await call(readOnly, 'read_version', { id: mine.id })).html, page('RO', []));
  assert.equal((await refused(readOnly, 'restore_version', { id: mine.id })).code, 'read-only-key');
  assert.equal(
    (await refused(readOnly, 'write_data', { path, data: { title: 'x', items: [] } })).code,
    'read-only-key',
  );
  await readOnly.close();
});

test('read_data and write_data: the page’s data through its rules; the rest of the page stays; a misfit is refused', async () => {
  const path = `data-${me()}.html`;
  const footer = '<footer id="f">kept <b>as is</b></footer>';
  await call(client, 'create_document', { path, html: page('Groceries', ['milk'], footer) });
  const read = await call(client, 'read_data', { path });
  assert.deepEqual(read.data, { title: 'Groceries', items: ['milk'] });
  const written = await call(client, 'write_data', {
    path,
    etag: read.etag,
    data: { title: 'Shopping', items: ['milk', 'bread', 'eggs'] },
  });
  assert.equal(written.changed, true);
  assert.match(written.diff, /Shopping/);
  const now = await call(client, 'read_data', { path });
  assert.deepEqual(now.data, { title: 'Shopping', items: ['milk', 'bread', 'eggs'] });
  assert.equal(now.etag, written.etag);
  const html = (await call(client, 'read_document', { path })).html;
  assert.ok(html.includes(footer), 'the rest of the page is kept');
  const misfit = await refused(client, 'write_data', { path, data: { title: { nested: true }, items: 'no' } });
  assert.deepEqual([misfit.code, misfit.status], ['data-shape', 422]);
  assert.equal((await call(client, 'read_document', { path })).etag, written.etag, 'nothing was saved');
  const stale = await refused(client, 'write_data', { path, data: now.data, etag: read.etag });
  assert.equal(stale.code, 'conflict');
  const plain = `plain-${me()}.html`;
  await call(client, 'create_document', { path: plain, html: '<!DOCTYPE html><html><body>no rules</body></html>' });
  assert.equal((await refused(client, 'read_data', { path: plain })).code, 'no-rules-tag');
  assert.equal((await refused(client, 'write_data', { path: plain, data: {} })).code, 'no-rules-tag');
  // A private page's data reads for its owner's agent (the public /_/api answers 404 to everyone).
  const hidden = `hidden-${me()}.html`;
  await call(client, 'create_document', { path: hidden, html: page('Secret', ['x']) });
  const db = kiln.services.database.db;
  await db.updateTable('nodes').set({ visibility: 'private' }).where('name', '=', hidden).execute();
  assert.deepEqual((await call(client, 'read_data', { path: hidden })).data, { title: 'Secret', items: ['x'] });
});

test('documents are resources: kiln://<account>/<path>, one template, listed and read', async () => {
  const path = `res/doc-${me()}.html`;
  await call(client, 'create_document', { path, html: page('Res', ['r']) });
  await call(client, 'upload_file', { path: 'res/notes.txt', text: 'plain text' });
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(
    resourceTemplates.map((t) => t.uriTemplate),
    ['kiln://{account}/{+path}'],
  );
  const { resources } = await client.listResources();
  const uri = `kiln://${me()}/${path}`;
  assert.ok(resources.some((r) => r.uri === uri && r.mimeType?.startsWith('text/html')));
  const doc = await client.readResource({ uri });
  assert.equal((doc.contents[0] as { text: string }).text, page('Res', ['r']));
  const txt = await client.readResource({ uri: `kiln://${me()}/res/notes.txt` });
  assert.equal((txt.contents[0] as { text: string }).text, 'plain text');
  await assert.rejects(client.readResource({ uri: `kiln://${me()}/res/none.html` }));
});
