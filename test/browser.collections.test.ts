// A collection in a real browser (Debian Chromium): the owner makes a folder a collection on the
// dashboard, opens its dashboard page; a visitor fills in the public form; the submission appears on
// the open dashboard without a reload, and it is a file the sync API lists. Checked at phone width.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { browserCookies, signedIn, actingAs } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { SyncApi } from './support/sync-client.ts';

const skip = !hasChromium && 'Chromium is not installed';
let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(async () => {
  if (bk) await bk.stop();
});

test('a visitor’s submission on the form appears live on the owner’s open dashboard, and syncs as a file', {
  skip,
}, async () => {
  const me = await signedIn(bk.kiln, bk.kiln.client());
  await createNode(await actingAs(bk.kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'folder',
    name: 'contact',
  });

  // The owner marks the folder on the dashboard.
  const owner = await bk.newContext();
  await owner.addCookies(browserCookies(bk.kiln.config, me.sessions));
  const dash = await owner.newPage();
  dash.setDefaultTimeout(20_000);
  await dash.goto(bk.mainUrl('/_/dashboard'));
  const row = dash.locator('#tree tr[data-type=folder]');
  await row.locator('summary').click();
  await row.getByRole('button', { name: 'Make it a collection' }).click();
  await dash
    .locator('#tree tr.row-msg')
    .getByText(/is a collection/)
    .waitFor();
  await dash.locator('#tree .kind', { hasText: 'collection' }).waitFor();
  await check(dash, 'collection-marked', 'desktop');

  // Its info page names the id, the token and the addresses.
  await dash.locator('#tree .kind').getByRole('link', { name: 'info' }).click();
  await dash.getByRole('heading', { name: /Collection “contact”/ }).waitFor();
  const text = (await dash.textContent('main')) ?? '';
  const id = /col_[a-z0-9]{10}/.exec(text)?.[0];
  assert.ok(id, text);
  await dash.setViewportSize(PHONE);
  await check(dash, 'collection-info', 'phone');

  // The owner's own dashboard page, open and live.
  const records = await owner.newPage();
  records.setDefaultTimeout(20_000);
  await records.setViewportSize(PHONE);
  await records.goto(bk.docUrl(me.username, '/contact/dashboard.html'));
  await records.getByText(/^Live:/).waitFor();
  await records.getByText('No submissions yet.', { exact: false }).waitFor();

  const pageErrors: string[] = [];
  records.on('pageerror', (e) => pageErrors.push(String(e)));
  // A visitor (no cookies) fills in the public form.
  const visitor = await bk.newContext();
  const form = await visitor.newPage();
  form.setDefaultTimeout(20_000);
  await form.setViewportSize(PHONE);
  await form.goto(bk.docUrl(me.username, '/contact/submission-form.html'));
  await form.getByLabel('Name').fill('Grace Hopper');
  await form.getByLabel('Email').fill('grace@example.com');
  await form.getByLabel('Message').fill('Compilers are friends.');
  await form.getByRole('button', { name: 'Send' }).click();
  await form.getByText('Thank you: your submission was received.').waitFor();
  assert.equal(await form.getByLabel('Name').inputValue(), '', 'the form is cleared for the next one');
  await check(form, 'collection-form', 'phone');

  // It appears on the open dashboard, with no reload.
  const cell = records.locator('#records tbody tr td', { hasText: 'Compilers are friends.' });
  await cell.waitFor();
  assert.equal(await records.locator('#count').textContent(), '1 submission');
  assert.match((await records.locator('#records tbody tr').first().textContent()) ?? '', /Grace Hopper/);
  await check(records, 'collection-records', 'phone');

  // The record is the owner's: the visitor's browser opening its file gets no record (there is no home
  // page, so a missing file's 404), the owner's gets it.
  const peek = await form.goto(bk.docUrl(me.username, '/contact/records/1.json'));
  assert.equal(peek?.status(), 404);
  assert.doesNotMatch((await form.content()) ?? '', /Compilers|grace@example/);
  const mine = await records.context().newPage();
  const own = await mine.goto(bk.docUrl(me.username, '/contact/records/1.json'));
  assert.equal(own?.status(), 200);
  assert.match((await own?.text()) ?? '', /Compilers are friends/);
  await mine.close();

  // The info page shows what the record uses of the limits; the owner changes one and is told.
  await dash.setViewportSize(DESKTOP);
  await dash.reload();
  await dash.getByText('Records: 1 of 10,000').waitFor();
  await dash.getByLabel('Most records').fill('500');
  await dash.getByRole('button', { name: 'Save limits' }).click();
  await dash.getByText(/Saved: "contact" takes at most 500 records/).waitFor();
  await dash.getByText('Records: 1 of 500').waitFor();
  await check(dash, 'collection-limits', 'desktop');

  // And it is a JSON file in records/, as the sync API lists it.
  const { key } = await createSyncKey(bk.kiln.services, me.id);
  const api = new SyncApi({
    port: Number(new URL(bk.kiln.url).port),
    host: bk.kiln.config.rootDomain,
    apiKey: key,
  });
  const listed = (await api.list()).nodes.filter((n) => n.path === 'contact/records');
  assert.deepEqual(
    listed.map((n) => [n.type, n.name]),
    [['upload', '1.json']],
  );

  // Deleting it on the dashboard (after confirming) removes the row.
  records.once('dialog', (d) => d.accept());
  await records.getByRole('button', { name: 'Delete submission 1' }).click();
  await records.getByText('Submission deleted.').waitFor();
  assert.equal(await records.locator('#records tbody tr').count(), 0);
  assert.deepEqual(pageErrors, [], 'the dashboard page ran without errors');
  await owner.close();
  await visitor.close();
});
