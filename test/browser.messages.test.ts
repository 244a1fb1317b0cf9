// A contact form on a real page (Debian Chromium): hyperclayjs's sendMessage posts it with the
// behaviour data it collected while a person typed; its owner finds it in the inbox. The browser runs
// without the automation flag (a person's browser has none), since Kiln refuses automated senders.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from './support/browser.ts';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { freePort } from './support/child.ts';
import { browserCookies, signedIn } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { check, PHONE } from './support/screens.ts';

const skip = !hasChromium && 'Chromium is not installed';
let kiln: TestKiln;
let browser: Browser;

before(async () => {
  if (!hasChromium) return;
  const port = await freePort();
  kiln = await startKiln({ env: { PORT: String(port), ROOT_DOMAIN: `kiln.localhost:${port}` } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS, '--disable-blink-features=AutomationControlled'],
    ignoreDefaultArgs: ['--enable-automation'],
  });
});
after(async () => {
  await browser?.close();
  await kiln?.stop();
});

const FORM = `<!doctype html><html><head><meta charset="utf-8"><title>Contact</title>
<script type="module" src="/_/hyperclayjs/src/hyperclay.js?features=send-message,behavior-collector,toast,export-to-window"></script></head>
<body><form id="contact" onsubmit="hyperclay.sendMessage(event, 'Thanks, sent!')">
<label>Name <input name="name"></label><label>Message <textarea name="message"></textarea></label>
<input name="website" hidden><button>Send</button></form></body></html>`;

test('a visitor sends a message with the page’s contact form; the owner reads it in the inbox', { skip }, async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  await createNode(kiln.services, me.id, {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'contact.html',
    html: FORM,
  });
  const ctx = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`http://${kiln.hostOf(me.username)}/contact.html`);
  await page.waitForFunction(() => typeof (window as any).hyperclay?.sendMessage === 'function');
  assert.equal(await page.evaluate(() => navigator.webdriver), false);
  await page.mouse.move(20, 30);
  await page.mouse.move(120, 80, { steps: 5 });
  await page.getByLabel('Name').click();
  await page.keyboard.type('Grace', { delay: 30 });
  await page.getByLabel('Message').click();
  await page.keyboard.type('A lovely page.', { delay: 30 });
  await page.waitForTimeout(1600); // a person takes a moment
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/_/message')),
    page.getByRole('button', { name: 'Send' }).click(),
  ]);
  assert.equal(answer.status(), 200, await answer.text());
  await page.getByText('Thanks, sent!').waitFor();
  const box = await main.get('/_/dashboard/messages', { headers: { accept: 'application/json' } });
  assert.deepEqual(box.json.messages[0].fields, { name: 'Grace', message: 'A lovely page.' });

  // The owner's inbox, checked like every page.
  const owner = await browser.newContext({ viewport: PHONE, isMobile: true });
  await owner.addCookies(browserCookies(kiln.config, me.sessions));
  const inbox = await owner.newPage();
  await inbox.goto(`http://${kiln.config.rootDomain}/_/dashboard/messages`);
  assert.match((await inbox.textContent('main')) ?? '', /A lovely page\./);
  await check(inbox, 'messages', 'phone');
  await owner.close();
  await ctx.close();
});
