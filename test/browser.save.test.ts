// A real browser saves a document through the hyperclayjs library (npm package 1.38.0, served by Kiln):
// the owner edits and the page saves itself; a reload serves the saved bytes; a second browser
// without the owner's cookie cannot save, even with ?editmode=true.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendAndSave, hasChromium, saveNow, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { newPerson, sessionsFor, browserCookies, actingAs } from './support/people.ts';

const DOC = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Todo</title>
<script type="module" src="/_/hyperclayjs/src/hyperclay.js?preset=minimal"></script>
</head>
<body><h1 id="title">My list</h1><ul id="items"><li>first</li></ul></body>
</html>
`;

let bk: BrowserKiln;

before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

test('the owner edits a hyperclayjs document in Chromium and it saves itself; strangers cannot save', {
  skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
  timeout: 120_000,
}, async () => {
  const s = bk.kiln.services;
  const person = await createPerson(s, newPerson());
  await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'browser-todo.html',
    html: DOC,
  });
  const sessions = await sessionsFor(s.database.db, bk.kiln.config, person.id, person.username);
  const url = bk.docUrl(person.username, '/browser-todo.html');

  const owner = await bk.newContext();
  await owner.addCookies(browserCookies(bk.kiln.config, sessions));
  const page = await owner.newPage();
  await page.goto(url);
  assert.equal(await page.evaluate(() => document.cookie.includes('isAdminOfCurrentResource=true')), true);
  await page.waitForFunction(() => typeof (window as any).hyperclay?.savePage === 'function', null, {
    timeout: 20_000,
  });
  const docClient = bk.kiln.client(`${person.username}.${bk.kiln.config.rootDomain}`);
  const served = await appendAndSave(
    page,
    async () => (await docClient.get('/browser-todo.html')).text,
    'added',
    'added in the browser',
  );
  assert.match(served, /<li id="added">added in the browser<\/li>/);
  await page.reload();
  assert.equal(await page.locator('#items li').count(), 2);

  // A second browser without the owner's cookie: edit mode forced by the URL, but the save is refused.
  const stranger = await bk.newContext();
  const other = await stranger.newPage();
  const saveStatuses: number[] = [];
  other.on('response', (r) => {
    if (new URL(r.url()).pathname === '/_/save') saveStatuses.push(r.status());
  });
  await other.goto(`${url}?editmode=true`);
  assert.equal(await other.evaluate(() => document.cookie.includes('isAdminOfCurrentResource')), false);
  await other.waitForFunction(() => typeof (window as any).hyperclay?.savePage === 'function', null, {
    timeout: 20_000,
  });
  // Edit and save until the library actually sends a save (an edit made before it captured its
  // baseline reads as "no changes"); the server must refuse every one.
  let refused = { msg: '', msgType: '' };
  for (let i = 0; i < 20 && saveStatuses.length === 0; i++) {
    await other.evaluate((n) => {
      document.getElementById('title')!.textContent = `defaced ${n}`;
    }, i);
    refused = await saveNow(other);
    for (let j = 0; j < 10 && saveStatuses.length === 0; j++) await other.waitForTimeout(50);
  }
  assert.notEqual(refused.msgType, 'success', JSON.stringify(refused));
  assert.ok(saveStatuses.length > 0, 'the page tried to save');
  assert.ok(
    saveStatuses.every((st) => st >= 400),
    `save statuses: ${saveStatuses}`,
  );
  const after = await bk.kiln.client(`${person.username}.${bk.kiln.config.rootDomain}`).get('/browser-todo.html');
  assert.doesNotMatch(after.text, /defaced/);
  assert.match(after.text, /added in the browser/);
  await owner.close();
  await stranger.close();
});
