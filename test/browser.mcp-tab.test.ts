// An agent's edit_document and an owner's open tab, in Chromium with hyperclayjs 1.38 (served by Kiln): the owner's
// notes page (the `notes` starter: hyperclayjs's standard preset, an `api` rules tag over its to-do list) is open
// in edit mode; an agent (the SDK's client over /_/mcp with the owner's sync key) appends a to-do item. Then the
// tab, which never saw the item, saves the page it holds (a page-script edit, saved with `Save-Trigger: auto`, as
// hyperclayjs's autosave sends it). That stale save must not drop the agent's item silently: the data-clobber
// guard counts the agent's item as saved data, so the stale save raises its event, and the owner's tab shows the
// chip "Saved data overwritten"; its panel names the item, and "Keep change, restore my data" brings it back.
// Before that, the tab is told of the agent's change at once (Kiln's toolbar; hyperclayjs's live sync where the page
// loads it), and Reload shows it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { hasChromium, saveNow, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createNode } from '../src/nodes/tree.ts';
import { starterDocument } from '../src/nodes/starters.ts';
import { actingAs, sessionsFor, browserCookies } from './support/people.ts';
import { keyHolder } from './support/sync-client.ts';
import { call, mcpClient } from './support/mcp.ts';
import { SCREENS, DESKTOP, PHONE } from './support/screens.ts';

let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

const AGENT_ITEM = 'Buy oat milk (added by the agent)';

/** The agent adds AGENT_ITEM to the page's to-do list through the MCP door (`edit_document`, one append). */
const appendAgentItem = (agent: Parameters<typeof call>[0], path: string) =>
  call(agent, 'edit_document', {
    path,
    edits: [
      {
        op: 'append',
        selector: 'ul.todo',
        html: `<li><input type="checkbox" persist aria-label="Done"><span editmode:contenteditable>${AGENT_ITEM}</span></li>`,
      },
    ],
  });
const todos = (p: Page) => p.locator('ul.todo li span').allTextContents();
const chip = (p: Page) => p.locator('#hyperclay-data-loss-guard .dg-chip');
/** Kiln's toolbar's notice of a change made elsewhere (in its open shadow root). */
const news = (p: Page) => p.locator('kiln-toolbar .news');

/** A key holder with the document `name` (the notes starter, or `html`) and the browser context of their signed-in
 *  session. */
async function ownerWith(name: string, html: string | Buffer = starterDocument('notes', name)) {
  const s = bk.kiln.services;
  const { person, key } = await keyHolder(bk.kiln);
  await createNode(await actingAs(s, person.id), { ownerId: person.id, parentId: 0, type: 'site', name, html });
  const sessions = await sessionsFor(s.database.db, bk.kiln.config, person.id, person.username);
  const owner = await bk.newContext();
  await owner.addCookies(browserCookies(bk.kiln.config, sessions));
  return { person, key, owner, url: bk.docUrl(person.username, `/${name}`) };
}

async function openAsOwner(p: Page, url: string) {
  await p.goto(url);
  await p.waitForFunction(() => typeof (window as any).hyperclay?.savePage === 'function', null, { timeout: 20_000 });
  // The library compares with the page as it settled after loading (savePage.js): it marks that moment.
  await p.waitForSelector('html[savestatus=saved]', { state: 'attached', timeout: 20_000 });
}

test('an agent’s edit_document and an open owner tab: a stale save after it raises the data-loss chip, and the agent’s item comes back', {
  skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
  timeout: 180_000,
}, async () => {
  const { person, key, owner, url } = await ownerWith('notes.html');
  const served = async () => {
    const c = bk.kiln.client(`${person.username}.${bk.kiln.config.rootDomain}`);
    return (await c.get('/notes.html')).text;
  };
  mkdirSync(SCREENS, { recursive: true });

  const tab = await owner.newPage();
  await tab.setViewportSize(DESKTOP);
  await openAsOwner(tab, url);
  assert.deepEqual(await todos(tab), ['Write the first thing to do', 'Tick a box, then save']);
  // The owner's first look (the panel's GET) starts protecting the page's data.
  const first = await tab.evaluate(
    async (u) => (await fetch(`/_/data-loss?file=${encodeURIComponent(u)}`)).json(),
    url,
  );
  assert.deepEqual(first, { event: null });
  // The toolbar listens for changes made elsewhere once its `notices` lane is open.
  await tab.waitForSelector('kiln-toolbar[data-notices=open]', { state: 'attached', timeout: 20_000 });

  // The agent appends an item through the door.
  const agent = await mcpClient(bk.kiln, key, { name: 'Claude Code' });
  const edited = await appendAgentItem(agent, 'notes.html');
  assert.equal(edited.changed, true);
  assert.match(await served(), new RegExp(AGENT_ITEM.replace(/[()]/g, '\\$&')));

  // What the open tab shows: an editing tab does not take the stored page in (a morph could strip its editing
  // state), so it is told. The notes starter loads hyperclayjs's `standard` preset, which has no live sync: Kiln's
  // toolbar hears it on the `notices` lane and says who changed the page, with a Reload button. Until the owner
  // reloads, the tab still lists the two starter items: it is stale.
  await news(tab).waitFor({ state: 'visible', timeout: 20_000 });
  assert.match(
    (await news(tab).textContent()) ?? '',
    /^Claude Code via sync key hcsk_\S+ changed this page elsewhere\./,
  );
  assert.equal(await tab.locator('kiln-toolbar .act').isVisible(), true);
  assert.deepEqual(await todos(tab), ['Write the first thing to do', 'Tick a box, then save']);
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-after-agent-desktop.png') });
  await tab.setViewportSize(PHONE);
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-after-agent-phone.png') });
  await tab.setViewportSize(DESKTOP);

  // The stale tab saves the page it holds: a page script renames the notes' heading (page text, not data) and
  // saves (no gesture: the library sends `Save-Trigger: auto`, as its autosave does).
  const trigger = tab.waitForRequest((r) => new URL(r.url()).pathname === '/_/save');
  await tab.evaluate(() => {
    document.querySelector('[data-edit-id=notes] h2')!.textContent = 'Written in the stale tab';
  });
  const saved = await saveNow(tab);
  assert.equal(saved.msgType, 'success', JSON.stringify(saved));
  assert.equal((await trigger).headers()['save-trigger'], 'auto');
  const afterSave = await served();
  assert.match(afterSave, /Written in the stale tab/);
  assert.equal(afterSave.includes(AGENT_ITEM), false, 'the stale tab’s save wrote the page without the agent’s item');
  // Kiln finds that the save undid the agent's change and says so in the toolbar, with Compare.
  await tab.waitForFunction(
    () =>
      /undid the change by Claude Code via sync key/.test(
        document.querySelector('kiln-toolbar')?.shadowRoot?.querySelector('.news')?.textContent ?? '',
      ),
    null,
    { timeout: 20_000 },
  );
  assert.equal(await tab.locator('kiln-toolbar .act').textContent(), 'Compare');
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-stale-save-notice-desktop.png') });

  // Not silently: the guard counts the agent's item as saved data, and the stale save destroyed it. The owner's
  // tab shows the chip; the panel names the item; restoring brings it back onto the page the tab saved.
  await chip(tab).waitFor({ state: 'visible', timeout: 30_000 });
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
  // The panel's preview: "items — 2 items (now) / 3 items (yours)", and nothing else.
  const told = ((await panel.textContent()) ?? '').replace(/\s+/g, ' ');
  assert.match(told, /Saved data overwritten/);
  assert.match(told, /items 2 items 3 items/);
  assert.doesNotMatch(told, /notes/);
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-stale-save-panel-desktop.png') });
  await tab.setViewportSize(PHONE);
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-stale-save-panel-phone.png') });
  await tab.setViewportSize(DESKTOP);

  const restore = tab.locator('#hyperclay-data-loss-guard [data-dg=restore]');
  assert.equal(await restore.isEnabled(), true);
  const reloaded = tab.waitForEvent('load');
  await restore.click();
  await reloaded;
  const back = await served();
  assert.ok(back.includes(AGENT_ITEM), 'the agent’s item is back');
  assert.match(back, /Written in the stale tab/, 'and the tab’s own change is kept');
  await tab.waitForFunction((t) => document.body.textContent!.includes(t), AGENT_ITEM, { timeout: 20_000 });
  await agent.close();
  await owner.close();
});

test('an agent’s edit reaches an editing tab with hyperclayjs’s live sync at once: its toast and the toolbar say who, and Reload shows the change', {
  skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
  timeout: 120_000,
}, async () => {
  // The notes starter with hyperclayjs's live-sync module added: the tab rides the `live` lane.
  const html = starterDocument('notes', 'live.html')
    .toString('utf8')
    .replace('preset=standard', 'preset=standard&features=live-sync');
  assert.match(html, /features=live-sync/);
  const { key, owner, url } = await ownerWith('live.html', html);
  const tab = await owner.newPage();
  await tab.setViewportSize(PHONE);
  await openAsOwner(tab, url);
  await tab.waitForFunction(() => !!(window as any).hyperclayModules?.['live-sync'], null, { timeout: 20_000 });
  // Its live lane is open before the agent writes.
  await tab.waitForFunction(() => (window as any).hyperclayModules['live-sync'].liveSync.sse?.readyState === 1, null, {
    timeout: 20_000,
  });

  const agent = await mcpClient(bk.kiln, key, { name: 'Claude Code' });
  await appendAgentItem(agent, 'live.html');
  await news(tab).waitFor({ state: 'visible', timeout: 20_000 });
  assert.match(
    (await news(tab).textContent()) ?? '',
    /^Claude Code via sync key hcsk_\S+ changed this page elsewhere\./,
  );
  // hyperclayjs's own persistent toast carries the same words.
  await tab
    .getByText(/Claude Code via sync key hcsk_\S+ changed this page elsewhere/)
    .first()
    .waitFor({ timeout: 20_000 });
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-live-notice-phone.png') });
  await tab.setViewportSize(DESKTOP);
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-live-notice-desktop.png') });
  assert.equal((await todos(tab)).includes(AGENT_ITEM), false, 'not applied by itself: the owner chooses when');

  const reloaded = tab.waitForEvent('load');
  await tab.locator('kiln-toolbar .act').click();
  await reloaded;
  await tab.waitForFunction((t) => document.body.textContent!.includes(t), AGENT_ITEM, { timeout: 20_000 });
  assert.ok((await todos(tab)).includes(AGENT_ITEM));
  assert.equal(await news(tab).isVisible(), false, 'a fresh page has no notice');
  await agent.close();
  await owner.close();
});

// The gap before the lane: the toolbar opens its notices lane after `load` and hyperclayjs's `ready` (seconds on
// a slow phone). An agent's write in between reached no lane of the tab; the toolbar's tag carries the ETag of the
// page served, the lane is opened `since` it, and its first frame is the notice. Deterministic: the agent writes
// while the browser holds the lane's request (after the page was served, before the lane opens).
test('an agent’s edit while the owner’s tab is still loading: the toolbar’s notices lane, opened since the page served, tells it first', {
  skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
  timeout: 120_000,
}, async () => {
  const { key, owner, url } = await ownerWith('loading.html');
  const tab = await owner.newPage();
  await tab.setViewportSize(PHONE);
  const agent = await mcpClient(bk.kiln, key, { name: 'Claude Code' });
  // The first notices lane this tab asks for waits for the agent's write (the page is served by then).
  const since: string[] = [];
  await tab.route(
    (u) => u.pathname === '/_/sync' && u.searchParams.get('lane') === 'notices',
    async (route) => {
      since.push(new URL(route.request().url()).searchParams.get('since') ?? '');
      if (since.length === 1) {
        const edited = await appendAgentItem(agent, 'loading.html');
        assert.equal(edited.changed, true);
      }
      await route.continue();
    },
  );
  const response = await tab.goto(url);
  const served = (await response!.headerValue('etag'))?.replace(/"/g, '');
  await news(tab).waitFor({ state: 'visible', timeout: 20_000 });
  assert.equal(since[0], served, 'the lane is opened since the ETag of the page served');
  assert.match(
    (await news(tab).textContent()) ?? '',
    /^Claude Code via sync key hcsk_\S+ changed this page elsewhere\. Reload to see the change\.$/,
  );
  assert.equal(await tab.locator('kiln-toolbar .act').textContent(), 'Reload');
  assert.deepEqual(await todos(tab), ['Write the first thing to do', 'Tick a box, then save'], 'the tab is stale');
  await tab.waitForSelector('html[savestatus=saved]', { state: 'attached', timeout: 20_000 });
  await tab.screenshot({ path: path.join(SCREENS, 'mcp-tab-before-lane-notice-phone.png') });

  // Reload shows the change, and the fresh page (served after it) is told nothing.
  const reloaded = tab.waitForEvent('load');
  await tab.locator('kiln-toolbar .act').click();
  await reloaded;
  await tab.waitForSelector('kiln-toolbar[data-notices=open]', { state: 'attached', timeout: 20_000 });
  assert.ok((await todos(tab)).includes(AGENT_ITEM));
  assert.equal(since.length, 2);
  assert.notEqual(since[1], since[0]);
  assert.equal(await news(tab).isVisible(), false, 'a fresh page has no notice');
  await agent.close();
  await owner.close();
});
