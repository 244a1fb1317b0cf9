// A contact form on a real page (Debian Chromium): it posts (as hyperclayjs's sendMessage would) with the
// behaviour data it collected while a person typed; its owner finds it in the inbox. The browser runs
// without the automation flag (a person's browser has none), since Kiln refuses automated senders.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../src/paths.ts';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from './support/browser.ts';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { freePort } from './support/child.ts';
import { browserCookies, signedIn, actingAs } from './support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';

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

// The README's contact-form recipe, as written there (between `<!-- contact-form -->` and the end of its code block).
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const snippet = /<!-- contact-form -->\s*```html\n([\s\S]*?)```/.exec(readme)?.[1].replace(/^ {2}/gm, '') ?? '';
const README_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Contact</title></head><body>${snippet}</body></html>`;

for (const [what, made, labels, thanks] of [
  ['the README’s recipe', { html: README_PAGE }, ['Name', 'Message'], 'Thanks, sent!'],
  [
    'the Contact page starter',
    { starter: 'contact' as const },
    ['Your name', 'Message'],
    'Thank you: your message was sent.',
  ],
] as const)
  test(`a visitor sends a message with ${what}; the owner reads it in the inbox`, { skip }, async () => {
    assert.match(README_PAGE, /fetch\('\/_\/message'/, 'the README has the recipe');
    const main = kiln.client();
    const me = await signedIn(kiln, main);
    await createNode(await actingAs(kiln.services, me.id), {
      ownerId: me.id,
      parentId: 0,
      type: 'site',
      name: `contact-${me.username}.html`,
      ...made,
    });
    const ctx = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
    const page = await ctx.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`http://${kiln.hostOf(me.username)}/contact-${me.username}.html`);
    await page.waitForFunction(() => typeof (window as any).hyperclay?.sendMessage === 'function');
    assert.equal(await page.evaluate(() => navigator.webdriver), false);
    await page.mouse.move(20, 30);
    await page.mouse.move(120, 80, { steps: 5 });
    await page.getByLabel(labels[0]).click();
    await page.keyboard.type('Grace', { delay: 30 });
    await page.getByLabel(labels[1]).click();
    await page.keyboard.type('A lovely page.', { delay: 30 });
    await page.waitForTimeout(1600); // a person takes a moment
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/_/message')),
      page.getByRole('button', { name: 'Send' }).click(),
    ]);
    assert.equal(answer.status(), 200, await answer.text());
    await page.locator('.toast.success', { hasText: thanks }).waitFor();

    // Refused (the hidden honeypot filled, as a robot would): Kiln's own words, in an error toast.
    await page.getByLabel(labels[0]).fill('Grace');
    await page.getByLabel(labels[1]).fill('Once more.');
    await page.locator('input[name=website]').evaluate((el: HTMLInputElement) => {
      el.value = 'http://spam.example';
    });
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/_/message')),
      page.getByRole('button', { name: 'Send' }).click(),
    ]);
    assert.equal(refused.status(), 400, await refused.text());
    await page.locator('.toast.error', { hasText: 'This message looks automated, so it was not sent.' }).waitFor();
    assert.equal(await page.getByText(/Request failed/).count(), 0);
    assert.equal(await page.locator('.toast.success', { hasText: /Failed|automated/ }).count(), 0);
    const box = await main.get('/_/dashboard/messages', { headers: { accept: 'application/json' } });
    assert.equal(box.json.messages[0].fields.name, 'Grace');
    assert.equal(box.json.messages[0].fields.message, 'A lovely page.');

    // The owner's inbox, checked like every page.
    const owner = await browser.newContext({ viewport: PHONE, isMobile: true });
    await owner.addCookies(browserCookies(kiln.config, me.sessions));
    const inbox = await owner.newPage();
    await inbox.goto(`http://${kiln.config.rootDomain}/_/dashboard/messages`);
    assert.match((await inbox.textContent('main')) ?? '', /A lovely page\./);
    await check(inbox, 'messages', 'phone');
    await check(page, `contact-${'starter' in made ? 'starter' : 'readme'}`, 'phone');
    await page.setViewportSize(DESKTOP);
    await check(page, `contact-${'starter' in made ? 'starter' : 'readme'}`, 'desktop');
    await owner.close();
    await ctx.close();
  });
