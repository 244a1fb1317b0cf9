// AI editing (#27) in Chromium with hyperclayjs 1.38 (npm, served by Kiln; `features=ai-edit`) as an owner uses
// it: the page finds the bus and shows its comment chrome; the owner puts the caret in a paragraph, presses ⌘K,
// asks for an edit; the engine (a local script, test/support/ai-engine.mjs) streams its reply into the page; Keep saves a
// version, Revert leaves the stored page as it was; Stop ends the engine process.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { newPerson, sessionsFor, browserCookies, actingAs } from './support/people.ts';
import { SCREENS, PHONE } from './support/screens.ts';
import { until } from './support/wait.ts';
import { isAlive, pidIn } from './support/child.ts';
import { channels } from '../src/events/bus.ts';
import { ROOT } from '../src/paths.ts';

const ENGINE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support/ai-engine.mjs');
const SHOTS = process.env.KILN_TEST_SCREENSHOTS !== '0';

// The README's recipe for an AI-editable page, as written there (the code block after `<!-- ai-edit -->`).
const README_SNIPPET =
  /<!-- ai-edit -->\s*```html\n([\s\S]*?)```/.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))?.[1] ?? '';
const DOC = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Landing</title></head>
<body><main style="max-width:40rem;margin:2rem auto;font-family:system-ui;padding:0 1rem">
${README_SNIPPET}</main></body>
</html>
`;

let bk: BrowserKiln;
let dir: string;
before(async () => {
  if (!hasChromium) return;
  dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-ai-browser-'));
  bk = await startBrowserKiln({
    env: {
      AI_EDIT_COMMAND: `"${process.execPath}" ${ENGINE} ${dir}/edit edit`,
      AI_EDIT_ENGINES: 'slow',
      AI_EDIT_SLOW_COMMAND: `"${process.execPath}" ${ENGINE} ${dir}/slow slow`,
    },
  });
});
after(async () => {
  await bk?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const status = (p: Page) => p.locator('#hyper-edit-panel .hep-status');

/** Puts the caret in the element (text units are contenteditable in edit mode), opens its comment box with ⌘K
 *  (Ctrl+K), and sends the request. */
async function ask(p: Page, selector: string, comment: string) {
  // An open comment box (after Keep or Revert) closes with Escape first: it may cover the element on a phone.
  if (await p.locator('#hyper-edit-panel').isVisible()) await p.keyboard.press('Escape');
  await p.click(selector);
  await p.keyboard.press('Control+k');
  await p.locator('#hyper-edit-panel textarea').fill(comment);
  await p.locator('#hyper-edit-panel .hep-send').click();
}

async function shot(p: Page, name: string) {
  if (!SHOTS) return;
  mkdirSync(SCREENS, { recursive: true });
  await p.screenshot({ path: path.join(SCREENS, `${name}.png`), fullPage: true });
}

test('the owner asks for an edit: it streams into the paragraph; Keep saves a version, Revert leaves the stored page; Stop ends the engine', {
  skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
  timeout: 180_000,
}, async () => {
  const s = bk.kiln.services;
  const person = await createPerson(s, newPerson());
  const node = await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'landing.html',
    html: DOC,
  });
  const sessions = await sessionsFor(s.database.db, bk.kiln.config, person.id, person.username);
  const stored = async () =>
    (await bk.kiln.client(`${person.username}.${bk.kiln.config.rootDomain}`).get('/landing.html')).text;
  const versions = async () =>
    (await s.database.db.selectFrom('versions').select('id').where('node_id', '=', node.id).execute()).length;

  // What went over the account's bus, for the message of a failure (who acked, whether a cancel came).
  const heard: string[] = [];
  s.events.subscribe(channels.bus(person.id), (e) => {
    if (e.type === 'bus') heard.push(`${e.envelope.type} ${(e.envelope.payload as { id?: string } | null)?.id ?? ''}`);
  });

  const context = await bk.newContext();
  await context.addCookies(browserCookies(bk.kiln.config, sessions));
  const p = await context.newPage();
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(e.message));
  await p.goto(bk.docUrl(person.username, '/landing.html'));
  // The page found the bus (GET /_/bus/subscribe answered with an event stream) and built its chrome.
  await p.waitForSelector('#hyper-edit-doc-bubble', { state: 'attached', timeout: 30_000 });
  // Kiln's owner toolbar stands beside the whole-page bubble (both live in the bottom-right corner): the bubble
  // is what a click there reaches.
  await p.waitForFunction(() => {
    const b = document.getElementById('hyper-edit-doc-bubble')!.getBoundingClientRect();
    return document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2)?.id === 'hyper-edit-doc-bubble';
  });

  // The comment box names the engines this Kiln has (the library's own placeholder names @fable / @claude).
  await p.click('section p');
  await p.keyboard.press('Control+k');
  // The toolbar asks /_/meta when the panel first exists, so the library's own placeholder shows until it answers
  // (on a busy machine, after the box opened): wait for the engines' names, then compare the whole text.
  const placeholder = () => p.locator('#hyper-edit-panel textarea').getAttribute('placeholder');
  await until(async () => (await placeholder())?.includes('engines:'), {
    what: "the comment box's placeholder naming this Kiln's engines",
  }).catch(async (err) => {
    throw new Error(`${err.message}; it says "${await placeholder()}"`);
  });
  assert.equal(
    await placeholder(),
    "Describe the change… (@file.ext adds context; engines: @ai (default), @slow, or your own agent's)",
  );
  await p.keyboard.press('Escape');

  // 1. Ask, watch it stream, keep it.
  const before = await versions();
  await ask(p, 'section p', 'make it friendlier');
  await p.waitForSelector('#hyper-edit-panel .hep-keep:not([hidden])', { timeout: 30_000 });
  assert.equal(await p.locator('section p').textContent(), 'Hello there — edited');
  assert.match((await status(p).textContent()) ?? '', /^done/);
  await shot(p, 'ai-edit-done-desktop');
  assert.ok(!(await stored()).includes('— edited'), 'nothing is stored before Keep');
  await p.locator('#hyper-edit-panel .hep-keep').click();
  await until(async () => (await stored()).includes('<p>Hello there — edited</p>'), { what: 'Keep saved the page' });
  assert.equal(await versions(), before + 1, 'Keep is one save: one version');
  const kept = await stored();
  assert.ok(!kept.includes('hyper-edit-panel'), 'the comment chrome is never saved');

  // 2. Ask again on the heading, then Revert: the page shows the old heading; the stored page is untouched.
  await p.setViewportSize(PHONE);
  await ask(p, 'section h1', 'louder');
  await p.waitForSelector('#hyper-edit-panel .hep-revert:not([hidden])', { timeout: 30_000 });
  assert.equal(await p.locator('section h1').textContent(), 'Welcome — edited');
  await shot(p, 'ai-edit-done-phone');
  await p.locator('#hyper-edit-panel .hep-revert').click();
  assert.equal(await p.locator('section h1').textContent(), 'Welcome');
  assert.match((await status(p).textContent()) ?? '', /reverted/);
  // Give a stray autosave its chance, then the stored page is still the kept one.
  await p.waitForTimeout(1500);
  assert.equal(await stored(), kept);
  assert.equal(await versions(), before + 1);

  // 3. A slow engine: Stop ends its process; the paragraph is as it was.
  await ask(p, 'section p', '@slow rewrite everything');
  const pid = await until(() => pidIn(path.join(dir, 'slow/engine.pid')), { what: 'the slow engine started' });
  await p.waitForSelector('#hyper-edit-panel .hep-stop:not([hidden])');
  await until(async () => /thinking|streaming/.test((await status(p).textContent()) ?? ''), {
    what: 'the handler acked',
  });
  await shot(p, 'ai-edit-streaming-phone');
  await p.locator('#hyper-edit-panel .hep-stop').click();
  await until(() => !isAlive(pid), { what: 'the engine process ended after Stop' }).catch(async (err) => {
    const said = await status(p).textContent();
    throw new Error(`${err.message}; the page says "${said}"; the bus carried: ${heard.slice(-12).join(', ')}`);
  });
  assert.equal(await p.locator('section p').textContent(), 'Hello there — edited');
  assert.match((await status(p).textContent()) ?? '', /cancelled/);
  assert.deepEqual(errors, []);
  await context.close();
});
