// The foundation in a real browser (Debian's Chromium, driven by playwright-core): first-run setup,
// sign out and sign in, create a document from the dashboard, open it on `<username>.kiln.localhost`
// in the same browser and see `isAdminOfCurrentResource` true; sign out, see it gone (hyperclayjs reads
// a missing cookie as false) and the document still served.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { startBrowserKiln, type BrowserKiln } from './support/browser.ts';

let b: BrowserKiln;
let context: BrowserContext;
before(async () => {
  b = await startBrowserKiln();
  context = await b.newContext();
});
after(async () => {
  await context?.close();
  await b?.stop();
});

const person = { email: 'ada@example.com', username: 'ada', password: 'Analytical-engine-1843' };

/** The cookies page script sees, as hyperclayjs reads them. */
async function pageCookies(page: Page): Promise<Record<string, string>> {
  const raw = await page.evaluate(() => document.cookie);
  return Object.fromEntries(
    raw
      .split('; ')
      .filter(Boolean)
      .map((c) => [c.slice(0, c.indexOf('=')), decodeURIComponent(c.slice(c.indexOf('=') + 1))]),
  );
}

/** isAdminOfCurrentResource as the browser library computes it: JSON-parsed, absent = false. */
async function isAdmin(page: Page): Promise<boolean> {
  const v = (await pageCookies(page)).isAdminOfCurrentResource;
  return v === undefined ? false : JSON.parse(v) === true;
}

async function signOut(page: Page) {
  await page.goto(b.mainUrl('/_/logout'));
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/_/login'),
    page.getByRole('main').getByRole('button', { name: 'Sign out' }).click(),
  ]);
}

test('setup, sign in, create a document, open it on its host as its owner, sign out', async () => {
  const page = await context.newPage();

  // First visit: the first-run setup page.
  await page.goto(b.mainUrl('/'));
  assert.equal(new URL(page.url()).pathname, '/_/setup');
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Welcome to Kiln');
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password').fill(person.password);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/_/dashboard'),
    page.getByRole('button', { name: 'Create administrator' }).click(),
  ]);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your documents');

  // Setup is done for good: the page now sends visitors to sign in.
  await page.goto(b.mainUrl('/_/setup'));
  assert.equal(new URL(page.url()).pathname, '/_/login');

  // Sign out, then sign in with the form.
  await signOut(page);
  await page.goto(b.mainUrl('/_/dashboard'));
  assert.equal(new URL(page.url()).pathname, '/_/login', 'the dashboard asks a stranger to sign in');
  await page.getByLabel('Email or username').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/_/dashboard'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  const cookies = await context.cookies();
  const auth = cookies.find((c) => c.name === '__Host-auth_token');
  assert.ok(auth, 'signed in: __Host-auth_token is set');
  assert.equal(auth.domain, 'kiln.localhost', '__Host-auth_token is host-only: the main app alone (no leading dot)');
  assert.equal(auth.httpOnly, true);
  assert.equal((await pageCookies(page))['__Host-auth_token'], undefined, 'page script cannot read __Host-auth_token');

  // Create a document from the dashboard: the form posts with fetch and the list is swapped in place.
  await page.getByLabel('New document').fill('hello.html');
  await page.getByRole('button', { name: 'Create document' }).click();
  const link = page.locator('#tree a', { hasText: 'hello.html' });
  await link.waitFor();
  assert.equal(new URL(page.url()).search, '', 'created without leaving the page');
  assert.match(
    (await page.locator('#tree tr.row-msg').textContent()) ?? '',
    /hello\.html/,
    'the message beside the new row',
  );
  assert.equal(await link.getAttribute('href'), b.docUrl(person.username, '/hello.html'));

  // Open it on its document host, in a new tab of the same browser: the host has no session yet, so the
  // browser is bounced once through the main app and comes back with one of its own.
  const [doc] = await Promise.all([context.waitForEvent('page'), link.click()]);
  await doc.waitForLoadState('load');
  assert.equal(doc.url(), b.docUrl(person.username, '/hello.html'));
  const nav = await doc.evaluate(() => {
    const entry = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming & {
      responseStatus?: number;
    };
    return { status: entry.responseStatus, contentType: document.contentType, charset: document.characterSet };
  });
  assert.deepEqual(nav, { status: 200, contentType: 'text/html', charset: 'UTF-8' });
  assert.equal(await doc.title(), 'hello');
  assert.equal(await doc.locator('h1').textContent(), 'hello');
  assert.equal(await isAdmin(doc), true, 'the owner sees isAdminOfCurrentResource true');
  const hostCookie = (await context.cookies()).find(
    (c) => c.name === '__Host-auth_token' && c.domain === `${person.username}.kiln.localhost`,
  );
  assert.ok(hostCookie, 'a host-only session on the document host');
  assert.equal((await pageCookies(doc))['__Host-auth_token'], undefined, 'page script cannot read it');
  assert.equal((await pageCookies(doc)).currentResource, 'hello');

  // Sign out: the document is still served, and the page no longer thinks its visitor may edit it.
  await signOut(page);
  assert.equal(
    (await context.cookies()).find((c) => c.name === '__Host-auth_token' && c.domain === 'kiln.localhost'),
    undefined,
    '__Host-auth_token is gone',
  );
  const again = await doc.reload();
  assert.equal(again?.status(), 200, 'the document is still served');
  assert.equal(await doc.locator('h1').textContent(), 'hello');
  assert.equal(await isAdmin(doc), false, 'after sign-out isAdminOfCurrentResource is not true');

  // A stranger in another browser profile gets the document, never the edit flag.
  const stranger = await b.newContext();
  try {
    const p = await stranger.newPage();
    const res = await p.goto(b.docUrl(person.username, '/hello.html'));
    assert.equal(res?.status(), 200);
    assert.equal(await p.locator('h1').textContent(), 'hello');
    assert.equal(await isAdmin(p), false);
  } finally {
    await stranger.close();
  }
});
