// `?msg=` banners show only messages Kiln itself issued (src/http/messages.ts): a redirect's message
// carries `sig`, an HMAC with the instance secret over the page's path, type and text. A crafted
// `?msg=`, a forged or altered signature, or a signed message moved to another page shows nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { withMessage } from '../src/http/messages.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const LURE = 'Your account is locked, call +1 555 0100';
const crafted = (path: string, sep = '?') => `${path}${sep}msg=${encodeURIComponent(LURE)}&msgType=error`;
const BANNER = /class="msg (error|success)"/;

test('a crafted ?msg= (unsigned, or with a made-up sig) is not shown on the login page, the dashboard or an app page', async () => {
  const main = kiln.client();
  const owner = await signedIn(kiln, main);
  for (const path of [crafted('/_/login'), `${crafted('/_/login')}&sig=AAAAAAAAAAAAAAAAAAAAAA`, crafted('/_/signup')]) {
    const res = await kiln.client().page(path);
    assert.equal(res.status, 200, path);
    assert.doesNotMatch(res.text, BANNER, path);
    assert.ok(!res.text.includes('555 0100'), path);
  }

  for (const path of ['/_/dashboard', '/_/dashboard/keys', '/_/dashboard/teams', '/_/dashboard/domains']) {
    const res = await main.page(crafted(path));
    assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
    assert.ok(!res.text.includes('555 0100'), path);
  }

  const name = `msg-app-${owner.username}.html`;
  const created = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name, html: '<!doctype html><html><body>app</body></html>' },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(created.status, 201, created.text);
  const on = await main.post(
    `/_/dashboard/nodes/${created.json.node.id}/app`,
    { enableSignups: true },
    { headers: { 'x-requested-with': 'fetch' } },
  );
  assert.equal(on.status, 200, on.text);
  const host = kiln.hostOf(owner.username);
  for (const page of ['login', 'signup', 'reset']) {
    const res = await kiln.client(host).page(crafted(`/_/app/${page}?app=${encodeURIComponent(name)}`, '&'));
    assert.equal(res.status, 200, `${page}: ${res.text.slice(0, 200)}`);
    assert.doesNotMatch(res.text, BANNER, page);
    assert.ok(!res.text.includes('555 0100'), page);
    // The same page shows a message Kiln signed for it.
    const signed = await kiln
      .client(host)
      .page(
        withMessage(
          kiln.services.secret,
          `/_/app/${page}?app=${encodeURIComponent(name)}`,
          'Signed for this page.',
          'success',
        ),
      );
    assert.match(signed.text, /class="msg success"[^>]*>Signed for this page\.</, page);
  }
});

test('a failed sign-in redirects back to /_/login with a signed message, which the page shows', async () => {
  const client = kiln.client();
  const res = await client.post(
    '/_/login',
    { email: 'nobody@example.com', password: 'wrong-password-1' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(res.status, 302, res.text);
  const location = String(res.headers.location);
  assert.match(location, /^\/_\/login\?msg=.*&msgType=error&sig=[A-Za-z0-9_-]{22}/);
  const page = await client.page(location);
  assert.equal(page.status, 200);
  const shown = /class="msg error"[^>]*>([^<]+)</.exec(page.text);
  assert.ok(shown, page.text.slice(0, 500));
  assert.equal(shown[1], new URL(location, 'http://x').searchParams.get('msg'));
});

test('a signed message moved to another page, or with its type or text changed, is not shown', async () => {
  const main = kiln.client();
  await signedIn(kiln, main);
  const location = withMessage(kiln.services.secret, '/_/dashboard/keys', 'Revoked the key hcsk_1234567…', 'success');
  const query = new URL(location, 'http://x').searchParams;
  const shownOn = async (path: string, q: URLSearchParams) => (await main.page(`${path}?${q}`)).text;

  assert.match(await shownOn('/_/dashboard/keys', query), /class="msg success"[^>]*>Revoked the key/);
  for (const other of ['/_/dashboard/teams', '/_/dashboard', '/_/login']) {
    assert.doesNotMatch(await shownOn(other, query), BANNER, other);
  }
  const asError = new URLSearchParams(query);
  asError.set('msgType', 'error');
  assert.doesNotMatch(await shownOn('/_/dashboard/keys', asError), BANNER);
  const otherText = new URLSearchParams(query);
  otherText.set('msg', LURE);
  assert.doesNotMatch(await shownOn('/_/dashboard/keys', otherText), BANNER);
});
