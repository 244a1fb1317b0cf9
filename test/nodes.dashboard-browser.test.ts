// The dashboard in a real browser (Debian Chromium): its script posts the forms with fetch and swaps in
// the node list the server answers with; deleting a non-empty folder asks first; documents open on their host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { browserCookies, signedIn } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';
import { until } from './support/wait.ts';

let bk: BrowserKiln;
let page: Page;
let username: string;

before(async () => {
  if (!hasChromium) return;
  bk = await startBrowserKiln();
  const me = await signedIn(bk.kiln, bk.kiln.client());
  username = me.username;
  const context = await bk.newContext();
  await context.addCookies(browserCookies(bk.kiln.config, me.sessions));
  page = await context.newPage();
});
after(async () => {
  if (bk) await bk.stop();
});

/** The message shown beside the row acted on (or at the top when the row is gone). */
const rowMsg = async (p: Page) => (await p.locator('#tree tr.row-msg').textContent()) ?? '';

/** Opens a row's "More" menu. */
const more = async (row: import('playwright-core').Locator) => {
  if ((await row.locator('details.more').getAttribute('open')) === null) await row.locator('summary').click();
};

const rowNames = (p: Page) =>
  p.$$eval('#tree tbody tr[data-node-id] .nm', (tds) =>
    tds.map((td) => (td.textContent ?? '').replace(/\s+/g, ' ').trim()),
  );

test('create, rename, move and delete from the dashboard without leaving the page', {
  skip: !hasChromium && 'Chromium is not installed',
}, async () => {
  await page.goto(bk.mainUrl('/_/dashboard'));
  assert.match((await page.textContent('h1')) ?? '', /Your documents/);
  const url = page.url();

  // Create a folder, then a document inside it (the folder choice arrives with the fresh list).
  await page.fill('#new-folder', 'notes');
  await page.click('form:has(#new-folder) button[type=submit]');
  await page.waitForSelector('#tree tr[data-type=folder]');
  assert.match(await rowMsg(page), /Folder "notes" created/);
  await page.fill('#new-site', 'todo.html');
  await page.selectOption('#new-site-parent', { label: 'notes/' });
  await page.click('form:has(#new-site) button[type=submit]');
  await page.waitForSelector('#tree tr[data-type=site]');
  assert.equal(page.url(), url, 'no navigation: the list was swapped in place');
  assert.deepEqual(await rowNames(page), ['notes/', 'todo.html']);
  assert.equal(await page.inputValue('#new-site'), '', 'the create form is cleared after success');

  // A refusal shows its message and changes nothing.
  await page.fill('#new-site', 'bad.txt');
  await page.click('form:has(#new-site) button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#flash')?.classList.contains('error'));
  assert.match((await page.textContent('#flash')) ?? '', /must end in \.html/);

  // Rename the document.
  const docRow = page.locator('#tree tr[data-type=site]');
  await more(docRow);
  await docRow.locator('form[action$="/rename"] input[name=name]').fill('done.html');
  await docRow.locator('form[action$="/rename"] button').click();
  await page.waitForFunction(() => document.querySelector('#tree')?.textContent?.includes('done.html'));

  // Move the folder into another one: what it holds moves along.
  await page.fill('#new-folder', 'archive');
  await page.click('form:has(#new-folder) button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#tree')?.textContent?.includes('archive/'));
  const folderRow = (name: string) =>
    page.locator('#tree tr[data-type=folder]').filter({ has: page.locator('td:first-child', { hasText: name }) });
  const notesRow = folderRow('notes/');
  await more(notesRow);
  await notesRow.locator('form[action$="/move"] select').selectOption({ label: 'archive/' });
  await notesRow.locator('form[action$="/move"] button').click();
  await page.waitForFunction(() =>
    document.querySelector('#tree tr.row-msg')?.textContent?.includes('Moved "notes" to "archive"'),
  );
  assert.deepEqual(await rowNames(page), ['archive/', 'notes/', 'done.html']);

  // It opens on the account's document host.
  const href = await page.getAttribute('#tree tr[data-type=site] a[target=_blank]', 'href');
  assert.equal(href, bk.docUrl(username, '/archive/notes/done.html'));
  const doc = await page.context().newPage();
  const res = await doc.goto(href!);
  assert.equal(res?.status(), 200);
  assert.equal(await doc.evaluate(() => document.cookie.includes('isAdminOfCurrentResource=true')), true);
  await doc.close();

  // Deleting the non-empty folder asks first; dismissing keeps it, accepting deletes everything.
  const messages: string[] = [];
  page.once('dialog', (d) => {
    messages.push(d.message());
    void d.dismiss();
  });
  const notesDelete = folderRow('notes/').locator('a[data-delete]');
  await more(folderRow('notes/'));
  await notesDelete.click();
  assert.match(messages[0], /Delete the folder "notes" and the 1 item inside it\?/);
  assert.equal((await rowNames(page)).length, 3);
  page.once('dialog', (d) => void d.accept());
  await more(folderRow('notes/'));
  await notesDelete.click();
  await page.waitForFunction(() => document.querySelectorAll('#tree tbody tr[data-node-id]').length === 1);
  assert.deepEqual(await rowNames(page), ['archive/']);
  assert.match((await page.textContent('#flash')) ?? '', /Deleted "notes" and 1 item inside it/);
});

test('uploading a name already there asks Replace / Keep both (Replace by default for the same type); a file’s menu has Replace', {
  skip: !hasChromium && 'Chromium is not installed',
}, async () => {
  const host = bk.kiln.client(bk.kiln.hostOf(username));
  const png = (text: string) => ({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from(text) });
  await page.goto(bk.mainUrl('/_/dashboard'));
  await page.setInputFiles('#upload-files', png('first'));
  await page.click('#upload-form button[type=submit]');
  await page.locator('#uploads li .state', { hasText: 'Uploaded logo.png.' }).waitFor();
  await page.locator('#tree tr[data-path="logo.png"]').waitFor();

  // Again: the page asks, with Replace focused.
  await page.setInputFiles('#upload-files', png('second'));
  await page.click('#upload-form button[type=submit]');
  const ask = page.getByRole('dialog');
  await ask.waitFor();
  assert.match((await ask.textContent()) ?? '', /“logo\.png” is already in this folder/);
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Replace');
  await check(page, 'upload-ask', 'desktop');
  await page.setViewportSize(PHONE);
  await check(page, 'upload-ask', 'phone');
  await page.setViewportSize(DESKTOP);
  await ask.getByRole('button', { name: 'Replace' }).click();
  await page.locator('#uploads li .state', { hasText: 'Replaced logo.png (the old file is in the trash).' }).waitFor();
  await until(async () => (await host.get('/logo.png')).text === 'second', { what: 'the replaced bytes served' });
  await page.locator('#tree tr[data-path="logo.png"]').waitFor();
  assert.equal(await page.locator('#tree tr[data-type=upload]').count(), 1, 'no -1 copy');

  // Keep both: a numbered copy, said by name.
  await page.setInputFiles('#upload-files', png('third'));
  await page.click('#upload-form button[type=submit]');
  await ask.getByRole('button', { name: 'Keep both' }).click();
  await page.locator('#uploads li .state', { hasText: 'Uploaded as logo-1.png' }).waitFor();
  assert.equal((await host.get('/logo.png')).text, 'second');

  // The file's own menu: Replace with another file, whatever its name; it keeps the address.
  const row = page.locator('#tree tr[data-path="logo.png"]');
  await more(row);
  await row.locator('form.replace-file input[type=file]').setInputFiles({
    name: 'other-name.png',
    mimeType: 'image/png',
    buffer: Buffer.from('fourth'),
  });
  await row.locator('form.replace-file button').click();
  await until(async () => (await host.get('/logo.png')).text === 'fourth', { what: 'the menu’s replacement served' });
});
