// "Connect an agent" on the account page in Debian Chromium: a person makes an agent key, sees it once with the
// lines to paste into Claude Code, Claude Desktop, Cursor and any client, makes a read-only one on a phone,
// revokes the first (the agent is refused at once); at 1280 and 390 px (screenshots, no sideways scrolling, axe).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { browserCookies, newPerson, sessionsFor } from './support/people.ts';
import { check, DESKTOP, PHONE, SCREENS } from './support/screens.ts';
import { createPerson } from '../src/accounts/people.ts';

const skip = !hasChromium && 'Chromium is not installed';
let bk: BrowserKiln;

before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(async () => {
  if (bk) await bk.stop();
});

/** GET /_/sync/nodes with the key as `Authorization: Bearer`: the status. */
function callWith(key: string): Promise<number> {
  const { config, url } = bk.kiln;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: Number(new URL(url).port),
        path: '/_/sync/nodes',
        headers: { host: config.rootDomain, authorization: `Bearer ${key}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The section alone, for a person to look at beside the full page. */
async function shootSection(page: Page, size: string) {
  if (process.env.KILN_TEST_SCREENSHOTS === '0') return;
  mkdirSync(SCREENS, { recursive: true });
  await page.locator('#agents').screenshot({ path: path.join(SCREENS, `agents-section-${size}.png`) });
}

test('make an agent key, see the lines to connect each client, revoke it; at 1280 and 390 px', { skip }, async () => {
  const input = newPerson({ plan: 'personal' });
  const person = await createPerson(bk.kiln.services, input);
  const sessions = await sessionsFor(bk.kiln.services.database.db, bk.kiln.config, person.id, person.username);
  const ctx: BrowserContext = await bk.browser.newContext({ viewport: DESKTOP });
  await ctx.addCookies(browserCookies(bk.kiln.config, sessions));
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);

  await page.goto(bk.mainUrl('/_/account'));
  const section = page.locator('#agents');
  assert.match((await section.locator('h2').textContent()) ?? '', /Connect an agent/);
  assert.match((await section.textContent()) ?? '', /No agent keys yet/);
  await page.getByLabel('Name', { exact: true }).fill('laptop');
  await page.getByLabel('Expires after').selectOption('30');
  await page.getByRole('button', { name: 'Make the key' }).click();
  await page.waitForURL(/\/_\/account\?at=agents#agents$/);

  const key = await page.inputValue('#agent-key');
  assert.match(key, /^hcak_[0-9a-f]{64}$/);
  const root = bk.kiln.config.baseUrl.replace(/\/$/, '');
  assert.equal(
    await page.textContent('#connect-claude-code'),
    `claude mcp add --transport http kiln ${root}/_/mcp --header "Authorization: Bearer ${key}"`,
  );
  assert.match(
    (await page.textContent('#connect-claude-code-stdio')) ?? '',
    /KILN_KEY=hcak_.* -- node ".*\/bin\/kiln\.js" mcp$/,
  );
  assert.equal(JSON.parse((await page.textContent('#connect-claude-desktop')) ?? '').mcpServers.kiln.env.KILN_KEY, key);
  assert.equal(
    JSON.parse((await page.textContent('#connect-cursor')) ?? '').mcpServers.kiln.headers.Authorization,
    `Bearer ${key}`,
  );
  assert.match((await section.textContent()) ?? '', /shown only once/);
  const row = section.locator('tr[data-agent-key]', { hasText: 'laptop' });
  assert.match((await row.textContent()) ?? '', /read and write/);
  assert.match((await row.textContent()) ?? '', new RegExp(`${person.username} \\(all\\)`));
  assert.equal(await callWith(key), 200, 'the key works');
  await check(page, 'agents', 'desktop');
  await shootSection(page, 'desktop');

  // On a phone: a read-only key; the new key's block fits the width.
  const phone = await bk.browser.newContext({ viewport: PHONE, isMobile: true });
  await phone.addCookies(await ctx.cookies());
  const p2 = await phone.newPage();
  p2.setDefaultTimeout(20_000);
  await p2.goto(bk.mainUrl('/_/account#agents'));
  assert.equal(await p2.locator('#agent-key').count(), 0, 'a key is shown once, never again');
  await p2.getByLabel('Name', { exact: true }).fill('phone reader');
  await p2.getByLabel('Read only').check();
  await p2.getByRole('button', { name: 'Make the key' }).click();
  await p2.waitForURL(/at=agents/);
  assert.match(await p2.inputValue('#agent-key'), /^hcak_/);
  assert.match((await p2.locator('tr[data-agent-key]', { hasText: 'phone reader' }).textContent()) ?? '', /read only/);
  await check(p2, 'agents', 'phone');
  await shootSection(p2, 'phone');
  await phone.close();

  // Revoke the first: feedback in the section, the row says so, the agent is refused.
  await page.goto(bk.mainUrl('/_/account'));
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Revoke laptop' }).click();
  await page.waitForURL(/msg=.*at=agents#agents$/);
  assert.match((await section.locator('.msg').textContent()) ?? '', /Revoked the agent key “laptop”/);
  assert.match((await section.locator('tr[data-agent-key]', { hasText: 'laptop' }).textContent()) ?? '', /revoked/);
  assert.equal(await callWith(key), 401, 'a revoked key is refused');
  await check(page, 'agents-revoked', 'desktop');
  await ctx.close();
});
