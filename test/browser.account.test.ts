// Accounts and administration in Debian Chromium: the account page (change the password), "forgot your
// password?" through the mailed link, export → import of a whole tree through the account page, the
// admin panel (search, suspend: the suspended account's host answers "unavailable"; unsuspend), each
// page checked at desktop and phone size (screenshots, no sideways scrolling, axe).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { zipOf } from './support/zip.ts';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { browserCookies, newPerson, sessionsFor } from './support/people.ts';
import { mailsTo } from './support/stripe.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';
import { createPerson } from '../src/accounts/people.ts';
import { saveDocument } from '../src/save/pipeline.ts';

const skip = !hasChromium && 'Chromium is not installed';
let bk: BrowserKiln;

before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(async () => {
  if (bk) await bk.stop();
});

/** A browser profile signed in as a new person (`over`: plan, superadmin …). */
async function personIn(over: Parameters<typeof newPerson>[0] = {}, viewport = DESKTOP) {
  const input = newPerson(over);
  const person = await createPerson(bk.kiln.services, input);
  const ctx: BrowserContext = await bk.browser.newContext({ viewport });
  await ctx.addCookies(
    browserCookies(
      bk.kiln.config,
      await sessionsFor(bk.kiln.services.database.db, bk.kiln.config, person.id, person.username),
    ),
  );
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  return { input, person, ctx, page };
}

const message = async (p: Page) => (await p.textContent('main .msg')) ?? '';

test('the account page: change the password; sign-ins listed; checked at both sizes', { skip }, async () => {
  const { input, page, ctx } = await personIn({ plan: 'maker' });
  await page.goto(bk.mainUrl('/_/account'));
  assert.match((await page.textContent('h1')) ?? '', /Your account/);
  assert.equal(await page.locator('ul.logins li').count(), 1);
  await check(page, 'account', 'desktop');
  await page.fill('#current-password', input.password);
  await page.fill('#new-password', 'a fresh passphrase for kiln');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.waitForURL(/\/_\/account\?/);
  assert.match(await message(page), /Password changed/);
  const phone = await bk.browser.newContext({ viewport: PHONE, isMobile: true });
  await phone.addCookies(await ctx.cookies());
  const p2 = await phone.newPage();
  await p2.goto(bk.mainUrl('/_/account'));
  await check(p2, 'account', 'phone');
  await phone.close();
  await ctx.close();
});

test('forgot password: from the sign-in page to a new password through the mailed link', { skip }, async () => {
  const input = newPerson();
  await createPerson(bk.kiln.services, input);
  const ctx = await bk.browser.newContext({ viewport: PHONE, isMobile: true });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(bk.mainUrl('/_/login'));
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  await check(page, 'reset', 'phone');
  await page.fill('#email', input.email);
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.waitForURL(/\/_\/reset\?/);
  assert.match(await message(page), /link to choose a new password is on its way/);
  let mails: Awaited<ReturnType<typeof mailsTo>> = [];
  for (let i = 0; i < 50 && mails.length === 0; i++) {
    mails = await mailsTo(bk.kiln, input.email);
    if (!mails.length) await page.waitForTimeout(50);
  }
  const link = /https?:\/\/\S+\/_\/reset\/[A-Za-z0-9_-]+/.exec(mails[0].text)![0];
  await page.goto(link);
  await page.fill('#password', 'the new passphrase here');
  await page.getByRole('button', { name: 'Set the password' }).click();
  await page.waitForURL(/\/_\/login\?/).catch(async (e) => {
    throw new Error(`${e.message}: at ${page.url()}: ${(await page.textContent('main'))?.slice(0, 300)}`);
  });
  assert.match(await message(page), /Your password is set/);
  await page.getByLabel('Email or username').fill(input.email);
  await page.getByLabel('Password').fill('the new passphrase here');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/_\/dashboard/).catch(async (e) => {
    throw new Error(`${e.message}: at ${page.url()}: ${(await page.textContent('main'))?.slice(0, 300)}`);
  });
  await ctx.close();
});

test('export → import through the account page: the same tree in another account', { skip }, async () => {
  const a = await personIn({ plan: 'maker' });
  await a.page.goto(bk.mainUrl('/_/dashboard'));
  for (const name of [`one-${a.person.id}.html`, `box-${a.person.id}/two-${a.person.id}.html`]) {
    await a.page.fill('#new-site', name);
    await a.page.click('form:has(#new-site) button[type=submit]');
    await a.page.locator('#tree a.nm', { hasText: name.split('/').pop()! }).waitFor();
  }
  await a.page.goto(bk.mainUrl('/_/account'));
  const [download] = await Promise.all([
    a.page.waitForEvent('download'),
    a.page.getByRole('button', { name: 'Download the zip' }).click(),
  ]);
  const zipPath = path.join(mkdtempSync(path.join(tmpdir(), 'kiln-export-')), 'tree.zip');
  await download.saveAs(zipPath);
  assert.ok(readFileSync(zipPath).subarray(0, 2).equals(Buffer.from('PK')), 'a zip');
  // Document names are unique across Kiln: the first account lets go of them (the trash frees names).
  const nodes = await a.page.evaluate(
    async () => (await (await fetch('/_/dashboard/nodes', { headers: { accept: 'application/json' } })).json()).nodes,
  );
  for (const n of nodes as Array<{ id: number; type: string }>)
    if (n.type === 'site')
      await a.page.evaluate(
        (id) => fetch(`/_/dashboard/nodes/${id}/delete`, { method: 'POST', headers: { accept: 'application/json' } }),
        n.id,
      );

  const b = await personIn({ plan: 'maker' });
  await b.page.goto(bk.mainUrl('/_/account'));
  await b.page.setInputFiles('#import-zip', zipPath);
  // The import is held at the browser's edge until the page has said what it is doing: the zip went up,
  // and the bar runs while Kiln imports it.
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  await b.page.route('**/_/account/import', async (route) => {
    await held;
    await route.continue();
  });
  await b.page.getByRole('button', { name: 'Import', exact: true }).click();
  await b.page.locator('#import-msg', { hasText: /Sending the zip|Importing/ }).waitFor();
  assert.equal(await b.page.locator('#import-progress').isVisible(), true);
  assert.equal(await b.page.getByRole('button', { name: 'Import', exact: true }).isDisabled(), true, 'sent once');
  await check(b.page, 'import-progress', 'desktop');
  await b.page.setViewportSize(PHONE);
  await check(b.page, 'import-progress', 'phone');
  await b.page.setViewportSize(DESKTOP);
  release();
  await b.page.waitForURL(/\/_\/dashboard\?/);
  await b.page.unroute('**/_/account/import');
  assert.match(await message(b.page), /Imported 2 documents, 0 files and 1 folder/);
  const names = await b.page.$$eval('#tree tr[data-node-id] .nm', (as) => as.map((x) => x.textContent));
  assert.deepEqual(names.sort(), [`box-${a.person.id}/`, `one-${a.person.id}.html`, `two-${a.person.id}.html`].sort());
  // The same zip again: refused whole, with the names in words, and the chosen zip kept in the form. Its
  // document names are unique beyond a folder, so no folder is offered.
  await b.page.goto(bk.mainUrl('/_/account'));
  await b.page.setInputFiles('#import-zip', zipPath);
  await b.page.getByRole('button', { name: 'Import', exact: true }).click();
  const said = b.page.locator('#import-msg');
  await said.filter({ hasText: 'Nothing was imported: 2 names are taken' }).waitFor();
  assert.equal(await said.getByRole('button').count(), 0);
  // A zip whose names clash only in place (an asset, a home page): one click imports it into a new folder.
  const assets = path.join(path.dirname(zipPath), 'assets.zip');
  writeFileSync(assets, await zipOf({ 'style.css': 'body{margin:0}', 'index.html': '<p>old home</p>' }));
  for (let i = 0; i < 2; i++) {
    await b.page.goto(bk.mainUrl('/_/account'));
    await b.page.setInputFiles('#import-zip', assets);
    await b.page.getByRole('button', { name: 'Import', exact: true }).click();
    if (i === 0) await b.page.waitForURL(/\/_\/dashboard\?/);
  }
  const into = said.getByRole('button', { name: 'Import into the folder "imported"' });
  await into.waitFor();
  assert.match((await said.textContent()) ?? '', /2 names are taken: style\.css, index\.html/);
  await check(b.page, 'import-refused', 'desktop');
  await into.click();
  await b.page.waitForURL(/\/_\/dashboard\?/);
  assert.match(await message(b.page), /Imported 1 document, 1 file and 1 folder/);
  await b.page.locator('#tree tr[data-path="imported/style.css"]').waitFor();
  await a.ctx.close();
  await b.ctx.close();
});

test('the admin panel: find an account, suspend it (its host answers "unavailable"), lift it', { skip }, async () => {
  const admin = await personIn({ isSuperadmin: true });
  const target = await personIn({ plan: 'maker' });
  await target.page.goto(bk.mainUrl('/_/dashboard'));
  await target.page.fill('#new-site', `live-${target.person.id}.html`);
  await target.page.click('form:has(#new-site) button[type=submit]');
  await target.page.locator('#tree a.nm', { hasText: `live-${target.person.id}.html` }).waitFor();

  await admin.page.goto(bk.mainUrl('/_/admin'));
  await check(admin.page, 'admin', 'desktop');
  await admin.page.fill('#q', target.person.username);
  await admin.page.getByRole('button', { name: 'Search' }).click();
  const row = admin.page.locator(`tr[data-account="${target.person.username}"]`);
  await row.getByRole('button', { name: 'Suspend' }).click();
  await admin.page.waitForURL(/\/_\/admin\?/);
  assert.match(await message(admin.page), /is suspended/);

  const visitor = await bk.browser.newContext({ viewport: PHONE, isMobile: true });
  const v = await visitor.newPage();
  const res = await v.goto(bk.docUrl(target.person.username, `/live-${target.person.id}.html`));
  assert.equal(res?.status(), 451);
  assert.match((await v.textContent('main')) ?? '', /unavailable/);
  await check(v, 'suspended', 'phone');
  await target.page.reload();
  assert.match(target.page.url(), /\/_\/login/, 'the suspended owner is signed out');

  await admin.page.fill('#q', target.person.username);
  await admin.page.getByRole('button', { name: 'Search' }).click();
  await row.getByRole('button', { name: 'Unsuspend' }).click();
  await admin.page.waitForURL(/\/_\/admin\?/);
  assert.match(await message(admin.page), /active again/);
  assert.equal((await v.goto(bk.docUrl(target.person.username, `/live-${target.person.id}.html`)))?.status(), 200);
  const phone = await bk.browser.newContext({ viewport: PHONE, isMobile: true });
  await phone.addCookies(await admin.ctx.cookies());
  const ap = await phone.newPage();
  await ap.goto(bk.mainUrl('/_/admin'));
  await check(ap, 'admin', 'phone');
  await phone.close();
  await visitor.close();
  await admin.ctx.close();
  await target.ctx.close();
});

test('moving to another Kiln: export here, sign up there in the browser, import at the first try', {
  skip,
}, async () => {
  // The other Kiln: its own storage, its own port.
  const there = await startBrowserKiln();
  try {
    for (const [size, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      // Here: an account made in the browser (its starter index.html), its home page edited, a second page.
      const who = { email: `mover-${size}@example.com`, username: `mover-${size}`, password: 'a passphrase to move' };
      const hereCtx = await bk.browser.newContext({ viewport });
      const here = await hereCtx.newPage();
      here.setDefaultTimeout(20_000);
      await here.goto(bk.mainUrl('/_/signup'));
      await here.fill('#email', who.email);
      await here.fill('#username', who.username);
      await here.fill('#password', who.password);
      await here.click('main button[type=submit]');
      await here.waitForURL(/\/_\/dashboard$/);
      const home = await bk.kiln.services.database.db
        .selectFrom('nodes')
        .innerJoin('accounts', 'accounts.id', 'nodes.owner_id')
        .select(['nodes.id', 'nodes.owner_id'])
        .where('accounts.username', '=', who.username)
        .where('nodes.name', '=', 'index.html')
        .executeTakeFirstOrThrow();
      const mine =
        '<!DOCTYPE html><html lang="en"><head><title>Mine</title></head><body><main><h1>My own home</h1></main></body></html>';
      // Saved as its owner would in the code editor (the page is theirs now, not an untouched starter).
      await saveDocument(bk.kiln.services, {
        nodeId: home.id,
        bytes: Buffer.from(mine),
        by: { kind: 'editor', accountId: home.owner_id, writer: null },
      });
      // On a phone the form is folded away: one tap opens it.
      if (size === 'phone') await here.locator('.create summary', { hasText: 'Create a document' }).click();
      await here.fill('#new-site', `notes/todo-${size}.html`);
      await here.click('form:has(#new-site) button[type=submit]');
      await here.locator('#tree a.nm', { hasText: `todo-${size}.html` }).waitFor();
      await here.goto(bk.mainUrl('/_/account'));
      const [download] = await Promise.all([
        here.waitForEvent('download'),
        here.getByRole('button', { name: 'Download the zip' }).click(),
      ]);
      const zipPath = path.join(mkdtempSync(path.join(tmpdir(), 'kiln-move-')), 'moving.zip');
      await download.saveAs(zipPath);
      await hereCtx.close();

      // There: the same person signs up in the browser (a fresh account, with its own starter) and imports.
      const thereCtx = await there.browser.newContext({ viewport });
      const p = await thereCtx.newPage();
      p.setDefaultTimeout(20_000);
      await p.goto(there.mainUrl('/_/signup'));
      await p.fill('#email', who.email);
      await p.fill('#username', who.username);
      await p.fill('#password', who.password);
      await p.click('main button[type=submit]');
      await p.waitForURL(/\/_\/dashboard$/);
      await p.goto(there.mainUrl('/_/account'));
      await p.setInputFiles('#import-zip', zipPath);
      await p.getByRole('button', { name: 'Import', exact: true }).click();
      await p.waitForURL(/\/_\/dashboard\?/);
      assert.match(await message(p), /Imported 2 documents, 0 files and 1 folder/);
      await check(p, 'moved-dashboard', size);
      // The imported home page took the starter's place; the starter waits in the trash.
      await p.goto(there.docUrl(who.username, '/'));
      assert.equal(await p.textContent('h1'), 'My own home');
      await p.goto(there.mainUrl('/_/dashboard/trash'));
      assert.equal(await p.locator('main tr', { hasText: 'index.html' }).count(), 1);
      await thereCtx.close();
    }
  } finally {
    await there.stop();
  }
});
