// The small things a newcomer meets in the first hour (#25.9): who uploaded is named in the activity feed, a text
// upload has an Edit link on the dashboard, starters have a <main> landmark, a share link's field has a label.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { until } from './support/wait.ts';
import { starterDocument } from '../src/nodes/starters.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };

test('a file uploaded on the dashboard is credited to its uploader, and a text file gets an Edit link', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'personal' });
  const res = await main.post(
    '/_/upload',
    { fileName: 'notes.txt', fileBody: Buffer.from('hello').toString('base64') },
    json,
  );
  assert.equal(res.status, 200, res.text);
  // The activity line is recorded after the answer (src/events/publish.ts): the feed has it a moment later.
  const line = await until(
    async () =>
      (
        (await main.get('/_/activity', json)).json.activity as { path: string; by: string | null; client: string }[]
      ).find((a) => a.path === 'notes.txt'),
    { what: 'the upload’s line in the activity feed' },
  );
  assert.equal(line?.by, me.username);
  assert.equal(line?.client, 'browser');
  const page = cheerio.load((await main.page('/_/dashboard')).text);
  const edit = page('tr[data-path="notes.txt"] a').filter((_, a) => page(a).text() === 'Edit');
  assert.equal(edit.attr('href'), `/_/edit/uploads/${me.username}/notes.txt`);
  assert.equal((await main.page(edit.attr('href')!)).status, 200, 'the editor opens it');
});

test('every starter has a <main> landmark; the share link’s field has a label', async () => {
  for (const starter of ['blank', 'notes', 'site', 'app'] as const) {
    const $ = cheerio.load(starterDocument(starter, 'x.html').toString('utf8'));
    assert.equal($('main').length, 1, starter);
  }
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'personal' });
  const made = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: `share-${me.username}.html`, parentId: 0 },
    json,
  );
  assert.equal(made.status, 201, made.text);
  const id = made.json.node?.id ?? made.json.id;
  const shared = await main.post(
    `/_/dashboard/nodes/${id}/sharing`,
    { enabled: 'true' },
    { form: true, headers: { accept: 'text/html' } },
  );
  const html = shared.status === 302 ? (await main.page(String(shared.headers.location))).text : shared.text;
  const $ = cheerio.load(html);
  assert.equal($('#share-url').length, 1, html.slice(0, 300));
  assert.equal($('label[for="share-url"]').text(), 'The share link');
});

test('starters are ready for AI editing (data-edit-id sections) and the notes starter is data: /_/api reads its list', async () => {
  for (const starter of ['blank', 'notes', 'site'] as const) {
    const $ = cheerio.load(starterDocument(starter, 'x.html').toString('utf8'));
    assert.ok($('[data-edit-id]').length >= 1, `${starter} has data-edit-id sections`);
  }
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const name = `todo-${me.username}.html`;
  const made = await main.post('/_/dashboard/nodes', { type: 'site', name, starter: 'notes', parentId: 0 }, json);
  assert.equal(made.status, 201, made.text);
  const data = await kiln.client(kiln.hostOf(me.username)).get(`/_/api/${name}`);
  assert.equal(data.status, 200, data.text);
  assert.deepEqual(data.json, {
    title: `todo ${me.username}`,
    items: [
      { text: 'Write the first thing to do', done: 'false' },
      { text: 'Tick a box, then save', done: 'false' },
    ],
    notes: 'Anything you type here is kept in this page.',
  });
});
