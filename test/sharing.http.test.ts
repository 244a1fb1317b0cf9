// Share tokens through HTTP: the owner turns sharing on and off and regenerates the link; `?token=` on a
// document URL sets `share_<sitename>` and makes its holder a share guest of that one document (view
// even when private, save, live lane; never the code editor or versions); revocation is immediate,
// open live streams included.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import type { Client } from './support/client.ts';
import { shareCookieName } from '../src/sharing/share.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln();
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

const doc = (text: string) => `<!doctype html>\n<html><body><p>${text}</p></body></html>\n`;

/** An owner with one private document. */
async function ownerWithDocument(visibility: 'public' | 'private' = 'private') {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const name = `shared-${me.username}.html`;
  const created = await main.post('/_/dashboard/nodes', { type: 'site', name, html: doc('v1') });
  assert.equal(created.status, 201, created.text);
  const id: number = created.json.node.id;
  if (visibility === 'private')
    assert.equal((await main.post(`/_/dashboard/nodes/${id}/visibility`, { visibility })).status, 200);
  const host = kiln.hostOf(me.username);
  return { me, main, id, name, host, url: `http://${host}/${name}`, cookie: `share_${name.replace(/\.html$/, '')}` };
}

async function setSharing(main: Client, id: number, enabled: boolean) {
  const res = await main.post(`/_/dashboard/nodes/${id}/sharing`, { enabled });
  assert.equal(res.status, 200, res.text);
  return res.json as { msg: string; msgType: string; shareEnabled: boolean; shareUrl?: string };
}

/** Follows a share link the way a browser does: the 302 sets the cookie, then the clean URL. */
async function openShareLink(visitor: Client, shareUrl: string) {
  const u = new URL(shareUrl);
  const first = await visitor.get(u.pathname + u.search);
  return { first, next: first.status === 302 ? await visitor.get(first.headers.location!) : null };
}

function guestSave(c: Client, url: string, html: string) {
  const host = new URL(url).host;
  return c.on(host).post('/_/save', html, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': url,
      origin: `http://${host}`,
      'sec-fetch-site': 'same-origin',
    },
  });
}

function liveLane(c: Client, host: string, url: string, lane = 'live') {
  const cookie = c.jar.header(host);
  return SseClient.open({
    port,
    host,
    path: `/_/sync?document-url=${encodeURIComponent(url)}&lane=${lane}`,
    headers: cookie ? { cookie } : {},
  });
}

test('the owner turns sharing on (AJAX): JSON {msg, msgType, shareEnabled, shareUrl} with a long url-safe token; the link is shown once', async () => {
  const o = await ownerWithDocument();
  const before = await o.main.get(`/_/dashboard/nodes/${o.id}/sharing`);
  assert.equal(before.status, 200);
  assert.equal(before.json.shareEnabled, false);

  const on = await setSharing(o.main, o.id, true);
  assert.equal(on.msgType, 'success');
  assert.equal(on.shareEnabled, true);
  const link = new URL(on.shareUrl!);
  assert.equal(link.host, o.host);
  assert.equal(link.pathname, `/${o.name}`);
  const token = link.searchParams.get('token')!;
  assert.match(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');

  // Only a hash is kept: the token is not in the database, and not shown again.
  const row = await kiln.services.database.db
    .selectFrom('nodes')
    .select(['share_token', 'share_enabled'])
    .where('id', '=', o.id)
    .executeTakeFirstOrThrow();
  assert.equal(row.share_enabled, 1);
  assert.notEqual(row.share_token, token);
  assert.match(row.share_token!, /^[0-9a-f]{64}$/);
  const status = await o.main.get(`/_/dashboard/nodes/${o.id}/sharing`);
  assert.deepEqual(status.json, { msg: '', msgType: 'success', shareEnabled: true, framingAllowed: true });
  const again = await setSharing(o.main, o.id, true);
  assert.equal(again.shareEnabled, true);
  assert.equal(again.shareUrl, undefined);
  assert.match(again.msg, /already on/);

  // The browser page shows the state and the controls.
  const page = await o.main.page(`/_/dashboard/nodes/${o.id}/sharing`);
  assert.equal(page.status, 200);
  assert.match(page.text, /Sharing is <span[^>]*>on</);
  assert.match(page.text, /Make a new link/);
});

test('a valid ?token= sets share_<sitename> (httpOnly, SameSite=Lax, 1 year, Path=/, host-only) and opens the private document', async () => {
  const o = await ownerWithDocument();
  const { shareUrl } = await setSharing(o.main, o.id, true);
  const visitor = kiln.client(o.host);
  assert.equal((await visitor.get(`/${o.name}`)).status, 404, 'private: a stranger sees nothing');

  const { first, next } = await openShareLink(visitor, `${shareUrl}&keep=1`);
  assert.equal(first.status, 302);
  assert.equal(first.headers.location, `/${o.name}?keep=1`, 'the token leaves the address bar; other parameters stay');
  const set = first.setCookies.find((c) => c.startsWith(`${o.cookie}=`));
  assert.ok(set, `sets ${o.cookie}: ${first.setCookies.join(' | ')}`);
  assert.match(set, /; HttpOnly/i);
  assert.match(set, /; SameSite=Lax/i);
  assert.match(set, /; Max-Age=31536000/);
  assert.match(set, /; Path=\//);
  assert.doesNotMatch(set, /Domain=/i, 'scoped to this document host only');
  assert.doesNotMatch(set, /Secure/i, 'plain http: no Secure');

  assert.equal(next!.status, 200);
  assert.equal(next!.text, doc('v1'));
  assert.equal(next!.headers['cache-control'], 'private, no-cache');
  assert.equal(visitor.jar.get('isAdminOfCurrentResource', o.host), 'true', 'the guest gets the edit controls');
  // The cookie is the grant: later visits need no token.
  assert.equal((await visitor.get(`/${o.name}`)).status, 200);
  // It grants this document only.
  assert.equal(shareCookieName({ name: 'My Notes.html', path: '' }), 'share_my_notes');
  assert.equal(shareCookieName({ name: 'index.html', path: 'a/b' }), 'share_a_b_index');
});

test('Secure on the share cookie when BASE_URL is https', async () => {
  const secure = await startKiln({ env: { BASE_URL: 'https://kiln.localhost:8080' } });
  try {
    const main = secure.client();
    const me = await signedIn(secure, main);
    const created = await main.post('/_/dashboard/nodes', {
      type: 'site',
      name: `sec-${me.username}.html`,
      html: doc('s'),
    });
    const on = await main.post(`/_/dashboard/nodes/${created.json.node.id}/sharing`, { enabled: true });
    assert.equal(new URL(on.json.shareUrl).protocol, 'https:');
    const u = new URL(on.json.shareUrl);
    const res = await secure.client(secure.hostOf(me.username)).get(u.pathname + u.search);
    assert.equal(res.status, 302);
    assert.match(res.setCookies.find((c) => c.startsWith('share_'))!, /; Secure/);
  } finally {
    await secure.stop();
  }
});

test('an invalid token, or any token while sharing is off, grants nothing and sets no cookie', async () => {
  const o = await ownerWithDocument();
  const visitor = kiln.client(o.host);
  // Sharing never turned on.
  const forged = 'A'.repeat(43);
  let res = await visitor.get(`/${o.name}?token=${forged}`);
  assert.equal(res.status, 404);
  assert.deepEqual(
    res.setCookies.filter((c) => c.startsWith('share_')),
    [],
  );

  const { shareUrl } = await setSharing(o.main, o.id, true);
  const token = new URL(shareUrl!).searchParams.get('token')!;
  for (const bad of [
    forged,
    token.slice(0, -1),
    `${token}x`,
    token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'),
    '',
  ]) {
    res = await visitor.get(`/${o.name}?token=${encodeURIComponent(bad)}`);
    assert.equal(res.status, 404, `token ${bad}`);
    assert.deepEqual(
      res.setCookies.filter((c) => c.startsWith('share_')),
      [],
    );
  }
  // A forged cookie is no better.
  res = await visitor.get(`/${o.name}`, { headers: { cookie: `${o.cookie}=${forged}` } });
  assert.equal(res.status, 404);
  // A token of another document does not open this one.
  const other = await ownerWithDocument();
  const otherLink = (await setSharing(other.main, other.id, true)).shareUrl!;
  res = await visitor.get(`/${o.name}?token=${new URL(otherLink).searchParams.get('token')}`);
  assert.equal(res.status, 404);

  // Disabled: the real token no longer works.
  await setSharing(o.main, o.id, false);
  res = await visitor.get(`/${o.name}?token=${token}`);
  assert.equal(res.status, 404);
  assert.deepEqual(
    res.setCookies.filter((c) => c.startsWith('share_')),
    [],
  );

  // On a public document a bad token is just ignored: the page is served, no grant.
  const pub = await ownerWithDocument('public');
  const pv = kiln.client(pub.host);
  res = await pv.get(`/${pub.name}?token=${forged}`);
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.setCookies.filter((c) => c.startsWith('share_')),
    [],
  );
  assert.equal(pv.jar.get('isAdminOfCurrentResource', pub.host), undefined);
});

test('a share guest saves (200) but gets 403 on uploads, the code editor and versions', async () => {
  const o = await ownerWithDocument();
  const { shareUrl } = await setSharing(o.main, o.id, true);
  const guest = kiln.client(o.host);
  assert.equal(
    (await guestSave(guest, o.url, doc('stranger'))).status,
    404,
    'without the link: a private document is like a missing one',
  );
  await openShareLink(guest, shareUrl!);

  const saved = await guestSave(guest, o.url, doc('by guest'));
  assert.equal(saved.status, 200, saved.text);
  assert.equal(saved.json.msgType, 'success');
  assert.equal((await o.main.on(o.host).get(`/${o.name}`)).text, doc('by guest'), 'the owner sees the guest’s save');

  const meta = await guest.get('/_/meta', { headers: { 'document-url': o.url } });
  assert.equal(meta.json.document.writable, true);
  assert.equal(meta.json.document.upload.allowed, false, 'a share guest saves but does not upload');
  const upload = await guest.post(
    '/_/upload',
    { fileName: 'guest.txt', fileBody: 'aGk=' },
    { headers: { 'page-url': o.url, origin: `http://${o.host}` } },
  );
  // The table's answer for a share guest (an app user) uploading: 403, not 401 (#46: they hold a grant).
  assert.equal(upload.status, 403, upload.text);

  const edit = await guest.get(`/_/edit?path=${o.name}`);
  assert.equal(edit.status, 403);
  const editPage = await guest.page(`/_/edit?path=${o.name}`);
  assert.equal(editPage.status, 403, 'an app user, not a stranger: no sign-in redirect');
  const versions = await guest.get(`/_/versions?path=${o.name}`);
  assert.equal(versions.status, 403);
});

test('a developer signed in elsewhere is only a share guest on this host: saves, may not edit code (403), the owner keeps every right', async () => {
  const o = await ownerWithDocument();
  const { shareUrl } = await setSharing(o.main, o.id, true);
  const otherMain = kiln.client();
  await signedIn(kiln, otherMain);
  const other = otherMain.on(o.host);
  await openShareLink(other, shareUrl!);
  assert.equal((await other.get(`/${o.name}`)).status, 200);
  assert.equal((await guestSave(otherMain, o.url, doc('by dev guest'))).status, 200);
  // Their session is their own host's and the main app's: here they are a share guest like anyone.
  const edit = await other.get(`/_/edit?path=${o.name}`);
  assert.equal(edit.status, 403);

  // The owner opening their own link keeps the editor and versions.
  const owner = o.main.on(o.host);
  await openShareLink(owner, shareUrl!);
  assert.equal((await owner.get(`/_/edit?path=${o.name}`)).status, 200);
  assert.equal((await owner.get(`/_/versions?path=${o.name}`)).status, 200);
});

test('disabling sharing or regenerating the token revokes access at once (the old cookie stops working)', async () => {
  const o = await ownerWithDocument();
  const first = (await setSharing(o.main, o.id, true)).shareUrl!;
  const guest = kiln.client(o.host);
  await openShareLink(guest, first);
  assert.equal((await guest.get(`/${o.name}`)).status, 200);

  // Regenerate: the old link and its cookie stop; the new link works.
  const regen = await o.main.post(`/_/dashboard/nodes/${o.id}/sharing/regenerate`);
  assert.equal(regen.status, 200, regen.text);
  assert.equal(regen.json.shareEnabled, true);
  assert.notEqual(regen.json.shareUrl, first);
  assert.equal((await guest.get(`/${o.name}`)).status, 404, 'old cookie');
  assert.equal((await guestSave(guest, o.url, doc('late'))).status, 404, 'private again to them');
  const firstUrl = new URL(first);
  assert.equal((await guest.get(firstUrl.pathname + firstUrl.search)).status, 404, 'old link');
  const { next } = await openShareLink(guest, regen.json.shareUrl);
  assert.equal(next!.status, 200);
  assert.equal((await guestSave(guest, o.url, doc('new link'))).status, 200);

  // Disable: gone at once.
  const off = await setSharing(o.main, o.id, false);
  assert.equal(off.shareEnabled, false);
  assert.equal(off.shareUrl, undefined);
  assert.equal((await guest.get(`/${o.name}`)).status, 404);
  assert.equal((await guestSave(guest, o.url, doc('after off'))).status, 404, 'private again to them');
  assert.equal(guest.jar.get('isAdminOfCurrentResource', o.host), 'true', 'still in the jar from before…');
  await guest.get(`/${o.name}`);
  // …and a public view after revocation removes the stale edit-controls cookie.
  await o.main.post(`/_/dashboard/nodes/${o.id}/visibility`, { visibility: 'public' });
  assert.equal((await guest.get(`/${o.name}`)).status, 200);
  assert.equal(guest.jar.get('isAdminOfCurrentResource', o.host), undefined);
  // Turning it on again makes a new link: the revoked ones stay dead.
  const again = (await setSharing(o.main, o.id, true)).shareUrl!;
  assert.notEqual(again, regen.json.shareUrl);
  await o.main.post(`/_/dashboard/nodes/${o.id}/visibility`, { visibility: 'private' });
  const regenUrl = new URL(regen.json.shareUrl);
  assert.equal((await guest.get(regenUrl.pathname + regenUrl.search)).status, 404);
});

// A process keeps the document a save found at a path (src/save/at-path.ts); a refusal decided on that kept row
// is decided again on the stored one, so a guest with the new link is not refused on the old token.
test('after the link is regenerated, a guest who opened the new one saves at once', async () => {
  const o = await ownerWithDocument();
  const first = (await setSharing(o.main, o.id, true)).shareUrl!;
  const guest = kiln.client(o.host);
  await openShareLink(guest, first);
  assert.equal((await guestSave(guest, o.url, doc('old link'))).status, 200);
  const regen = await o.main.post(`/_/dashboard/nodes/${o.id}/sharing/regenerate`);
  assert.equal(regen.status, 200, regen.text);
  await openShareLink(guest, regen.json.shareUrl);
  const saved = await guestSave(guest, o.url, doc('new link'));
  assert.equal(saved.status, 200, saved.text);
  assert.equal((await o.main.on(o.host).get(`/${o.name}`)).text, doc('new link'));
});

test('a guest’s open live stream is closed by revocation (disable, then regenerate); the owner’s stream stays open', async () => {
  const o = await ownerWithDocument();
  const link = (await setSharing(o.main, o.id, true)).shareUrl!;
  const guest = kiln.client(o.host);
  await openShareLink(guest, link);

  // Without the cookie the live lane is refused.
  const refused = await liveLane(kiln.client(o.host), o.host, o.url);
  assert.notEqual(refused.status, 200);

  const ownerStream = await liveLane(o.main, o.host, o.url);
  const guestLive = await liveLane(guest, o.host, o.url);
  const guestSaved = await liveLane(guest, o.host, o.url, 'saved');
  try {
    for (const s of [ownerStream, guestLive, guestSaved]) {
      assert.equal(s.status, 200);
      await s.comment('connected');
    }
    // The guest uses the live lane: its snapshot reaches the owner.
    const relay = await guest.post(
      '/_/sync',
      { snapshot: doc('typing'), sender: 'guest-tab' },
      { headers: { 'document-url': o.url, origin: `http://${o.host}`, 'sec-fetch-site': 'same-origin' } },
    );
    assert.equal(relay.status, 200, relay.text);
    assert.equal((await ownerStream.next()).json.html, doc('typing'));
    assert.equal((await guestLive.next()).json.sender, 'guest-tab');

    await setSharing(o.main, o.id, false);
    await guestLive.end();
    await guestSaved.end();
    assert.equal(ownerStream.ended, false);
    const ownerRelay = await o.main
      .on(o.host)
      .post(
        '/_/sync',
        { snapshot: doc('still here'), sender: 'owner-tab' },
        { headers: { 'document-url': o.url, origin: `http://${o.host}`, 'sec-fetch-site': 'same-origin' } },
      );
    assert.equal(ownerRelay.status, 200);
    assert.equal((await ownerStream.next()).json.html, doc('still here'), 'the owner’s stream lives on');
    // Reconnecting is refused.
    assert.notEqual((await liveLane(guest, o.host, o.url)).status, 200);

    // Regenerating closes streams opened with the previous link too.
    const second = (await setSharing(o.main, o.id, true)).shareUrl!;
    await openShareLink(guest, second);
    const again = await liveLane(guest, o.host, o.url);
    assert.equal(again.status, 200);
    await again.comment('connected');
    const regen = await o.main.post(`/_/dashboard/nodes/${o.id}/sharing/regenerate`);
    assert.equal(regen.status, 200);
    await again.end();
    assert.equal(ownerStream.ended, false);
  } finally {
    for (const s of [ownerStream, guestLive, guestSaved]) s.close();
  }
});

test('only the owner manages sharing: strangers 401, other people 404 (a private document) or 400, folders 400, browsers get the page with the link once', async () => {
  const o = await ownerWithDocument();
  assert.equal((await kiln.client().post(`/_/dashboard/nodes/${o.id}/sharing`, { enabled: true })).status, 401);
  const otherMain = kiln.client();
  await signedIn(kiln, otherMain);
  const theirs = await otherMain.post(`/_/dashboard/nodes/${o.id}/sharing`, { enabled: true });
  assert.equal(theirs.status, 404, 'a private document answers like a missing one');
  assert.equal((await otherMain.post(`/_/dashboard/nodes/${o.id}/sharing/regenerate`)).status, 404);
  const pub = await ownerWithDocument('public');
  const notOwner = await otherMain.post(`/_/dashboard/nodes/${pub.id}/sharing`, { enabled: true });
  assert.equal(notOwner.status, 400);
  assert.equal(notOwner.json.code, 'not-owner');
  const folder = await o.main.post('/_/dashboard/nodes', { type: 'folder', name: 'box' });
  assert.equal((await o.main.post(`/_/dashboard/nodes/${folder.json.node.id}/sharing`, { enabled: true })).status, 400);
  assert.equal((await o.main.post(`/_/dashboard/nodes/${o.id}/sharing`, {})).status, 400, 'enabled is required');

  // A browser form post answers with the page showing the link once.
  const form = await o.main.post(
    `/_/dashboard/nodes/${o.id}/sharing`,
    { enabled: 'true' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(form.status, 200);
  const shown = /id="share-url" readonly value="([^"]+)"/.exec(form.text);
  assert.ok(shown, 'the link is on the page');
  assert.match(shown[1].replace(/&amp;/g, '&'), /\?token=[A-Za-z0-9_-]{43}$/);
  const off = await o.main.post(
    `/_/dashboard/nodes/${o.id}/sharing`,
    { enabled: 'false' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(off.status, 302);
  assert.match(off.headers.location!, new RegExp(`^/_/dashboard/nodes/${o.id}/sharing\\?msg=`));
});

test('regenerating is a sensitive operation: the 6th regeneration within an hour answers 429 with Retry-After, and the link in force stays the last one made', async () => {
  const o = await ownerWithDocument();
  let last = '';
  for (let i = 1; i <= 5; i++) {
    const r = await o.main.post(`/_/dashboard/nodes/${o.id}/sharing/regenerate`);
    assert.equal(r.status, 200, `regeneration ${i}: ${r.text}`);
    last = r.json.shareUrl;
  }
  const sixth = await o.main.post(`/_/dashboard/nodes/${o.id}/sharing/regenerate`);
  assert.equal(sixth.status, 429);
  assert.equal(sixth.json.code, 'rate-limited');
  assert.ok(Number(sixth.headers['retry-after']) > 0);
  const guest = kiln.client(o.host);
  const { next } = await openShareLink(guest, last);
  assert.equal(next!.status, 200, 'the refused regeneration changed nothing');
  // Turning sharing off is never limited: revoking must always be possible.
  assert.equal((await setSharing(o.main, o.id, false)).shareEnabled, false);
});

test('a share guest of a private document gets its utility stylesheet; a stranger gets empty CSS', async () => {
  const o = await ownerWithDocument('private');
  // A save with utility classes (and the link to its stylesheet) compiles the stylesheet.
  const sheet = `/tailwindcss/${o.name.replace(/\.html$/, '')}.css`;
  const html = `<!doctype html><html><head><link rel="stylesheet" href="${sheet}"></head><body class="p-4 text-red-500">styled</body></html>`;
  const saved = await guestSave(o.main.on(o.host), o.url, html);
  assert.equal(saved.status, 200, saved.text);
  await kiln.services.stylesheets.idle();
  const css = (await o.main.on(o.host).get(sheet)).text;
  assert.match(css, /text-red-500/, 'the owner gets the compiled stylesheet');
  const { shareUrl } = await setSharing(o.main, o.id, true);
  const guest = kiln.client(o.host);
  await openShareLink(guest, shareUrl!);
  assert.match((await guest.get(sheet)).text, /text-red-500/, 'the guest may read the document, so its stylesheet too');
  const stranger = await kiln.client(o.host).get(sheet);
  assert.equal(stranger.status, 200);
  assert.equal(stranger.text, '', 'a private document’s stylesheet tells a stranger nothing');
});
