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

test('a share-link guest’s save is named as one, in the feed, on the dashboard and in the versions list (not as Kiln)', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const name = `guest-${me.id}.html`;
  const made = await main.post('/_/dashboard/nodes', { type: 'site', name, html: '<html><p>1</p></html>' }, json);
  assert.equal(made.status, 201, made.text);
  const id = made.json.node.id;
  const on = await main.post(`/_/dashboard/nodes/${id}/sharing`, { enabled: true }, json);
  const link = new URL(on.json.shareUrl);
  const guest = kiln.client(link.host);
  const opened = await guest.get(link.pathname + link.search);
  assert.equal(opened.status, 302);
  const saved = await guest.post('/_/save', '<html><body><p>2, by a guest</p></body></html>', {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': link.origin + link.pathname,
      origin: link.origin,
      'sec-fetch-site': 'same-origin',
    },
  });
  assert.equal(saved.status, 200, saved.text);

  let line: Record<string, string | null> | undefined;
  for (let i = 0; i < 100 && !line; i++) {
    const r = await main.get('/_/activity', json);
    line = (r.json.activity as Array<Record<string, string | null>>).find(
      (l) => l.kind === 'saved' && l.by !== me.username,
    );
    if (!line) await new Promise((res) => setTimeout(res, 40));
  }
  assert.ok(line, 'the guest’s save is in the feed');
  assert.equal(line.by, null, 'no account wrote it');
  assert.equal(line.client, 'share link');
  const page = cheerio.load((await main.page('/_/dashboard')).text);
  const shown = page('section.activity li').first().text();
  assert.match(shown, /A share-link guest\s+saved/);
  assert.doesNotMatch(shown, /Kiln/);
  const doc = await main.enter(link.host);
  const versions = await doc.page(`/_/versions?path=${name}`);
  assert.equal(versions.status, 200, versions.text);
  assert.match(cheerio.load(versions.text)('body').text(), /share-link guest/);
});
