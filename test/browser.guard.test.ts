// The data-clobber guard in Chromium with hyperclayjs 1.38 (npm, served by Kiln) as a page uses it: its autosave,
// its `Save-Trigger` header, its data-loss panel and its live-sync lane. A page script that empties the list
// autosaves; the chip appears in the owner's tab and, live, in a second open tab; "Keep change, restore my data"
// brings the list back. A person's own delete of one item (a real click) raises nothing.
import { test, before, after } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { newPerson, sessionsFor, browserCookies, actingAs } from './support/people.ts';
import { SCREENS, PHONE } from './support/screens.ts';

// A list page: the api rules read the title and the items; a hidden template item lets a restore grow the list
// back from nothing (hyper-html-api's `cms-template`).
const DOC = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Reading list</title>
<style>[cms-template]{display:none}</style>
<script type="application/json" data-rules-name="api" data-rules-version="1">{"title": "h1", "items": ".item[]"}</script>
<script type="module" src="/_/hyperclayjs/src/hyperclay.js?preset=smooth-sailing&features=autosave"></script>
</head>
<body><h1>Reading list</h1>
<ul id="list"><li class="item" cms-template></li><li class="item">Middlemarch</li><li class="item">Bleak House</li><li class="item">Persuasion</li></ul>
<button id="drop-last" type="button">Remove the last book</button>
<script>document.getElementById('drop-last').addEventListener('click', () => { const all = document.querySelectorAll('#list .item:not([cms-template])'); all[all.length - 1]?.remove(); });</script>
</body>
</html>
`;

let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

const books = (p: Page) => p.locator('#list .item:not([cms-template])').allTextContents();
const chip = (p: Page) => p.locator('#hyperclay-data-loss-guard .dg-chip');

async function openAsOwner(p: Page, url: string) {
  await p.goto(url);
  await p.waitForFunction(() => typeof (window as any).hyperclay?.savePage === 'function', null, { timeout: 20_000 });
  // The library compares with the page as it settled after loading (savePage.js): it marks that moment.
  await p.waitForSelector('html[savestatus=saved]', { state: 'attached', timeout: 20_000 });
}

test('a page script empties the list: the chip shows in both owner tabs, and "restore my data" brings the list back', {
  skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
  timeout: 180_000,
}, async () => {
  const s = bk.kiln.services;
  const person = await createPerson(s, newPerson());
  await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'reading.html',
    html: DOC,
  });
  const sessions = await sessionsFor(s.database.db, bk.kiln.config, person.id, person.username);
  const url = bk.docUrl(person.username, '/reading.html');
  const served = async () => {
    const c = bk.kiln.client(`${person.username}.${bk.kiln.config.rootDomain}`);
    return (await c.get('/reading.html')).text;
  };
  mkdirSync(SCREENS, { recursive: true });

  const owner = await bk.newContext();
  await owner.addCookies(browserCookies(bk.kiln.config, sessions));
  const tab = await owner.newPage();
  const second = await owner.newPage();
  await second.setViewportSize(PHONE);
  // The second tab's live lane is open before anything happens (its GET is answered with the stream's headers).
  const lane = second.waitForResponse((r) => new URL(r.url()).pathname === '/_/sync' && r.request().method() === 'GET');
  await openAsOwner(second, url);
  await lane;
  await openAsOwner(tab, url);

  // A person's own deliberate delete: a real click, then the autosave (Save-Trigger: user). Nothing is raised.
  await tab.click('#drop-last');
  for (let i = 0; i < 200 && (await served()).includes('Persuasion'); i++) await tab.waitForTimeout(100);
  assert.equal((await served()).includes('Persuasion'), false, 'the autosave stored the delete');
  const quiet = await tab.evaluate(
    async (u) => (await fetch(`/_/data-loss?file=${encodeURIComponent(u)}`)).json(),
    url,
  );
  assert.deepEqual(quiet, { event: null });

  // A page script (no gesture) empties the list; the autosave sends it as Save-Trigger: auto.
  const trigger = tab.waitForRequest((r) => new URL(r.url()).pathname === '/_/save');
  await tab.evaluate(() => {
    for (const li of document.querySelectorAll('#list .item:not([cms-template])')) li.remove();
  });
  assert.equal((await trigger).headers()['save-trigger'], 'auto');
  await chip(tab).waitFor({ state: 'visible', timeout: 30_000 });
  await chip(second).waitFor({ state: 'visible', timeout: 30_000 });
  assert.equal(
    await chip(tab)
      .textContent()
      .then((t) => t?.trim()),
    'Saved data overwritten',
  );
  await chip(tab).click();
  const panel = tab.locator('#hyperclay-data-loss-guard .dg-panel');
  await panel.waitFor({ state: 'visible' });
  await tab.locator('#hyperclay-data-loss-guard [data-dg=toggle]').click();
  assert.match((await panel.textContent()) ?? '', /Middlemarch/);
  // Its small grey text reads at 4.5:1 (Kiln's owner toolbar restyles the library's greys): axe finds nothing
  // serious in the panel.
  const axe = await new AxeBuilder({ page: tab }).include('#hyperclay-data-loss-guard').analyze();
  assert.deepEqual(
    axe.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
  );
  await tab.screenshot({ path: path.join(SCREENS, 'data-loss-panel-desktop.png') });
  await second.screenshot({ path: path.join(SCREENS, 'data-loss-chip-phone.png') });

  const restore = tab.locator('#hyperclay-data-loss-guard [data-dg=restore]');
  assert.equal(await restore.isEnabled(), true, 'a template item lets the list grow back: restorable');
  const reloaded = tab.waitForEvent('load');
  await restore.click();
  await reloaded;
  assert.deepEqual(await books(tab), ['Middlemarch', 'Bleak House']);
  assert.match(await served(), /<li class="item">Middlemarch<\/li><li class="item">Bleak House<\/li>/);
  // The other tab hears that it is resolved: its chip goes.
  await chip(second).waitFor({ state: 'detached', timeout: 30_000 });
  await tab.screenshot({ path: path.join(SCREENS, 'data-loss-restored-desktop.png') });
  await owner.close();
});
