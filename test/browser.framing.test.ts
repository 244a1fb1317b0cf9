// Click-jacking an owner's document from a neighbour's host, in Chromium with hyperclayjs 1.38 (issue #43,
// item 2). Alice is signed in on her host; Bob's page (same site, another host) lays Alice's notes page in
// an iframe at opacity 0.02 over a "claim your prize" button. Alice's clicks on the button land in the
// frame: a ticked box, a click and typing in her note, Ctrl+S; a link inside the frame; the frame asked
// with `?editmode=true`; all while her other tab holds the edit cookie. Nothing is saved: the frame is
// answered as to a visitor (no edit cookie, no toolbar) and, in her browser, runs without its origin (a
// CSP sandbox), so no edit cookie is ever readable there. A visitor's frame is an ordinary embed
// (hyperclayjs in view mode). Alice's own editing, top level and in a frame of her own page, saves as
// before; and once she forbids framing of the document, Bob's frame shows nothing at all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { newPerson, sessionsFor, browserCookies, actingAs } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';
import { until } from './support/wait.ts';

const skip = !hasChromium && 'Debian chromium is not installed (.ci/run installs it)';

const NOTES = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Notes</title>
<script type="module" src="/_/hyperclayjs/src/hyperclay.js?preset=smooth-sailing&features=autosave"></script>
</head>
<body>
<p><label><input type="checkbox" id="done" persist> Pay the rent</label></p>
<p id="note" editmode:contenteditable>first words</p>
<p><a id="again" href="/notes.html">Open the notes</a></p>
</body>
</html>
`;

/** Alice's own page that frames her notes (the same origin): her editing there keeps working. */
const OWN_FRAME = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Desk</title></head>
<body><h1>Desk</h1><iframe id="mine" src="/notes.html" style="width:600px;height:300px"></iframe></body>
</html>
`;

/** Bob's bait: Alice's notes page, nearly invisible, over a button. */
const bait = (src: string) => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Prize</title></head>
<body style="margin:0">
<button id="prize" style="position:absolute;left:20px;top:20px;width:240px;height:48px">Claim your prize</button>
<iframe id="victim" src="${src}" style="position:absolute;left:0;top:0;width:700px;height:400px;border:0;opacity:0.02;z-index:2"></iframe>
</body>
</html>
`;

let bk: BrowserKiln;
let alice: { id: number; username: string };
let bob: { id: number; username: string };
let context: BrowserContext;
let saves: string[];

before(
  async () => {
    if (!hasChromium) return;
    bk = await startBrowserKiln();
    const s = bk.kiln.services;
    alice = await createPerson(s, newPerson({ plan: 'maker' }));
    bob = await createPerson(s, newPerson({ plan: 'maker' }));
    const doc = async (owner: { id: number }, name: string, html: string) =>
      createNode(await actingAs(s, owner.id), { ownerId: owner.id, parentId: 0, type: 'site', name, html });
    await doc(alice, 'notes.html', NOTES);
    await doc(alice, 'desk.html', OWN_FRAME);
    const notes = bk.docUrl(alice.username, '/notes.html');
    await doc(bob, 'prize.html', bait(notes));
    await doc(bob, 'prize-edit.html', bait(`${notes}?editmode=true`));
    // Alice's browser: signed in on the main app and on her own host.
    context = await bk.newContext();
    await context.addCookies(
      browserCookies(bk.kiln.config, await sessionsFor(s.database.db, bk.kiln.config, alice.id, alice.username)),
    );
    // Every save request Alice's browser makes, from any page or frame.
    saves = [];
    context.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/_/save')) saves.push(r.frame().url());
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await context?.close().catch(() => {});
    await bk?.stop();
  },
  { timeout: 60_000 },
);

const stored = async () => (await bk.kiln.client(bk.kiln.hostOf(alice.username)).get('/notes.html')).text;

/** hyperclayjs has settled on the page: it marks `<html editmode=…>` once the DOM is ready. */
async function settled(f: Frame): Promise<'true' | 'false'> {
  // A stored page already says editmode="false" (hyperclayjs writes it into every save): read the attribute only
  // once the library has loaded (`hyperclay.ready`) and the DOM is ready, when it has set it for this load.
  await f.waitForFunction(() => (window as any).hyperclay?.ready, null, { timeout: 20_000 });
  return (await f.evaluate(async () => {
    await (window as any).hyperclay.ready;
    if (document.readyState === 'loading')
      await new Promise((done) => document.addEventListener('DOMContentLoaded', done, { once: true }));
    return document.documentElement.getAttribute('editmode');
  })) as 'true' | 'false';
}

/** Bob's page in Alice's browser, its frame loaded; the frame. */
async function openBait(page: Page, name: string): Promise<Frame> {
  await page.goto(bk.docUrl(bob.username, `/${name}`));
  const frame = (await (await page.$('#victim'))!.contentFrame())!;
  assert.ok(frame, 'the frame is there');
  return frame;
}

/** Moves Bob's button under the frame's element and clicks the button where Alice sees it. */
async function baitedClick(page: Page, frame: Frame, selector: string) {
  const box = (await frame.locator(selector).boundingBox())!;
  const x = box.x + Math.min(8, box.width / 2);
  const y = box.y + box.height / 2;
  await page.evaluate(
    ({ x, y }) => {
      const b = document.getElementById('prize')!;
      b.style.left = `${x - 120}px`;
      b.style.top = `${y - 24}px`;
    },
    { x, y },
  );
  // What Alice sees at that point is Bob's button; what is on top there is Alice's page in the frame.
  const top = await page.evaluate(({ x, y }) => document.elementFromPoint(x, y)?.id, { x, y });
  assert.equal(top, 'victim', 'the frame lies over the button');
  await page.mouse.click(x, y);
}

/** What the page in the frame can do: its origin, hyperclayjs's mode, the note's editability, the cookies. */
async function insideFrame(f: Frame) {
  return f.evaluate(() => {
    let cookie: string;
    try {
      cookie = document.cookie;
    } catch {
      cookie = '(unreadable)';
    }
    return {
      origin: self.origin,
      editmode: document.documentElement.getAttribute('editmode'),
      editable: document.getElementById('note')?.isContentEditable ?? null,
      toolbar: document.querySelector('[data-kiln-toolbar]') !== null,
      cookie,
    };
  });
}

/** Alice's notes in Bob's frame, in Alice's browser: never editable, never her origin, no cookie of hers. */
async function viewOnly(f: Frame, what: string) {
  await f.waitForLoadState('load');
  const seen = await insideFrame(f);
  assert.equal(seen.origin, 'null', `${what}: the page runs without its origin`);
  assert.notEqual(seen.editmode, 'true', `${what}: hyperclayjs is not in edit mode`);
  assert.equal(seen.editable, false, `${what}: the note is not editable`);
  assert.equal(seen.toolbar, false, `${what}: no toolbar`);
  assert.doesNotMatch(seen.cookie, /isAdminOfCurrentResource|auth_token/, `${what}: no cookie of the host is readable`);
}

test('Bob’s bait frame of Alice’s notes saves nothing; Alice’s own editing still saves', {
  skip,
  timeout: 180_000,
}, async () => {
  // A visitor's browser: Bob's page embeds Alice's notes as any page may, hyperclayjs in view mode.
  const stranger = await bk.newContext();
  const seenByVisitor = await stranger.newPage();
  const visitorFrame = await openBait(seenByVisitor, 'prize.html');
  assert.equal(await settled(visitorFrame), 'false', 'a visitor’s frame: hyperclayjs in view mode');
  assert.equal((await insideFrame(visitorFrame)).origin, new URL(bk.docUrl(alice.username)).origin);
  await stranger.close();

  // Alice's browser, signed in on her host: the same bait.
  const page = await context.newPage();
  const frame = await openBait(page, 'prize.html');
  await viewOnly(frame, 'Bob’s frame');
  assert.equal(
    await page.evaluate(() => getComputedStyle(document.getElementById('victim')!).opacity),
    '0.02',
    'the frame is all but invisible',
  );
  // Alice opens her notes in another tab meanwhile: her browser holds the edit cookie again.
  const other = await context.newPage();
  await other.goto(bk.docUrl(alice.username, '/notes.html'));
  assert.equal(await settled(other.mainFrame()), 'true');
  await viewOnly(frame, 'Bob’s frame, with the edit cookie set by her other tab');

  // Two baited clicks: the box, then the note; typing, Ctrl+S.
  await baitedClick(page, frame, '#done');
  await baitedClick(page, frame, '#note');
  await page.keyboard.type(' typed by bait');
  await page.keyboard.press('Control+s');
  assert.equal(await frame.evaluate(() => (document.getElementById('done') as HTMLInputElement).checked), true);

  // `?editmode=true` on the frame's URL (hyperclayjs's switch above the cookie) is taken off first.
  const forced = await context.newPage();
  const forcedFrame = await openBait(forced, 'prize-edit.html');
  await viewOnly(forcedFrame, 'Bob’s frame asking for edit mode');
  assert.doesNotMatch(forcedFrame.url(), /editmode/);
  await baitedClick(forced, forcedFrame, '#done');
  await baitedClick(forced, forcedFrame, '#note');
  await forced.keyboard.type(' forced');
  await forced.keyboard.press('Control+s');

  // A link inside Bob's frame, just after Alice's other tab set the edit cookie again: the page it
  // leads to is still view only.
  await other.reload();
  assert.equal(await settled(other.mainFrame()), 'true');
  const jar = await context.cookies(bk.docUrl(alice.username, '/'));
  assert.ok(
    jar.some((c) => c.name === 'isAdminOfCurrentResource' && c.value === 'true'),
    'the browser holds the edit cookie',
  );
  const navigated = page.waitForEvent('framenavigated', { predicate: (f) => f === frame, timeout: 20_000 });
  await baitedClick(page, frame, '#again');
  await navigated;
  await viewOnly(frame, 'Bob’s frame after a link inside it');
  await baitedClick(page, frame, '#done');

  // Give a stray autosave (debounced 1.5 s) its chance, then: nothing was sent, nothing stored.
  await page.waitForTimeout(4_000);
  assert.deepEqual(saves, [], 'no save request from Bob’s frames');
  assert.equal(await stored(), NOTES, 'Alice’s notes are unchanged');
  await forced.close();
  await other.close();

  // Alice's own page, top level: the same gestures save as before.
  const own = await context.newPage();
  await own.goto(bk.docUrl(alice.username, '/notes.html'));
  assert.equal(await settled(own.mainFrame()), 'true', 'edit mode on her own page');
  await own.click('#done');
  await until(async () => (await stored()).match(/id="done"[^>]*checked/) !== null, {
    what: 'the ticked box saved by the autosave',
  });
  await own.click('#note');
  await own.keyboard.press('End');
  await own.keyboard.type(' typed by alice');
  await own.keyboard.press('Control+s');
  await until(async () => (await stored()).includes('typed by alice'), { what: 'the note saved by Ctrl+S' });

  // Her own page framing her notes (the same origin): still in edit mode there.
  await own.goto(bk.docUrl(alice.username, '/desk.html'));
  const mine = (await (await own.$('#mine'))!.contentFrame())!;
  assert.equal(await settled(mine), 'true', 'edit mode in a frame of her own page');
  const before = saves.length;
  await mine.click('#note');
  await own.keyboard.press('End');
  await own.keyboard.type(' and in her frame');
  await own.keyboard.press('Control+s');
  await until(async () => (await stored()).includes('and in her frame'), { what: 'the save from her own frame' });
  assert.ok(saves.length > before);
  assert.ok(
    saves.every((u) => new URL(u).host === bk.kiln.hostOf(alice.username)),
    'every save came from Alice’s host',
  );
  assert.doesNotMatch(await stored(), /bait|forced/, 'nothing typed into Bob’s frames was ever saved');
  await own.close();
  await page.close();
});

test('Alice forbids framing of her notes from the dashboard: Bob’s frame shows nothing, her own page still frames them', {
  skip,
  timeout: 120_000,
}, async () => {
  const page = await context.newPage();
  await page.setViewportSize(DESKTOP);
  // From the dashboard's row of the document to its sharing page, where the setting lives.
  await page.goto(bk.mainUrl('/_/dashboard'));
  const nodeId = await notesId();
  const row = page.locator(`tr[data-node-id="${nodeId}"]`);
  await row.locator('summary').click();
  await row.locator('a[href$="/sharing"]').click();
  await page.waitForURL(/\/sharing$/);
  assert.match((await page.locator('#framing-state').textContent()) ?? '', /Other sites may show it in a frame/);
  await check(page, 'document-framing-allowed', 'desktop');
  await page.getByRole('button', { name: 'Forbid framing by other sites' }).click();
  await page.waitForSelector('text=Only your own pages may show it in a frame');
  await check(page, 'document-framing-forbidden', 'desktop');
  await page.setViewportSize(PHONE);
  await check(page, 'document-framing-forbidden', 'phone');

  const refused = page.waitForEvent('console', { predicate: (m) => /frame-ancestors/.test(m.text()), timeout: 20_000 });
  await page.goto(bk.docUrl(bob.username, '/prize.html'));
  await refused;
  const frame = (await (await page.$('#victim'))!.contentFrame())!;
  assert.equal(await frame.locator('#done').count(), 0, 'nothing of Alice’s shows in Bob’s frame');
  // Her own page still frames it, in edit mode.
  await page.goto(bk.docUrl(alice.username, '/desk.html'));
  const mine = (await (await page.$('#mine'))!.contentFrame())!;
  assert.equal(await settled(mine), 'true');
  // Allowed again from the same page.
  await page.goto(bk.mainUrl(`/_/dashboard/nodes/${nodeId}/sharing`));
  await page.getByRole('button', { name: 'Let other sites frame it' }).click();
  await page.waitForSelector('text=Other sites may show it in a frame');
  await check(page, 'document-framing-allowed', 'phone');
  await page.close();
});

async function notesId(): Promise<number> {
  const row = await bk.kiln.services.database.db
    .selectFrom('nodes')
    .select('id')
    .where('owner_id', '=', alice.id)
    .where('name', '=', 'notes.html')
    .executeTakeFirstOrThrow();
  return row.id;
}
