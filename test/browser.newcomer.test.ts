// A newcomer's first hour, in Debian Chromium at desktop (1280×800) and phone (390×844) sizes: first-run
// setup leads to a dashboard whose index.html is a self-saving starter, edited in place and saved; the
// owner's toolbar shows for the owner only and never reaches the stored bytes; every dashboard action
// is reachable; three files dropped on the list upload with a progress bar each; no page is wider than
// the viewport; axe-core finds no serious or critical violation. Screenshots of every main page at both
// sizes go to test-output/screens/ (git-ignored) for a person to look at.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';

const skip = !hasChromium && 'Chromium is not installed';

let bk: BrowserKiln;
let desk: BrowserContext;
let page: Page;
const owner = { email: 'ada@example.com', username: 'ada', password: 'a long passphrase for ada' };

before(async () => {
  if (!hasChromium) return;
  // As the README's walkthrough has it at another port: PORT set, ROOT_DOMAIN not (it follows PORT).
  bk = await startBrowserKiln({ env: { ROOT_DOMAIN: '' } });
  desk = await bk.browser.newContext({ viewport: DESKTOP });
  page = await desk.newPage();
  page.setDefaultTimeout(20_000);
});
after(async () => {
  if (bk) await bk.stop();
});

/** The stored bytes of a document, as a visitor (no cookies) gets them. */
async function stored(docPath: string): Promise<string> {
  const res = await bk.kiln.client(bk.kiln.hostOf(owner.username)).get(docPath);
  assert.equal(res.status, 200, `GET ${docPath} as a visitor`);
  return res.text;
}

/** Ctrl+S in the page, until Kiln has answered the save (a page saved before already says
 *  savestatus="saved" from its stored bytes, so the attribute alone proves nothing). */
async function saveWithKeys(p: Page) {
  const answered = p.waitForResponse((r) => r.url().endsWith('/_/save') && r.request().method() === 'POST');
  await p.keyboard.press('Control+s');
  assert.equal((await answered).status(), 200);
  await p.waitForFunction(() => document.documentElement.getAttribute('savestatus') === 'saved');
}

/** Opens a row's "More" menu (one is open at a time). */
async function more(row: import('playwright-core').Locator) {
  if ((await row.locator('details.more').getAttribute('open')) === null) await row.locator('summary').click();
}

test('first-run setup leads to a dashboard whose index.html is a self-saving page, edited in place and saved', {
  skip,
}, async () => {
  const started = Date.now();
  const port = bk.kiln.config.port;
  assert.notEqual(port, 8080);
  assert.equal(bk.kiln.config.rootDomain, `kiln.localhost:${port}`, 'ROOT_DOMAIN follows PORT');
  // A browser that opened the loopback address lands on the real one.
  await page.goto(`http://localhost:${port}/`);
  assert.equal(new URL(page.url()).host, `kiln.localhost:${port}`);
  assert.match(page.url(), /\/_\/setup$/);
  await check(page, 'setup', 'desktop');
  await page.fill('#email', owner.email);
  await page.fill('#username', owner.username);
  await page.fill('#password', owner.password);
  await page.click('main button[type=submit]');
  await page.waitForURL(/\/_\/dashboard$/);
  const rows = await page.$$eval('#tree tbody tr td.name', (tds) => tds.map((td) => td.textContent?.trim()));
  assert.deepEqual(rows, ['index.html'], 'setup made the home page');
  assert.match((await page.textContent('#usage')) ?? '', /1 document/);

  // "Served at" leads to a page, not a 404, and the owner may edit it right there.
  // Listening before the click: a tab that opens fast would otherwise be missed (clean-clone CI run 13 was).
  const [doc] = await Promise.all([desk.waitForEvent('page'), page.click('main p.muted a')]);
  await doc.waitForLoadState('load');
  await doc.waitForFunction(() => 'hyperclay' in window);
  const h1 = doc.locator('h1[contenteditable]');
  await h1.click();
  await doc.keyboard.press('End');
  await doc.keyboard.type(' by Ada');
  await saveWithKeys(doc);
  const saved = await stored('/');
  assert.match(saved, /<h1[^>]*>My site by Ada<\/h1>/);
  assert.doesNotMatch(saved, / contenteditable=|kiln-toolbar/, 'edit-mode markup and the toolbar stay out');
  assert.match(
    saved,
    /<style editmode:resource="" type="inert\/text\/css">/,
    'owner-only controls stay hidden for visitors',
  );
  console.log(`# setup to first saved edit: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await doc.close();
});

test("the owner's toolbar shows for the owner only and is never saved back", { skip }, async () => {
  const doc = await desk.newPage();
  await doc.goto(bk.docUrl(owner.username, '/'));
  const bar = doc.locator('kiln-toolbar');
  await bar.waitFor({ state: 'attached' });
  for (const label of ['Code', 'Versions', 'Dashboard'])
    assert.equal(await bar.getByRole('link', { name: label }).count(), 1);
  assert.equal(await bar.getByRole('link', { name: 'View as visitor' }).count(), 1);
  await check(doc, 'document-owner', 'desktop');
  // A save of the live DOM (what hyperclayjs sends) carries no toolbar; a body that still has the tag
  // (a page saved by another tool) is stored without it.
  await doc.waitForFunction(() => 'hyperclay' in window);
  await doc.evaluate(() => {
    document.querySelector('footer')!.textContent = 'Saved with the toolbar on screen.';
  });
  await saveWithKeys(doc);
  const bytes = await stored('/');
  assert.match(bytes, /Saved with the toolbar on screen\./);
  assert.doesNotMatch(bytes, /kiln-toolbar|toolbar\.js/);
  await doc.close();

  // A visitor (another browser profile) gets the stored page without it.
  const visitor = await bk.browser.newContext({ viewport: DESKTOP });
  const v = await visitor.newPage();
  await v.goto(bk.docUrl(owner.username, '/'));
  await v.waitForLoadState('load');
  assert.equal(await v.locator('kiln-toolbar').count(), 0);
  assert.equal(await v.locator('[contenteditable="true"]').count(), 0, 'visitors cannot edit');
  await check(v, 'document-visitor', 'desktop');
  await visitor.close();
});

test('every dashboard action is reachable, and its message appears beside the row', { skip }, async () => {
  await page.goto(bk.mainUrl('/_/dashboard'));
  await page.fill('#new-site', 'notes.html');
  await page.selectOption('#new-site-starter', 'notes');
  await page.click('form:has(#new-site) button[type=submit]');
  const notes = page.locator('#tree tr[data-type=site]', { has: page.locator('a.nm', { hasText: 'notes.html' }) });
  await notes.waitFor();
  assert.match((await page.locator('#tree tr.row-msg').textContent()) ?? '', /Document "notes\.html" created/);
  assert.match((await page.textContent('#usage')) ?? '', /2 documents/);
  const notesHtml = await stored('/notes.html');
  assert.match(notesHtml, /<ul class="todo">/, 'the notes starter');
  assert.match(
    notesHtml,
    /src="\/_\/hyperclayjs\/src\/hyperclay\.js\?preset=standard"/,
    "self-saving with Kiln's own copy",
  );

  // More → Duplicate: the copy appears with its message beside it.
  await more(notes);
  await notes.getByRole('button', { name: 'Duplicate' }).click();
  const copy = page.locator('#tree tr[data-type=site]', { has: page.locator('a.nm', { hasText: 'notes-copy.html' }) });
  await copy.waitFor();
  assert.match(
    (await page.locator('#tree tr.row-msg').textContent()) ?? '',
    /Duplicated "notes\.html" as "notes-copy\.html"/,
  );
  assert.equal(await stored('/notes-copy.html'), await stored('/notes.html'));
  assert.match((await page.textContent('#usage')) ?? '', /3 documents/);

  // Download: the stored bytes as an attachment.
  await more(copy);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    copy.getByRole('link', { name: 'Download' }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'notes-copy.html');

  // A folder collapses and expands (remembered across reloads).
  await page.fill('#new-site', 'drafts/idea.html');
  await page.click('form:has(#new-site) button[type=submit]');
  const idea = page.locator('#tree tr[data-type=site]', { has: page.locator('a.nm', { hasText: 'idea.html' }) });
  await idea.waitFor();
  const drafts = page.locator('#tree tr[data-type=folder]', { hasText: 'drafts/' });
  await drafts.getByRole('button', { name: 'Collapse the folder drafts' }).click();
  assert.equal(await idea.isVisible(), false);
  await page.reload();
  assert.equal(await idea.isVisible(), false, 'still collapsed after a reload');
  await drafts.getByRole('button', { name: 'Expand the folder drafts' }).click();
  assert.equal(await idea.isVisible(), true);

  // The filter keeps only matching rows.
  await page.fill('#filter', 'copy');
  assert.deepEqual(
    await page.$$eval('#tree tbody tr[data-node-id]:not([hidden]) a.nm', (as) => as.map((a) => a.textContent)),
    ['notes-copy.html'],
  );
  await page.fill('#filter', '');

  // Delete the copy from its menu (confirmed).
  page.once('dialog', (d) => void d.accept());
  await more(copy);
  await copy.getByRole('button', { name: 'Delete' }).click();
  await copy.waitFor({ state: 'detached' });
  assert.match((await page.textContent('#flash')) ?? '', /Deleted "notes-copy\.html"/);
  assert.match((await page.textContent('#usage')) ?? '', /3 documents/);
  await check(page, 'dashboard', 'desktop');

  // Edit code and Versions open on the document's host, signed in through the hand-off.
  await notes.getByRole('link', { name: 'Edit code' }).click();
  await page.waitForURL(/\/_\/edit\?path=notes\.html$/);
  await page.waitForSelector('#kiln-editor .cm-editor');
  await check(page, 'editor', 'desktop');
  await page.goto(bk.mainUrl('/_/dashboard'));
  await notes.getByRole('link', { name: 'Versions' }).click();
  await page.waitForURL(/\/_\/versions\?path=notes\.html$/);
  assert.match((await page.textContent('h1')) ?? '', /Versions of notes\.html/);
  await check(page, 'versions', 'desktop');
});

test('an editor tab learns of a newer version and never overwrites it silently', { skip }, async () => {
  const editorUrl = bk.docUrl(owner.username, '/_/edit?path=notes.html');
  const [a, b] = [await desk.newPage(), await desk.newPage()];
  for (const p of [a, b]) {
    await p.goto(editorUrl);
    await p.waitForSelector('#kiln-editor .cm-editor');
  }
  const type = (p: Page, text: string) =>
    p.evaluate((t) => {
      const view = (window as any).kilnEditor;
      view.dispatch({ changes: { from: 0, insert: t } });
    }, text);
  await type(a, '<!-- from tab A -->\n');
  assert.match((await a.textContent('#kiln-editor-status')) ?? '', /Unsaved changes/);
  assert.match(await a.title(), /^• /, 'the tab title marks unsaved changes');

  await type(b, '<!-- from tab B -->\n');
  await b.click('#kiln-editor-save');
  await b.waitForFunction(() => document.querySelector('#kiln-editor-status')?.textContent === 'Saved.');
  await a.waitForFunction(() => /newer version/.test(document.querySelector('#kiln-editor-status')?.textContent ?? ''));

  // Saving anyway is refused in words, with the two ways on.
  await a.click('#kiln-editor-save');
  await a.waitForFunction(() =>
    /Not saved: this document was changed/.test(document.querySelector('#kiln-editor-status')?.textContent ?? ''),
  );
  assert.match(await stored('/notes.html'), /from tab B/);
  assert.doesNotMatch(await stored('/notes.html'), /from tab A/);
  await check(a, 'editor-stale', 'desktop');
  await a.getByRole('button', { name: 'Keep mine as a new version' }).click();
  await a.waitForFunction(() => document.querySelector('#kiln-editor-status')?.textContent === 'Saved.');
  const now = await stored('/notes.html');
  assert.match(now, /from tab A/);
  assert.doesNotMatch(now, /from tab B/, "tab A's content, whole");
  await b.close();

  // Versions: restore the first one; the page says so, and the document is the starter again.
  await a.goto(bk.docUrl(owner.username, '/_/versions?path=notes.html'));
  await a.locator('tbody tr').last().getByRole('link', { name: 'restore' }).click();
  await a.locator('main button[type=submit]').click();
  await a.waitForURL(/\/_\/versions\?path=notes\.html/);
  assert.match((await a.textContent('main .msg.success')) ?? '', /Restored version 1\./);
  assert.doesNotMatch(await stored('/notes.html'), /from tab/);
  await a.close();
});

test('three files dropped on the list upload with a progress bar each; a file over the plan limit is refused before sending', {
  skip,
}, async () => {
  await page.goto(bk.mainUrl('/_/dashboard'));
  const limit = Number(await page.getAttribute('#tree', 'data-upload-limit'));
  assert.equal(limit, 100 * 1024 * 1024, "the superadmin's plan (Maker) limit");
  await page.evaluate(() => {
    const dt = new DataTransfer();
    for (const [name, text] of [
      ['a.txt', 'alpha'],
      ['b.css', 'body{color:red}'],
      ['c.json', '{"c":1}'],
      ['dropped.html', '<html><body>dropped page</body></html>'],
    ])
      dt.items.add(new File([text], name));
    const tree = document.getElementById('tree')!;
    tree.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    tree.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  assert.equal(await page.locator('#uploads progress').count(), 4, 'a progress bar per file');
  await page.waitForFunction(() => document.querySelectorAll('#uploads .state.done').length === 4);
  assert.deepEqual(
    await page.$$eval('#uploads progress', (ps) => ps.map((p) => (p as HTMLProgressElement).value)),
    [100, 100, 100, 100],
  );
  // The HTML file became a document (with a version), not an upload.
  await page.locator('#tree tr[data-type=site] a.nm', { hasText: 'dropped.html' }).waitFor();
  assert.equal(await stored('/dropped.html'), '<html><body>dropped page</body></html>');
  await page.waitForFunction(() => document.querySelectorAll('#tree tr[data-type=upload]').length === 3);
  assert.equal(await stored('/b.css'), 'body{color:red}');

  // Over the limit: refused in words, nothing sent.
  await page.evaluate((size) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(size + 1)], 'huge.bin'));
    document
      .getElementById('tree')!
      .dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, limit);
  await page.waitForFunction(() => document.querySelector('#uploads li:last-child .state.error'));
  assert.match(
    (await page.textContent('#uploads li:last-child')) ?? '',
    /Too large: your plan takes files up to 100\.0 MB/,
  );
  assert.equal(await page.locator('#tree tr[data-type=upload]').count(), 3);
});

test('a deleted document waits in the trash and comes back with one click', { skip }, async () => {
  await page.goto(bk.mainUrl('/_/dashboard'));
  await page.fill('#new-site', 'scratch.html');
  await page.click('form:has(#new-site) button[type=submit]');
  const row = page.locator('#tree tr[data-type=site]', { has: page.locator('a.nm', { hasText: 'scratch.html' }) });
  await row.waitFor();
  page.once('dialog', (d) => {
    assert.match(d.message(), /stays in the trash for 30 days/);
    void d.accept();
  });
  await more(row);
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  assert.equal(
    (await bk.kiln.client(bk.kiln.hostOf(owner.username)).get('/scratch.html')).status,
    200,
    'index.html answers unknown paths',
  );
  await page.reload();
  await page.getByRole('link', { name: /Trash \(\d+\)/ }).click();
  await page.waitForURL(/\/_\/dashboard\/trash$/);
  await check(page, 'trash', 'desktop');
  await page.locator('tr', { hasText: 'scratch.html' }).getByRole('button', { name: 'Restore' }).click();
  await page.waitForURL(/\/_\/dashboard\/trash\?/);
  assert.match((await page.textContent('main .msg.success')) ?? '', /Restored "scratch\.html" to the top level/);
  assert.match(await stored('/scratch.html'), /scratch/);
});

test('a host without index.html offers its owner to create one; visitors get a plain 404', { skip }, async () => {
  // A second account, signed up in the browser at phone size: it gets its own index.html.
  const phone = await bk.browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const p = await phone.newPage();
  p.setDefaultTimeout(20_000);
  await p.goto(bk.mainUrl('/_/signup'));
  await check(p, 'signup', 'phone');
  // A refusal (the name is taken) comes back with the message, and what was typed is still there.
  await p.fill('#email', 'bo@example.com');
  await p.fill('#username', owner.username);
  await p.fill('#password', 'a long passphrase for bo');
  await p.click('main button[type=submit]');
  await p.waitForSelector('main .msg.error');
  assert.equal(await p.inputValue('#email'), 'bo@example.com');
  assert.equal(await p.inputValue('#username'), owner.username);
  await check(p, 'signup-refused', 'phone');
  await p.fill('#username', 'bo');
  await p.fill('#password', 'a long passphrase for bo');
  await p.click('main button[type=submit]');
  await p.waitForURL(/\/_\/dashboard$/);
  await check(p, 'dashboard', 'phone');
  // The header's links fold into a menu.
  assert.equal(await p.locator('#site-nav').isVisible(), false);
  await p.getByRole('button', { name: 'Menu' }).click();
  assert.equal(await p.locator('#site-nav').isVisible(), true);
  await p.getByRole('button', { name: 'Menu' }).click();

  const index = p.locator('#tree tr[data-type=site]');
  assert.equal(await index.count(), 1);
  p.once('dialog', (d) => void d.accept());
  await more(index);
  await index.getByRole('button', { name: 'Delete' }).click();
  await index.waitFor({ state: 'detached' });

  await p.goto(`http://bo.${new URL(bk.mainUrl()).host}/`);
  assert.match((await p.textContent('h1')) ?? '', /Nothing is published here yet/);
  await check(p, 'no-index', 'phone');
  await p.getByRole('link', { name: 'Create index.html' }).click();
  await p.waitForURL(/\/_\/dashboard\?new=index\.html$/);
  assert.equal(await p.inputValue('#new-site'), 'index.html');
  await p.selectOption('#new-site-starter', 'site');
  await p.click('form:has(#new-site) button[type=submit]');
  await p.locator('#tree tr[data-type=site]').waitFor();

  const visitor = await bk.kiln.client(bk.kiln.hostOf('bo')).get('/nothing-here');
  assert.equal(visitor.status, 200, 'the new index.html answers unknown paths again');

  // Its owner opening an address with nothing at it: a notice and "Create this document", never the home page
  // in edit mode (whose save would fail there).
  await p.goto(`http://bo.${new URL(bk.mainUrl()).host}/notes/plan.html`);
  assert.match((await p.textContent('h1')) ?? '', /Nothing is at \/notes\/plan\.html/);
  assert.equal(await p.locator('[contenteditable="true"]').count(), 0);
  await check(p, 'nothing-here', 'phone');
  await page.goto(bk.docUrl(owner.username, '/drafts/missing.html'));
  assert.match((await page.textContent('h1')) ?? '', /Nothing is at \/drafts\/missing\.html/);
  await check(page, 'nothing-here', 'desktop');
  await p.getByRole('link', { name: 'Create this document' }).click();
  await p.waitForURL(/\/_\/dashboard\?new=notes%2Fplan\.html$/);
  assert.equal(await p.inputValue('#new-site'), 'notes/plan.html');
  await phone.close();
});

test('every main page fits a phone and a desktop, with no serious accessibility violation', { skip }, async () => {
  const phone = await bk.browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  await phone.addCookies(await desk.cookies());
  // A team with a member, a shared document and an app, so their pages show what they hold.
  const api = await desk.newPage();
  await api.goto(bk.mainUrl('/_/dashboard'));
  // Same-origin fetches from the dashboard, as its own script makes them.
  const call = (url: string, data?: Record<string, unknown>) =>
    api.evaluate(
      async ([u, d]) => {
        const res = await fetch(u as string, {
          method: d ? 'POST' : 'GET',
          headers: { accept: 'application/json', 'content-type': 'application/json' },
          body: d ? JSON.stringify(d) : undefined,
        });
        return res.json();
      },
      [url, data] as const,
    );
  const team = await call('/_/dashboard/teams', { username: 'adas-team' });
  await call(`/_/dashboard/teams/${team.team.id}/invites`, { email: 'friend@example.com', role: 'viewer' });
  const nodes = (await call('/_/dashboard/nodes')).nodes as Array<{ id: number; name: string }>;
  const notes = nodes.find((n) => n.name === 'notes.html')!;
  await call(`/_/dashboard/nodes/${notes.id}/sharing`, { enabled: true });
  await call(`/_/dashboard/nodes/${notes.id}/app`, { enableSignups: true });
  await api.close();
  const pages: [string, string][] = [
    ['sharing', `/_/dashboard/nodes/${notes.id}/sharing`],
    ['team-dashboard', '/_/dashboard?team=adas-team'],
    ['dashboard', '/_/dashboard'],
    ['keys', '/_/dashboard/keys'],
    ['teams', '/_/dashboard/teams'],
    ['domains', '/_/dashboard/domains'],
    ['billing', '/_/billing'],
    ['trash', '/_/dashboard/trash'],
    ['not-found', '/_/no-such-page'],
  ];
  for (const [ctx, size] of [
    [phone, 'phone'],
    [desk, 'desktop'],
  ] as const) {
    const p = await ctx.newPage();
    for (const [name, url] of pages) {
      await p.goto(bk.mainUrl(url));
      await check(p, name, size);
    }
    await p.goto(bk.docUrl(owner.username, '/_/versions?path=index.html'));
    await check(p, 'versions', size);
    await p.goto(bk.docUrl(owner.username, '/_/edit?path=index.html'));
    await p.waitForSelector('#kiln-editor .cm-editor');
    await check(p, 'editor', size);
    await p.goto(bk.docUrl(owner.username, '/'));
    // The owner edits on a phone too (hyperclayjs loads its modules after the page's load event).
    await p.waitForFunction(() => document.querySelector('h1')?.getAttribute('contenteditable') === 'true');
    await check(p, 'document-owner', size);
    await p.close();
  }
  const anon = await bk.browser.newContext({ viewport: PHONE, isMobile: true });
  const a = await anon.newPage();
  for (const [name, url] of [
    ['home', '/'],
    ['login', '/_/login'],
  ]) {
    await a.goto(bk.mainUrl(url));
    await check(a, name, 'phone');
  }
  await a.goto(bk.docUrl(owner.username, '/_/app/signup?app=notes.html'));
  await check(a, 'app-signup', 'phone');
  await anon.close();
  await phone.close();
});
