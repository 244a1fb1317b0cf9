// Pages a newcomer meets first, on a phone (390 px) and a desktop (1280 px) in Chromium: the sync-keys
// page with a key listed, and the dashboard, whose list of documents starts within the first screen on a
// phone (the create forms fold away there, one tap each) and which keeps every form on a desktop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { browserCookies, signedIn, actingAs } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { createNode } from '../src/nodes/tree.ts';

const skip = !hasChromium && 'Chromium is not installed';
let bk: BrowserKiln;
let page: Page;
let me: Awaited<ReturnType<typeof signedIn>>;

before(async () => {
  if (!hasChromium) return;
  bk = await startBrowserKiln();
  me = await signedIn(bk.kiln, bk.kiln.client(), { plan: 'maker' });
  const context = await bk.newContext();
  await context.addCookies(browserCookies(bk.kiln.config, me.sessions));
  page = await context.newPage();
});
after(async () => {
  if (bk) await bk.stop();
});

test('the sync-keys page with a key listed: no sideways scrolling at 390 px, every column readable', {
  skip,
}, async () => {
  const { prefix } = await createSyncKey(bk.kiln.services, me.id);
  for (const [size, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.goto(bk.mainUrl('/_/dashboard/keys'));
    const row = page.locator('tr[data-key-id]');
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', new RegExp(`${prefix}…`));
    assert.ok(await row.getByRole('button', { name: 'Revoke' }).isVisible());
    await check(page, 'sync-keys-listed', size);
  }
});

test('the dashboard at 390 px: the list starts within the first screen; every create form is one tap away; the desktop keeps them open', {
  skip,
}, async () => {
  await createNode(await actingAs(bk.kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'notes.html',
    starter: 'notes',
  });
  await page.setViewportSize(PHONE);
  await page.goto(bk.mainUrl('/_/dashboard'));
  const list = page.locator('#tree');
  await list.waitFor();
  const top = await list.evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
  assert.ok(top < PHONE.height, `the list starts ${top}px down, past the first screen (${PHONE.height}px)`);
  await check(page, 'dashboard-first-screen', 'phone');
  // Each form opens with one tap and works as on a desktop.
  for (const name of ['Create a document', 'Create a folder', 'Upload']) {
    assert.equal(await page.getByLabel(name === 'Upload' ? 'Upload files' : `New ${name.slice(9)}`).isVisible(), false);
    await page.locator('.create summary', { hasText: name }).click();
  }
  await page.getByLabel('New folder').fill('phone-folder');
  await page.getByRole('button', { name: 'Create folder' }).click();
  await page.locator('#tree tr[data-type=folder]', { hasText: 'phone-folder' }).waitFor();
  await check(page, 'dashboard-forms-open', 'phone');

  await page.setViewportSize(DESKTOP);
  await page.goto(bk.mainUrl('/_/dashboard'));
  for (const label of ['New document', 'New folder', 'Upload files'])
    assert.ok(await page.getByLabel(label, { exact: true }).isVisible(), `${label} is shown on a desktop`);
  await check(page, 'dashboard-first-screen', 'desktop');
});
