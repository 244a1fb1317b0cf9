// Versions: every accepted save adds one; list (page and JSON), view, diff with current, restore.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { versionContent } from '../src/save/history.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

async function documentWithSaves(name: string, count: number) {
  const main = kiln.client();
  const person = await signedIn(kiln, main);
  const contents = [`<html><body><h1>start</h1>${'<p>filler line</p>\n'.repeat(200)}</body></html>`];
  await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name,
    html: contents[0],
  });
  const host = kiln.hostOf(person.username);
  const doc = main.on(host);
  for (let i = 1; i <= count; i++) {
    const next = contents[i - 1].replace(/<h1>[^<]*<\/h1>/, `<h1>edit ${i}</h1>`);
    contents.push(next);
    const res = await doc.post('/_/save', next, {
      headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/${name}` },
    });
    assert.equal(res.status, 200, res.text);
  }
  return { person, doc, host, contents };
}

test('every accepted save adds a version; 1 and every 20th are snapshots, the rest diffs; each reconstructs to its contentHash', async () => {
  const { doc, contents } = await documentWithSaves('ver-chain.html', 44);
  const res = await doc.get('/_/versions?path=ver-chain.html');
  assert.equal(res.status, 200);
  assert.equal(res.json.msgType, 'success');
  const versions = res.json.versions as Array<{
    id: number;
    backupNumber: number;
    isDiff: boolean;
    contentHash: string;
    savedBy: string;
    size: number;
    createdAt: string;
  }>;
  assert.equal(versions.length, 45);
  for (const v of versions) {
    assert.equal(v.isDiff, !(v.backupNumber === 1 || v.backupNumber % 20 === 0), `backup ${v.backupNumber}`);
    const { bytes } = await versionContent(kiln.services.database.db, v.id);
    assert.equal(bytes.toString(), contents[v.backupNumber - 1]);
    assert.equal(sha(bytes), v.contentHash);
  }
  assert.equal(versions.at(-1)!.savedBy, 'create');
  assert.equal(versions[0].savedBy, 'browser');
});

test('the versions page, one version, its diff with the current content, and restore through the pipeline', async () => {
  const { doc, contents } = await documentWithSaves('ver-restore.html', 3);
  const list = await doc.page('/_/versions?path=ver-restore.html');
  assert.equal(list.status, 200);
  assert.match(list.text, /Versions of/);
  const versions = (await doc.get('/_/versions?path=ver-restore.html')).json.versions;
  const first = versions.find((v: { backupNumber: number }) => v.backupNumber === 1);
  const one = await doc.get(`/_/version/${first.id}`);
  assert.equal(one.json.html, contents[0]);
  const page = await doc.page(`/_/version/${first.id}`);
  assert.match(page.text, /&lt;h1&gt;start&lt;\/h1&gt;/);
  const diff = await doc.page(`/_/version/${first.id}/diff`);
  assert.equal(diff.status, 200);
  assert.match(diff.text, /− .*start/);
  assert.match(diff.text, /\+ .*edit 3/);
  const ask = await doc.page(`/_/restore/${first.id}`);
  assert.match(ask.text, /<form method="post" action="\/_\/restore\//);
  const restored = await doc.post(`/_/restore/${first.id}`);
  assert.equal(restored.status, 200, restored.text);
  assert.equal(restored.json.etag, sha(contents[0]).slice(0, 16));
  assert.equal((await doc.get('/ver-restore.html')).text, contents[0]);
  const after = (await doc.get('/_/versions?path=ver-restore.html')).json.versions;
  assert.equal(after.length, 5);
  assert.equal(after[0].savedBy, 'restore');
});

test('versions are the owner’s: a stranger is refused, nobody signed in must log in, other hosts do not see them', async () => {
  const { host, doc } = await documentWithSaves('ver-private.html', 1);
  const versions = (await doc.get('/_/versions?path=ver-private.html')).json.versions;
  const stranger = kiln.client();
  const other = await signedIn(kiln, stranger);
  // Signed in elsewhere is no session on this host: the same answer as nobody signed in.
  assert.equal((await stranger.on(host).get('/_/versions?path=ver-private.html')).status, 401);
  assert.equal((await stranger.on(host).post(`/_/restore/${versions[0].id}`)).status, 401);
  const anon = await kiln.client(host).page('/_/versions?path=ver-private.html');
  assert.equal(anon.status, 302);
  assert.match(String(anon.headers.location), /\/_\/login/);
  // The version id exists, but not on the stranger's own host.
  assert.equal((await stranger.on(kiln.hostOf(other.username)).get(`/_/version/${versions[0].id}`)).status, 404);
});
