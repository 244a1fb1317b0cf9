// The activity feed: every change of a tree (from the browser, the sync API, the dashboard) is a line
// with who, what, when and from which client, newest first, as GET /_/activity and on the dashboard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };

async function feed(main: ReturnType<TestKiln['client']>) {
  // Lines are written after the change's commit: wait until they are there.
  for (let i = 0; i < 50; i++) {
    const r = await main.get('/_/activity', json);
    if (r.json.activity.length >= 6) return r.json.activity as Array<Record<string, string | null>>;
    await new Promise((res) => setTimeout(res, 40));
  }
  return (await main.get('/_/activity', json)).json.activity as Array<Record<string, string | null>>;
}

test('creations, saves, renames and deletions from the browser and a sync key, newest first, with who and from where', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const made = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: `act-${me.id}.html`, html: '<html><p>1</p></html>' },
    json,
  );
  const id = made.json.node.id;
  await main.post(`/_/dashboard/nodes/${id}/rename`, { name: `acted-${me.id}.html` }, json);
  const { key } = await createSyncKey(kiln.services, me.id);
  const put = await kiln.client().request('PUT', `/_/sync/nodes/${id}/content`, {
    body: { content: '<html><p>2</p></html>' },
    headers: { 'x-api-key': key },
  });
  assert.equal(put.status, 200, put.text);
  // The code editor saves through /_/save with its header.
  const host = kiln.hostOf(me.username);
  const doc = await main.enter(host);
  const edited = await doc.post('/_/save', '<html><body>3</body></html>', {
    headers: {
      'content-type': 'text/plain',
      'document-url': `http://${host}/acted-${me.id}.html`,
      'x-kiln-editor': '1',
    },
  });
  assert.equal(edited.status, 200, edited.text);
  await main.post('/_/dashboard/nodes', { type: 'folder', name: 'stuff' }, json);
  await main.post(`/_/dashboard/nodes/${id}/delete`, {}, json);

  const lines = await feed(main);
  assert.deepEqual(
    lines.slice(0, 6).map((l) => [l.kind, l.path, l.by, l.client?.replace(/hcsk_[0-9a-f]+/, 'KEY')]),
    [
      ['deleted', `acted-${me.id}.html`, me.username, 'browser'],
      ['created', 'stuff', me.username, 'browser'],
      ['saved', `acted-${me.id}.html`, me.username, 'code editor'],
      ['saved', `acted-${me.id}.html`, me.username, 'sync key KEY…'],
      ['renamed', `acted-${me.id}.html`, me.username, 'browser'],
      ['saved', `act-${me.id}.html`, me.username, 'browser'],
    ],
  );
  assert.equal(lines[4].oldPath, `act-${me.id}.html`);
  const page = cheerio.load((await main.page('/_/dashboard')).text);
  assert.match(page('section.activity').text(), new RegExp(`${me.username}\\s+deleted`));

  // Nobody else reads it.
  const other = kiln.client();
  await signedIn(kiln, other);
  const theirs = await other.get('/_/activity', json);
  assert.equal(theirs.json.activity.length, 0);
});
