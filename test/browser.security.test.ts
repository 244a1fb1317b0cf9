// Cross-account attacks in a real browser (Debian's Chromium): Alice is signed in (on the main app and,
// through the handshake, on her own host) and opens a page that Bob published on his host. The page's
// script tries everything a neighbour could: read and overwrite Alice's uploads, save her documents,
// sign her out or into Bob's account, toss a session cookie over hers, frame her dashboard, register a
// service worker from an upload. Every attempt is refused and nothing of Alice's changes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { storeUpload } from '../src/uploads/upload.ts';
import { saveDocument } from '../src/save/pipeline.ts';
import { listVersions } from '../src/save/history.ts';
import { newPerson, sessionsFor, browserCookies, actingAs, type Sessions } from './support/people.ts';

const skip = !hasChromium && 'Debian chromium is not installed (.ci/run installs it)';
const ALICE_DOC =
  '<!DOCTYPE html><html><head><title>Alice</title></head><body><p id="mine">alice’s words</p></body></html>';
const ALICE_NOTES = '# alice’s private notes';

let bk: BrowserKiln;
let alice: { id: number; username: string; password: string; email: string; sessions: Sessions };
let bob: { id: number; username: string; password: string; email: string; sessions: Sessions };
let context: BrowserContext;
let page: Page;

before(
  async () => {
    if (!hasChromium) return;
    bk = await startBrowserKiln();
    const s = bk.kiln.services;
    const make = async () => {
      const input = newPerson({ plan: 'maker' });
      const p = await createPerson(s, input);
      return {
        ...p,
        password: input.password,
        email: input.email,
        sessions: await sessionsFor(s.database.db, bk.kiln.config, p.id, p.username),
      };
    };
    alice = await make();
    bob = await make();
    await createNode(await actingAs(s, alice.id), {
      ownerId: alice.id,
      parentId: 0,
      type: 'site',
      name: 'index.html',
      html: ALICE_DOC,
    });
    await storeUpload(s, {
      ownerId: alice.id,
      plan: 'maker',
      parentId: 0,
      parentPath: '',
      fileName: 'notes.md',
      bytes: Buffer.from(ALICE_NOTES),
    });
    await createNode(await actingAs(s, bob.id), {
      ownerId: bob.id,
      parentId: 0,
      type: 'site',
      name: 'index.html',
      html: '<!DOCTYPE html><html><body>bob</body></html>',
    });
    await storeUpload(s, {
      ownerId: bob.id,
      plan: 'maker',
      parentId: 0,
      parentPath: '',
      fileName: 'sw.js',
      bytes: Buffer.from("self.addEventListener('fetch', () => {});"),
    });
    // Alice's browser: signed in on the main app and on her own host.
    context = await bk.newContext();
    // tsx names inner functions with a helper (`__name`) that page scripts do not have.
    await context.addInitScript('window.__name = (f) => f');
    await context.addCookies(browserCookies(bk.kiln.config, alice.sessions));
    page = await context.newPage();
    await page.goto(bk.docUrl(bob.username, '/'));
  },
  { timeout: 120_000 },
);
after(
  async () => {
    // Cleanup is bounded: a browser or server that does not close in time is reported, not waited on.
    const done = (async () => {
      await context?.close().catch(() => {});
      await bk?.stop();
    })();
    if (
      !(await within(
        done.then(() => true),
        45_000,
        () => false,
      ))
    )
      console.error('browser.security: cleanup did not finish within 45 s');
  },
  { timeout: 60_000 },
);

/** `p`, or `fallback` after `ms` (a page script or frame that never answers must not hang the suite). */
function within<T>(p: Promise<T>, ms: number, fallback: () => T): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((resolve, reject) =>
      setTimeout(() => {
        try {
          resolve(fallback());
        } catch (err) {
          reject(err);
        }
      }, ms).unref(),
    ),
  ]);
}

/** Runs `fn` as Bob's page script (in Alice's browser, on Bob's host). */
function asBobsPage<T>(
  fn: (arg: { alice: string; bob: string; main: string; aliceUser: string; aliceDoc: string }) => Promise<T>,
): Promise<T> {
  return within(
    page.evaluate(fn, {
      alice: bk.docUrl(alice.username, ''),
      bob: bk.docUrl(bob.username, ''),
      main: bk.mainUrl(''),
      aliceUser: alice.username,
      aliceDoc: bk.docUrl(alice.username, '/index.html'),
    }),
    30_000,
    () => {
      throw new Error('Bob’s page script did not finish within 30 s');
    },
  );
}

async function aliceUnchanged() {
  const c = bk.kiln.client(bk.kiln.hostOf(alice.username));
  assert.equal((await c.get('/index.html')).text, ALICE_DOC, 'alice’s document is unchanged');
  assert.equal((await c.get('/notes.md')).text, ALICE_NOTES, 'alice’s upload is unchanged');
}

/** Alice is still signed in on the main app (her dashboard, in her browser). */
async function aliceStillSignedIn(): Promise<boolean> {
  const p = await context.newPage();
  try {
    await p.goto(bk.mainUrl('/_/dashboard'));
    return new URL(p.url()).pathname === '/_/dashboard';
  } finally {
    await p.close();
  }
}

/** Bob's page builds a form that posts `fields` to the main app's `path`, and a click submits it as a
 *  top-level navigation; the main app's answer status. Waits on the response, not on navigation events,
 *  so a slow machine cannot lose the race between the submit and the wait. */
async function formPostFromBobsPage(path: string, fields: Record<string, string>): Promise<number> {
  const p = await context.newPage();
  try {
    await p.goto(bk.docUrl(bob.username, '/'));
    const action = bk.mainUrl(path);
    await p.evaluate(
      ({ action, fields }) => {
        const f = document.createElement('form');
        f.method = 'POST';
        f.action = action;
        for (const [k, v] of Object.entries(fields)) {
          const i = document.createElement('input');
          i.type = 'hidden';
          i.name = k;
          i.value = v;
          f.appendChild(i);
        }
        const b = document.createElement('button');
        b.id = 'bobs-submit';
        b.textContent = 'go';
        f.appendChild(b);
        document.body.appendChild(f);
      },
      { action, fields },
    );
    const [res] = await Promise.all([
      p.waitForResponse((r) => r.url() === action && r.request().method() === 'POST', { timeout: 20_000 }),
      p.click('#bobs-submit', { timeout: 20_000 }),
    ]);
    return res.status();
  } finally {
    await within(
      p.close().then(() => true),
      10_000,
      () => false,
    );
  }
}

test('Bob’s page cannot save Alice’s documents, on her host or through his', { skip, timeout: 90_000 }, async () => {
  const results = await asBobsPage(async ({ alice, bob, aliceDoc }) => {
    const attempt = async (url: string, headers: Record<string, string>) => {
      try {
        const r = await fetch(url, {
          method: 'POST',
          credentials: 'include',
          headers,
          body: '<html><body>defaced</body></html>',
        });
        return r.status;
      } catch {
        return 'blocked';
      }
    };
    return {
      // Cross-origin, with her cookies if the browser sends them.
      direct: await attempt(`${alice}/_/save`, { 'content-type': 'text/plain', 'document-url': aliceDoc }),
      // Same-origin on Bob's host, naming her document.
      viaBob: await attempt(`${bob}/_/save`, { 'content-type': 'text/plain', 'document-url': aliceDoc }),
      // Her upload, through the upload editor's save path on Bob's host.
      upload: await attempt(`${bob}/_/save`, {
        'content-type': 'text/plain',
        'document-url': `${bob}/_/edit/uploads/${aliceDoc.split('//')[1].split('.')[0]}/notes.md`,
      }),
    };
  });
  assert.notEqual(results.direct, 200);
  assert.notEqual(results.viaBob, 200);
  assert.notEqual(results.upload, 200);
  await aliceUnchanged();
});

test('Bob’s page cannot read or overwrite Alice’s uploads', { skip, timeout: 90_000 }, async () => {
  const r = await asBobsPage(async ({ alice, bob, aliceUser }) => {
    const read = async (url: string) => {
      try {
        const res = await fetch(url, { credentials: 'include' });
        return { status: res.status, text: await res.text() };
      } catch {
        return { status: 'blocked', text: '' };
      }
    };
    const upload = async (url: string) => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          credentials: 'include',
          headers: { 'content-type': 'application/json', 'page-url': `${alice}/index.html` },
          body: JSON.stringify({ fileName: 'notes.md', fileBody: btoa('overwritten') }),
        });
        return res.status;
      } catch {
        return 'blocked';
      }
    };
    return {
      editorOnBob: await read(`${bob}/_/edit/uploads/${aliceUser}/notes.md`),
      editorOnAlice: await read(`${alice}/_/edit/uploads/${aliceUser}/notes.md`),
      uploadToAlice: await upload(`${alice}/_/upload`),
      uploadViaBob: await upload(`${bob}/_/upload`),
    };
  });
  assert.notEqual(r.editorOnBob.status, 200);
  assert.doesNotMatch(r.editorOnBob.text, /private notes/);
  assert.equal(r.editorOnAlice.status, 'blocked', 'cross-origin: the browser gives Bob’s script nothing');
  assert.notEqual(r.uploadToAlice, 200);
  assert.notEqual(r.uploadViaBob, 200);
  await aliceUnchanged();
});

test('Bob’s page cannot sign Alice out, nor sign her into Bob’s account', { skip, timeout: 90_000 }, async () => {
  const r = await asBobsPage(async ({ main, bob: _bob }) => {
    const post = async (path: string, body: string) => {
      try {
        const res = await fetch(`${main}${path}`, {
          method: 'POST',
          credentials: 'include',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
        return res.status;
      } catch {
        return 'blocked';
      }
    };
    return { logout: await post('/_/logout', ''), login: await post('/_/login', 'email=x&password=y') };
  });
  void r;
  assert.equal(await aliceStillSignedIn(), true, 'fetches to the main app changed nothing');

  // Real form posts (a top-level navigation carries cookies and no CORS): refused for their origin.
  assert.equal(
    await formPostFromBobsPage('/_/login', { email: bob.email, password: bob.password }),
    403,
    'a sign-in form posted from another account’s host is refused',
  );
  assert.equal(
    await formPostFromBobsPage('/_/logout', {}),
    403,
    'a sign-out form posted from another account’s host is refused',
  );
  assert.equal(await aliceStillSignedIn(), true, 'still Alice, not signed out and not Bob');
  const dash = await context.newPage();
  await dash.goto(bk.mainUrl('/_/dashboard'));
  assert.match((await dash.content()) ?? '', new RegExp(alice.username));
  assert.doesNotMatch((await dash.content()) ?? '', new RegExp(`\\b${bob.username}\\b`));
  await dash.close();
});

test('Bob’s page cannot frame Alice’s dashboard', { skip, timeout: 90_000 }, async () => {
  // The frame's load event comes once the browser is done with it, blocked or not.
  const framed = await asBobsPage(
    ({ main }) =>
      new Promise<boolean>((resolve) => {
        const frame = document.createElement('iframe');
        frame.onload = () => resolve(true);
        frame.src = `${main}/_/dashboard`;
        document.body.appendChild(frame);
      }),
  );
  assert.equal(framed, true, 'the frame finished loading (blocked or not)');
  const frame = page.frames().find((f) => f.url().includes('/_/dashboard') || f !== page.mainFrame());
  // The browser refuses to render it: no dashboard content reaches the frame.
  const text = frame
    ? await within(
        frame.evaluate(() => document.body?.textContent ?? '').catch(() => ''),
        5_000,
        () => '',
      )
    : '';
  assert.doesNotMatch(text, new RegExp(alice.username));
  assert.doesNotMatch(text, /Your documents/);
});

test('Bob’s page cannot frame Alice’s restore page and have her click Restore', { skip, timeout: 90_000 }, async () => {
  // Alice's diary has two versions; restoring the first would undo her last save.
  const s = bk.kiln.services;
  const first = '<!DOCTYPE html><html><body><p>first entry</p></body></html>';
  const latest = '<!DOCTYPE html><html><body><p>latest entry</p></body></html>';
  const diary = await createNode(await actingAs(s, alice.id), {
    ownerId: alice.id,
    parentId: 0,
    type: 'site',
    name: `diary-${alice.username}.html`,
    html: first,
  });
  await saveDocument(s, {
    nodeId: diary.id,
    bytes: Buffer.from(latest),
    by: { kind: 'editor', accountId: alice.id, writer: null },
  });
  const oldest = (await listVersions(s.database.db, diary.id)).at(-1)!;
  await page.evaluate((v) => {
    document.body.dataset.version = String(v);
  }, oldest.id);
  // Bob's page frames the restore page, as a "win a prize" button would sit over it.
  const loaded = await asBobsPage(
    ({ alice: aliceHost }) =>
      new Promise<boolean>((resolve) => {
        const frame = document.createElement('iframe');
        frame.name = 'prize';
        frame.onload = () => resolve(true);
        frame.src = `${aliceHost}/_/restore/${document.body.dataset.version}`;
        document.body.appendChild(frame);
      }),
  ).catch(() => false);
  assert.equal(loaded, true, 'the frame finished loading (blocked or not)');
  const frame = page.frames().find((f) => f.name() === 'prize');
  assert.ok(frame);
  const buttons = await within(
    frame
      .locator('form[method="post"] button')
      .count()
      .catch(() => 0),
    10_000,
    () => 0,
  );
  if (buttons > 0) {
    // What a victim's click would do: post the form from inside the frame.
    await Promise.all([frame.waitForNavigation().catch(() => {}), frame.locator('form[method="post"] button').click()]);
  }
  assert.equal(buttons, 0, 'the browser refused to render Alice’s restore page in Bob’s frame');
  const now = await bk.kiln.client(bk.kiln.hostOf(alice.username)).get(`/diary-${alice.username}.html`);
  assert.equal(now.text, latest, 'the latest save is still the current one');
});

test('Bob’s page cannot register a service worker from an upload', { skip, timeout: 90_000 }, async () => {
  const outcome = await asBobsPage(async () => {
    try {
      await navigator.serviceWorker.register('/sw.js');
      return 'registered';
    } catch (err) {
      return `refused: ${(err as Error).name}`;
    }
  });
  assert.match(outcome, /^refused/);
});

test('a session cookie tossed in by Bob’s page never signs Alice in as Bob; her host session stays hers', {
  skip,
  timeout: 90_000,
}, async () => {
  // Bob knows his own main-app token (he can read it in his own browser) and tosses it for the whole root domain.
  await asBobsPage(async () => undefined);
  await page.evaluate((token) => {
    document.cookie = `__Host-auth_token=${token}; domain=kiln.localhost; path=/`;
    document.cookie = `auth_token=${token}; domain=kiln.localhost; path=/`;
  }, bob.sessions.main);
  // The browser refuses a __Host- cookie that names a Domain; the plain one it keeps, and Kiln ignores.
  const tossed = (await context.cookies()).filter((c) => c.value === bob.sessions.main);
  assert.deepEqual(
    tossed.map((c) => c.name),
    ['auth_token'],
  );
  const dash = await context.newPage();
  try {
    await dash.goto(bk.mainUrl('/_/dashboard'));
    const html = await dash.content();
    assert.doesNotMatch(html, new RegExp(`\\b${bob.username}\\b`), 'never Bob’s dashboard');
    assert.equal(new URL(dash.url()).pathname, '/_/dashboard', 'still Alice’s');
    assert.match(html, new RegExp(alice.username));
  } finally {
    await dash.close();
    // Clean up the tossed cookie so other tests see Alice's browser as it was.
    await page.evaluate(() => {
      document.cookie = 'auth_token=; domain=kiln.localhost; path=/; max-age=0';
    });
  }
  await aliceUnchanged();
  assert.equal(await aliceStillSignedIn(), true);
});
