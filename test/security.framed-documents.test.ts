// An owner's document never comes up in edit mode inside another host's frame (issue #43, item 2).
// Sibling hosts are same-site, so the owner's host session rides into a neighbour's frame of the owner's
// page. A document loaded in a frame by another origin (Sec-Fetch-Dest iframe/frame/embed/object,
// Sec-Fetch-Site other than same-origin) is answered as to a visitor: the visitor's bytes, no toolbar, no
// edit cookie (the one the browser holds is removed), never a 304 (the cached copy may be the owner's),
// not stored (a history navigation would replay it), and `?editmode=` is taken off the URL. The owner's
// own answers carry `frame-ancestors 'self'`: they render only under the owner's own pages. The owner may
// also forbid framing by other sites for a document: `frame-ancestors 'self'` for everyone, hot path too.
// (The bait page and its clicks, in Chromium: browser.framing.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { hotAnswers } from './support/metrics.ts';
import { until } from './support/wait.ts';
import type { Client, Res } from './support/client.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const DOC = '<!DOCTYPE html><html><head><title>Notes</title></head><body><p>notes</p></body></html>';
const TOOLBAR = 'data-kiln-toolbar';

const topLevel = { 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' };
const framed = (site: string, dest = 'iframe') => ({
  'sec-fetch-dest': dest,
  'sec-fetch-site': site,
  'sec-fetch-mode': 'navigate',
});

/** The Set-Cookie lines naming `name`. */
const cookiesNamed = (r: Res, name: string) => r.setCookies.filter((c) => c.startsWith(`${name}=`));

/** True when the page runs without its origin: a CSP sandbox without `allow-same-origin`. */
function sandboxed(r: Res): boolean {
  const csp = String(r.headers['content-security-policy'] ?? '');
  return /(^|;\s*)sandbox\b/.test(csp) && /allow-scripts/.test(csp) && !/allow-same-origin/.test(csp);
}

/** True when the answer removes the edit cookie from the browser (empty value, expired). */
function removesEditCookie(r: Res): boolean {
  const [c] = cookiesNamed(r, 'isAdminOfCurrentResource');
  return !!c && /^isAdminOfCurrentResource=;/.test(c) && /Expires=Thu, 01 Jan 1970|Max-Age=0/i.test(c);
}

let made = 0;
async function ownerWithNotes(opts: { visibility?: 'private' } = {}) {
  // Document names are unique across a Kiln: one per test.
  const name = `notes-${++made}.html`;
  const path = `/${name}`;
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.hostOf(me.username);
  const res = await main.post('/_/dashboard/nodes', { type: 'site', name, html: DOC });
  assert.equal(res.status, 201, res.text);
  const id = (res.json as { node: { id: number } }).node.id;
  if (opts.visibility) {
    const r = await main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility: opts.visibility });
    assert.equal(r.status, 200, r.text);
  }
  const owner = main.on(host);
  // A top-level visit first: the browser now holds the edit cookie, as the owner's browser would.
  const top = await owner.page(path, { headers: topLevel });
  assert.equal(top.status, 200);
  assert.ok(cookiesNamed(top, 'isAdminOfCurrentResource').some((c) => c.startsWith('isAdminOfCurrentResource=true')));
  assert.ok(top.text.includes(TOOLBAR), 'the owner’s own page load carries the toolbar');
  return { main, owner, me, host, id, path, visitor: kiln.client(host) };
}

test('a document framed by another origin is answered to its owner as to a visitor', async () => {
  const { owner, visitor, path } = await ownerWithNotes();
  const visitorBytes = (await visitor.get(path)).text;
  assert.equal(visitorBytes, DOC);
  for (const [site, dest] of [
    ['same-site', 'iframe'],
    ['cross-site', 'iframe'],
    ['same-site', 'frame'],
    ['same-site', 'embed'],
    ['same-site', 'object'],
    ['none', 'iframe'],
  ]) {
    const what = `${dest} from ${site}`;
    assert.ok(
      owner.jar.header(owner.host)?.includes('isAdminOfCurrentResource=true'),
      `${what}: the browser holds the edit cookie`,
    );
    const r = await owner.page(path, { headers: framed(site, dest) });
    assert.equal(r.status, 200, what);
    assert.equal(r.text, visitorBytes, `${what}: the visitor’s bytes, no toolbar`);
    assert.ok(removesEditCookie(r), `${what}: the edit cookie the browser holds is removed (${r.setCookies})`);
    assert.equal(cookiesNamed(r, 'currentResource').length, 0, `${what}: no cookie of the owner’s is set`);
    assert.match(String(r.headers['cache-control']), /no-store/, `${what}: not stored`);
    // In the owner's browser the page runs without its origin: no edit cookie set later by another tab
    // is ever readable there, and nothing it sends is the host's own.
    assert.ok(sandboxed(r), `${what}: sandboxed (${r.headers['content-security-policy']})`);
    // Framing stays the document's default: visitors' frames elsewhere keep working.
    assert.doesNotMatch(String(r.headers['content-security-policy'] ?? ''), /frame-ancestors/, what);
    // The owner's browser visits again at top level: edit mode there is unchanged.
    const back = await owner.page(path, { headers: topLevel });
    assert.ok(back.text.includes(TOOLBAR));
    assert.ok(
      cookiesNamed(back, 'isAdminOfCurrentResource').some((c) => c.startsWith('isAdminOfCurrentResource=true')),
    );
  }
  // A visitor's frame on another site's page (no cookies, that page as Referer) is the plain visitor's
  // answer: embeds keep their origin.
  for (const [site, referer] of [
    ['same-site', `http://neighbour.${kiln.config.rootDomain}/`],
    ['cross-site', 'https://blog.example/post'],
  ]) {
    const v = await kiln.client(owner.host).get(path, { headers: { ...framed(site!), referer: referer! } });
    assert.equal(v.status, 200);
    assert.equal(v.text, visitorBytes);
    assert.equal(sandboxed(v), false, `a visitor’s ${site} frame is not sandboxed`);
    assert.equal(v.setCookies.length, 0);
  }
  // A frame no other site's page asked for: no Referer (a link followed inside a sandboxed frame sends
  // none, nor cookies), or this host's own. Sandboxed.
  for (const referer of [undefined, `http://${owner.host}/other.html`]) {
    const v = await kiln.client(owner.host).get(path, {
      headers: { ...framed('cross-site'), ...(referer ? { referer } : {}) },
    });
    assert.equal(v.status, 200);
    assert.ok(sandboxed(v), `referer ${referer}`);
  }
  // A revalidation is answered in full: the browser's cached copy may be the owner's (toolbar and all).
  const etag = String((await visitor.get(path)).headers.etag);
  const revalidated = await owner.page(path, { headers: { ...framed('same-site'), 'if-none-match': etag } });
  assert.equal(revalidated.status, 200);
  assert.equal(revalidated.text, visitorBytes);
  // `?editmode=true` (hyperclayjs's own switch, above the cookie) is taken off the framed URL.
  const forced = await owner.page(`${path}?editmode=true&x=1`, { headers: framed('same-site') });
  assert.equal(forced.status, 302);
  assert.equal(forced.headers.location, `${path}?x=1`);
  assert.match(String(forced.headers['cache-control']), /no-store/);
  for (const q of ['?EditMode=true', '?edit%6Dode=true', '?a=1&editmode=&editmode=true']) {
    const r = await owner.page(`${path}${q}`, { headers: framed('same-site') });
    if (q === '?EditMode=true') assert.equal(r.status, 200, q);
    else assert.equal(r.status, 302, q);
    if (r.status === 302) assert.doesNotMatch(String(r.headers.location), /edit(m|%6d)ode/i, q);
  }
});

test('a same-origin frame (the owner’s own page framing its own) keeps the owner’s answer, which renders only under the owner’s pages', async () => {
  const { owner, path } = await ownerWithNotes();
  const top = await owner.page(path, { headers: topLevel });
  assert.match(String(top.headers['content-security-policy']), /frame-ancestors 'self'/);
  assert.equal(top.headers['x-frame-options'], 'SAMEORIGIN');
  const inner = await owner.page(path, { headers: framed('same-origin') });
  assert.equal(inner.status, 200);
  assert.match(String(inner.headers['content-security-policy']), /frame-ancestors 'self'/);
  assert.equal(inner.headers['x-frame-options'], 'SAMEORIGIN');
  assert.equal(removesEditCookie(inner), false, 'the edit cookie of the owner’s top-level page stays');
  // A frame sets no edit cookie of its own: a frame under a neighbour's page could otherwise turn it on.
  assert.equal(cookiesNamed(inner, 'isAdminOfCurrentResource').length, 0);
});

test('the owner signed in on the main app only (no session on the host yet): a neighbour’s frame is sandboxed too', async () => {
  const { me, path } = await ownerWithNotes();
  const fresh = kiln.client();
  const login = await fresh.post(
    '/_/login',
    { email: me.email, password: me.password },
    {
      headers: { accept: 'application/json' },
    },
  );
  assert.equal(login.status, 200, login.text);
  const hint = fresh.jar.get('kiln_signed_in', kiln.hostOf(me.username));
  assert.ok(hint, 'the sign-in hint rides to the owner’s host');
  const r = await fresh.on(kiln.hostOf(me.username)).page(path, { headers: framed('same-site') });
  assert.equal(r.status, 200);
  assert.ok(sandboxed(r), String(r.headers['content-security-policy']));
  // Someone else's hint is no reason.
  const other = kiln.client();
  const them = await signedIn(kiln, other);
  const theirs = await other.post(
    '/_/login',
    { email: them.email, password: them.password },
    {
      headers: { accept: 'application/json' },
    },
  );
  assert.equal(theirs.status, 200);
  const r2 = await other.on(kiln.hostOf(me.username)).page(path, {
    headers: { ...framed('same-site'), referer: `http://${kiln.hostOf(them.username)}/` },
  });
  assert.equal(r2.status, 200);
  assert.equal(sandboxed(r2), false);
});

test('a private document framed by another origin is answered as to a visitor: 404', async () => {
  const { owner, path } = await ownerWithNotes({ visibility: 'private' });
  const r = await owner.page(path, { headers: framed('same-site') });
  assert.equal(r.status, 404);
  assert.ok(!r.text.includes('notes</p>'));
});

async function setFraming(main: Client, id: number, allowed: unknown, opts: { form?: boolean } = {}) {
  return main.post(`/_/dashboard/nodes/${id}/framing`, { allowed } as object, {
    form: opts.form,
    headers: { accept: 'application/json' },
  });
}

test('the owner forbids framing of a document by other sites: frame-ancestors for everyone, from memory too', async () => {
  const { main, owner, id, path } = await ownerWithNotes();
  const fromMemory = () => hotAnswers(kiln.client());
  // Default: frameable by anyone.
  const before = await main.get(`/_/dashboard/nodes/${id}/sharing`, { headers: { accept: 'application/json' } });
  assert.equal(before.status, 200, before.text);
  assert.equal(before.json.framingAllowed, true);
  // The visitor's answer is kept in memory (the hot path) before the setting changes.
  await until(
    async () => {
      const n = await fromMemory();
      await kiln.client(owner.host).get(path);
      return (await fromMemory()) > n;
    },
    { what: 'an answer kept in memory' },
  );

  const off = await setFraming(main, id, false);
  assert.equal(off.status, 200, off.text);
  assert.equal(off.json.framingAllowed, false);
  assert.match(off.json.msg, /notes-\d+\.html/);
  assert.equal(
    (await main.get(`/_/dashboard/nodes/${id}/sharing`, { headers: { accept: 'application/json' } })).json
      .framingAllowed,
    false,
  );
  const forbids = (r: Res, what: string) => {
    assert.equal(r.status, 200, what);
    assert.match(String(r.headers['content-security-policy']), /frame-ancestors 'self'/, what);
    assert.equal(r.headers['x-frame-options'], 'SAMEORIGIN', what);
  };
  // A cookie-less visitor, twice: the route, then (once kept again) the hot path; both carry it.
  await until(
    async () => {
      const n = await fromMemory();
      forbids(await kiln.client(owner.host).get(path), 'visitor');
      return (await fromMemory()) > n;
    },
    { what: 'the new answer kept in memory' },
  );
  forbids(await kiln.client(owner.host).get(path), 'visitor, from memory');
  forbids(await owner.page(path, { headers: topLevel }), 'owner');
  forbids(await owner.page(path, { headers: framed('same-site') }), 'owner, framed by a neighbour');
  forbids(await kiln.client(owner.host).get(path, { headers: framed('cross-site') }), 'visitor, framed');

  // Allowed again: the headers go, from memory too.
  const on = await setFraming(main, id, 'true', { form: true });
  assert.equal(on.status, 200, on.text);
  assert.equal(on.json.framingAllowed, true);
  for (let i = 0; i < 3; i++) {
    const r = await kiln.client(owner.host).get(path);
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-frame-options'], undefined);
    assert.doesNotMatch(String(r.headers['content-security-policy'] ?? ''), /frame-ancestors/);
  }

  // Bad input, strangers, neighbours and folders.
  const bad = await setFraming(main, id, 'maybe');
  assert.equal(bad.status, 400);
  assert.equal(bad.json.code, 'invalid');
  const stranger = await kiln.client().post(`/_/dashboard/nodes/${id}/framing`, { allowed: false });
  assert.equal(stranger.status, 401);
  const neighbour = kiln.client();
  await signedIn(kiln, neighbour);
  const theirs = await setFraming(neighbour, id, false);
  assert.ok([400, 403, 404].includes(theirs.status), `${theirs.status} ${theirs.text}`);
  const cross = await main.post(
    `/_/dashboard/nodes/${id}/framing`,
    { allowed: false },
    { headers: { 'sec-fetch-site': 'same-site', accept: 'application/json' } },
  );
  assert.equal(cross.status, 403);
  assert.equal(
    (await main.get(`/_/dashboard/nodes/${id}/sharing`, { headers: { accept: 'application/json' } })).json
      .framingAllowed,
    true,
    'nothing changed',
  );
  const folder = await main.post('/_/dashboard/nodes', { type: 'folder', name: 'box' });
  assert.equal(folder.status, 201, folder.text);
  const notDoc = await setFraming(main, (folder.json as { node: { id: number } }).node.id, false);
  assert.equal(notDoc.status, 400);
});

test('the sharing page shows the setting and its form turns it off and on', async () => {
  const { main, id } = await ownerWithNotes();
  const page = await main.page(`/_/dashboard/nodes/${id}/sharing`);
  assert.equal(page.status, 200);
  assert.match(page.text, /action="\/_\/dashboard\/nodes\/\d+\/framing"/);
  assert.match(page.text, /Other sites may show it in a frame/);
  const posted = await main.post(
    `/_/dashboard/nodes/${id}/framing`,
    { allowed: 'false' },
    {
      form: true,
      headers: { accept: 'text/html' },
    },
  );
  assert.equal(posted.status, 302);
  const after = await main.page(String(posted.headers.location));
  assert.match(after.text, /Only your own pages may show it in a frame/);
});
