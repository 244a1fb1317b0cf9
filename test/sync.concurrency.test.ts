// Concurrent sync writes: 20 PUTs with the same If-Match → exactly one 200, the rest 412, and the
// stored bytes are the winner's (documents and uploads); concurrent creates of one name → one node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, checksum, relPathOf } from './support/sync-client.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const N = 20;

test(`${N} concurrent PUTs of a document with the same If-Match: one 200, ${N - 1} × 412, the winner's bytes stored`, async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `race-${person.username}.html`;
  const site = await api.create({ type: 'site', name, parentId: 0, content: '<html><p>base</p></html>' });
  const versionsBefore = await kiln.services.database.db
    .selectFrom('versions')
    .select('id')
    .where('node_id', '=', site.id)
    .execute();
  const bodies = Array.from({ length: N }, (_, i) => `<html><p>writer ${i}</p></html>`);
  const results = await Promise.all(
    bodies.map((content) =>
      api.raw('PUT', `/nodes/${site.id}/content`, { body: { content }, headers: { 'if-match': `"${site.etag}"` } }),
    ),
  );
  const ok = results.map((r, i) => ({ r, i })).filter(({ r }) => r.status === 200);
  assert.equal(ok.length, 1, results.map((r) => r.status).join(','));
  assert.equal(results.filter((r) => r.status === 412).length, N - 1);
  const winner = bodies[ok[0].i];
  assert.equal(ok[0].r.json.etag, checksum(winner));
  for (const r of results.filter((x) => x.status === 412)) {
    assert.equal(r.json.code, 'conflict');
    assert.equal(r.json.etag, checksum(winner));
  }
  assert.equal((await api.download(site.id)).content, winner);
  assert.equal((await kiln.client(kiln.hostOf(person.username)).get(`/${name}`)).text, winner);
  const versionsAfter = await kiln.services.database.db
    .selectFrom('versions')
    .select('id')
    .where('node_id', '=', site.id)
    .execute();
  assert.equal(versionsAfter.length, versionsBefore.length + 1);
});

test(`${N} concurrent PUTs of an upload with the same If-Match: one 200, the rest 412, the winner's bytes stored`, async () => {
  const { api } = await keyHolder(kiln);
  const up = await api.create({ type: 'upload', name: 'race.bin', parentId: 0, content: Buffer.from('base') });
  const bodies = Array.from({ length: N }, (_, i) => Buffer.from(`bytes of writer ${i}`));
  const results = await Promise.all(
    bodies.map((b) =>
      api.raw('PUT', `/nodes/${up.id}/content`, {
        body: { content: b.toString('base64') },
        headers: { 'if-match': `"${up.etag}"` },
      }),
    ),
  );
  const ok = results.map((r, i) => ({ r, i })).filter(({ r }) => r.status === 200);
  assert.equal(ok.length, 1, results.map((r) => r.status).join(','));
  assert.equal(results.filter((r) => r.status === 412).length, N - 1);
  assert.deepEqual((await api.download(up.id)).content, bodies[ok[0].i]);
});

test('concurrent creates of one path by one account: one node per name, folders made once, every call succeeds', async () => {
  const { api, person } = await keyHolder(kiln);
  const name = `deep/er/same-${person.username}.html`;
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      api.raw('POST', '/nodes', { body: { type: 'site', name, parentId: 0, content: `<html><p>${i}</p></html>` } }),
    ),
  );
  assert.deepEqual(
    results.map((r) => r.status).filter((s) => s !== 200 && s !== 201),
    [],
    results.map((r) => r.text).join('\n'),
  );
  assert.equal(results.filter((r) => r.status === 201).length, 1);
  const ids = new Set(results.map((r) => r.json.node.id));
  assert.equal(ids.size, 1);
  const { nodes } = await api.list();
  assert.deepEqual(nodes.map(relPathOf).sort(), ['deep', 'deep/er', `deep/er/same-${person.username}.html`]);
  const uploads = await Promise.all(
    Array.from({ length: 10 }, () =>
      api.raw('POST', '/nodes', {
        body: { type: 'upload', name: 'deep/one.txt', parentId: 0, content: Buffer.from('x').toString('base64') },
      }),
    ),
  );
  assert.ok(
    uploads.every((r) => r.status === 200 || r.status === 201),
    uploads.map((r) => r.text).join('\n'),
  );
  assert.equal((await api.list()).nodes.filter((n) => n.type === 'upload').length, 1);
});
