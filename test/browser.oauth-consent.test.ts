// Connecting an agent by URL (OAuth) in Debian Chromium: the MCP SDK's client starts the flow (discovery,
// registration, PKCE), the person's browser opens the authorization address, signs in first when it must, and
// answers Kiln's consent page (account, folder, read and change; Allow); the client exchanges the code and its token
// works; the account page lists the agent and Revoke stops it (feedback, then 401). The consent and account pages are
// checked at desktop and phone size (screenshots, no sideways scrolling, axe: no serious finding).
import { actingAs } from './support/people.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { auth } from '@modelcontextprotocol/client';
import type { BrowserContext, Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { browserCookies, newPerson, sessionsFor } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';
import { kilnFetch, mcpUrl, REDIRECT_URI, TestOAuthClient } from './support/oauth.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';

const skip = !hasChromium && 'Chromium is not installed';
let bk: BrowserKiln;

before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(async () => {
  if (bk) await bk.stop();
});

/** The MCP client's start: `auth()` up to the redirect; returns the client and where it sends the person. */
async function agentStarts(name: string) {
  const client = new TestOAuthClient(name);
  assert.equal(await auth(client, { serverUrl: mcpUrl(bk.kiln), fetchFn: kilnFetch(bk.kiln) }), 'REDIRECT');
  return { client, url: client.authorizationUrl!.href };
}

/** The redirects back to the client, caught in the browser (nothing listens there), in order. */
function redirectsOf(ctx: BrowserContext) {
  const seen: URL[] = [];
  const waiting: Array<(u: URL) => void> = [];
  void ctx.route(`${REDIRECT_URI}**`, async (route) => {
    await route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Agent</title><p>Connected.</p>' });
    const url = new URL(route.request().url());
    const w = waiting.shift();
    if (w) w(url);
    else seen.push(url);
  });
  /** The next redirect, once the page shows it. */
  return async (page: Page): Promise<URL> => {
    const url = seen.shift() ?? (await new Promise<URL>((resolve) => waiting.push(resolve)));
    await page.waitForURL(`${REDIRECT_URI}**`);
    return url;
  };
}

async function signedInContext(person: { id: number; username: string }, viewport = DESKTOP) {
  const ctx = await bk.browser.newContext({ viewport, isMobile: viewport === PHONE });
  await ctx.addCookies(
    browserCookies(
      bk.kiln.config,
      await sessionsFor(bk.kiln.services.database.db, bk.kiln.config, person.id, person.username),
    ),
  );
  return ctx;
}

const message = async (p: Page) => (await p.textContent('main .msg')) ?? '';

/** The agent reads a document of its person's at the MCP door (the one resource its token acts on): the HTTP
 *  answer, and the tool's result when there is one. */
async function reads(token: string, path: string) {
  const res = await bk.kiln.client().post(
    '/_/mcp',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_document', arguments: { path } } },
    {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
    },
  );
  return { status: res.status, code: res.json?.code, result: res.json?.result };
}

test('connect an agent in the browser: consent (folder, read and change), token, account page, Revoke; desktop', {
  skip,
}, async () => {
  const input = newPerson({ plan: 'personal' });
  const person = await createPerson(bk.kiln.services, input);
  const s = bk.kiln.services;
  const folder = await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'folder',
    name: 'notes',
  });
  const html = '<html><body>Plan</body></html>';
  const doc = await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: folder.id,
    type: 'site',
    name: `plan-${person.username}.html`,
    html,
  });
  const { client, url } = await agentStarts('Claude');
  const browser = await signedInContext(person);
  const back = redirectsOf(browser);
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(url);
  await page.waitForURL(/\/_\/connect\//);
  assert.match((await page.textContent('h1')) ?? '', /Connect Claude to your Kiln\?/);
  assert.ok(((await page.textContent('main')) ?? '').includes(REDIRECT_URI));
  await check(page, 'oauth-consent', 'desktop');
  // A folder that is not there: back to the page, saying so.
  await page.fill('#folder', 'nowhere');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(/\/_\/connect\/.*msg=/);
  assert.match(await message(page), /There is no folder "nowhere"/);
  await page.fill('#folder', 'notes');
  await page.getByLabel('Read and change documents').check();
  await page.getByRole('button', { name: 'Allow' }).click();
  const to = await back(page);
  const code = to.searchParams.get('code');
  assert.ok(code, to.href);
  const fetchFn = kilnFetch(bk.kiln);
  const iss = to.searchParams.get('iss') ?? undefined;
  assert.equal(await auth(client, { serverUrl: mcpUrl(bk.kiln), fetchFn, authorizationCode: code, iss }), 'AUTHORIZED');
  const token = client.saved!.access_token;
  const read = await reads(token, `notes/${doc.name}`);
  assert.equal(read.status, 200);
  assert.equal(read.result.structuredContent.html, html);
  // The account page lists it; Revoke says so and the token stops.
  await page.goto(bk.mainUrl('/_/account'));
  const row = page.locator('section[aria-labelledby=connected-h] li');
  assert.equal(await row.count(), 1);
  assert.match((await row.textContent()) ?? '', /Claude · reads and changes/);
  assert.match((await row.textContent()) ?? '', /folder notes/);
  await check(page, 'oauth-account-agents', 'desktop');
  await page.getByRole('button', { name: 'Revoke Claude' }).click();
  await page.waitForURL(/\/_\/account\?/);
  assert.match(await message(page), /Claude is disconnected/);
  assert.equal(await page.locator('section[aria-labelledby=connected-h] li').count(), 0);
  const refused = await reads(token, `notes/${doc.name}`);
  assert.equal(refused.status, 401);
  assert.equal(refused.code, 'invalid-oauth-token');
  await browser.close();
});

test('signed out, the person signs in first and comes back to the consent page; phone size', { skip }, async () => {
  const input = newPerson({ plan: 'personal' });
  await createPerson(bk.kiln.services, input);
  const { url } = await agentStarts('ChatGPT');
  const phone = await bk.browser.newContext({ viewport: PHONE, isMobile: true });
  const back = redirectsOf(phone);
  const page = await phone.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(url);
  await page.waitForURL(/\/_\/login/);
  await page.fill('#email', input.email);
  await page.fill('#password', input.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/_\/connect\//);
  assert.match((await page.textContent('h1')) ?? '', /Connect ChatGPT/);
  await check(page, 'oauth-consent', 'phone');
  await page.getByRole('button', { name: 'Deny' }).click();
  const to = await back(page);
  assert.equal(to.searchParams.get('error'), 'access_denied');
  // The account page at phone size, with an agent listed.
  const { client: second, url: again } = await agentStarts('Cursor');
  await page.goto(again);
  await page.waitForURL(/\/_\/connect\//);
  await page.getByRole('button', { name: 'Allow' }).click();
  const to2 = await back(page);
  const code = to2.searchParams.get('code');
  assert.ok(code);
  const iss = to2.searchParams.get('iss') ?? undefined;
  const fetchFn = kilnFetch(bk.kiln);
  assert.equal(await auth(second, { serverUrl: mcpUrl(bk.kiln), fetchFn, authorizationCode: code, iss }), 'AUTHORIZED');
  await page.goto(bk.mainUrl('/_/account#connected'));
  assert.match(
    (await page.locator('section[aria-labelledby=connected-h] li').textContent()) ?? '',
    /Cursor · reads only/,
  );
  await check(page, 'oauth-account-agents', 'phone');
  await phone.close();
});
