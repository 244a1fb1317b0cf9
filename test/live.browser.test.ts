// Live sync in a real browser, with the hyperclayjs library (1.38.0, served by Kiln, preset
// smooth-sailing): two owner tabs in edit mode share the `live` lane, an anonymous viewer watches the
// `saved` lane. An edit saved in one owner tab reaches the other owner tab through the editor snapshot
// (live lane) and the viewer through the stored document (saved lane), without reloads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { newPerson, sessionsFor, browserCookies, actingAs } from './support/people.ts';
import type { Page } from 'playwright-core';

const DOC = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Live</title>
<script type="module" src="/_/hyperclayjs/src/hyperclay.js?preset=smooth-sailing"></script>
</head>
<body><h1 id="title">Shared list</h1><ul id="items"><li>first</li></ul></body>
</html>
`;

let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

/** Waits until the page's live-sync EventSource is open, and says which lane it chose. */
async function liveSyncOpen(page: Page): Promise<{ lane: string; url: string }> {
  await page.waitForFunction(
    () => (window as any).hyperclayModules?.['live-sync']?.liveSync?.sse?.readyState === 1,
    null,
    { timeout: 30_000 },
  );
  return page.evaluate(() => {
    const ls = (window as any).hyperclayModules['live-sync'].liveSync;
    return { lane: ls.lane, url: ls.sse.url };
  });
}

test('an owner’s saved edit reaches the other owner tab (live lane) and an anonymous viewer (saved lane) without reloads', {
  skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
  timeout: 180_000,
}, async () => {
  const s = bk.kiln.services;
  const person = await createPerson(s, newPerson());
  await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'live-list.html',
    html: DOC,
  });
  const sessions = await sessionsFor(s.database.db, bk.kiln.config, person.id, person.username);
  const url = bk.docUrl(person.username, '/live-list.html');

  const owner = await bk.newContext();
  await owner.addCookies(browserCookies(bk.kiln.config, sessions));
  const tabA = await owner.newPage();
  const tabB = await owner.newPage();
  const visitor = await bk.newContext();
  const viewer = await visitor.newPage();
  const relays: number[] = [];
  tabA.on('response', (r) => {
    if (new URL(r.url()).pathname === '/_/sync' && r.request().method() === 'POST') relays.push(r.status());
  });
  await Promise.all([tabA.goto(url), tabB.goto(url), viewer.goto(url)]);

  const [a, b, v] = await Promise.all([liveSyncOpen(tabA), liveSyncOpen(tabB), liveSyncOpen(viewer)]);
  assert.equal(a.lane, 'live');
  assert.equal(b.lane, 'live');
  assert.equal(v.lane, 'saved');
  assert.match(a.url, /\/_\/sync\?document-url=/, 'the library chose Kiln’s /_/sync wire (from /_/meta)');

  await tabA.evaluate(() => {
    const li = document.createElement('li');
    li.id = 'added';
    li.textContent = 'added in tab A';
    document.getElementById('items')!.appendChild(li);
  });
  const saved = await tabA.evaluate(() => (window as any).hyperclay.savePage());
  assert.equal(saved.msgType, 'success', JSON.stringify(saved));

  await tabB.waitForFunction(() => document.getElementById('added')?.textContent === 'added in tab A', null, {
    timeout: 30_000,
  });
  await viewer.waitForFunction(() => document.getElementById('added')?.textContent === 'added in tab A', null, {
    timeout: 30_000,
  });
  assert.ok(relays.length > 0 && relays.every((st) => st === 200), `snapshot relays from tab A: ${relays}`);
  // The viewer is still a viewer (the morph brought the stored document, not edit controls).
  assert.equal(await viewer.evaluate(() => document.cookie.includes('isAdminOfCurrentResource')), false);
  await owner.close();
  await visitor.close();
});
