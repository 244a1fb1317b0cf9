// No page Kiln renders itself may be framed, on any host (issue #22, finding 2): sibling hosts are
// same-site, so an owner's host session rides along into a frame on a neighbour's page, where one
// click would restore a version or save in the upload editor. Every such page on a document host
// answers `frame-ancestors 'none'` and `X-Frame-Options: DENY`, like the main app's; the account's own
// documents and uploads keep their owner's choice. (The click itself, in Chromium: browser.security.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import type { Res } from './support/client.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const DOC = '<!DOCTYPE html><html><body><p>one</p></body></html>';

function refusesFraming(r: Res, what: string) {
  assert.match(String(r.headers['content-security-policy']), /frame-ancestors 'none'/, `${what}: CSP`);
  assert.equal(r.headers['x-frame-options'], 'DENY', `${what}: X-Frame-Options`);
}

test('every page Kiln renders on a document host refuses framing; the owner’s documents and uploads do not', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.hostOf(me.username);
  const owner = main.on(host);
  const visitor = kiln.client(host);
  // Before the home page exists, its owner gets Kiln's "no home page" page.
  refusesFraming(await owner.page('/'), 'no home page');
  const made = await main.post('/_/dashboard/nodes', { type: 'site', name: 'index.html', html: DOC });
  assert.equal(made.status, 201, made.text);
  const saved = await owner.post('/_/save', DOC.replace('one', 'two'), {
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${host}/` },
  });
  assert.equal(saved.status, 200, saved.text);
  const up = await owner.post(
    '/_/upload',
    { fileName: 'notes.md', fileBody: Buffer.from('# notes').toString('base64') },
    { headers: { 'page-url': `http://${host}/` } },
  );
  assert.equal(up.status, 200, up.text);
  const versions = (await owner.get('/_/versions?path=index.html', { headers: { accept: 'application/json' } })).json
    .versions as Array<{ id: number }>;
  assert.ok(versions.length >= 2);
  const first = versions.at(-1)!.id;

  const pages: Array<[string, () => Promise<Res>]> = [
    ['versions', () => owner.page('/_/versions?path=index.html')],
    ['version', () => owner.page(`/_/version/${first}`)],
    ['diff', () => owner.page(`/_/version/${first}/diff`)],
    ['restore', () => owner.page(`/_/restore/${first}`)],
    ['editor', () => owner.page('/_/edit?path=index.html')],
    ['upload editor', () => owner.page(`/_/edit/uploads/${me.username}/notes.md`)],
    ['sign-out page', () => owner.page('/_/logout')],
    ['error page', () => visitor.page('/_/no-such-page')],
    ['visitor’s editor', () => visitor.page('/_/edit?path=index.html')],
    ['meta', () => owner.get('/_/meta', { headers: { 'document-url': `http://${host}/` } })],
  ];
  for (const [what, ask] of pages) {
    const r = await ask();
    assert.ok(r.status < 500, `${what}: ${r.status}`);
    refusesFraming(r, what);
  }
  // A state change is a POST from this host's own pages: a neighbour's page (same site, other origin)
  // is refused, and asking for the restore page changes nothing.
  const neighbour = `http://neighbour-${me.username}.${kiln.config.rootDomain}`;
  for (const headers of [{ origin: neighbour }, { 'sec-fetch-site': 'same-site' }] as Record<string, string>[]) {
    const r = await owner.post(`/_/restore/${first}`, '', { headers: { ...headers, accept: 'application/json' } });
    assert.equal(r.status, 403, JSON.stringify(headers));
    assert.equal(r.json.code, 'cross-origin');
  }
  assert.equal((await visitor.get('/')).text, DOC.replace('one', 'two'), 'nothing was restored');

  // The account's own content: as stored, framing left to its owner.
  for (const [what, r] of [
    ['document (visitor)', await visitor.get('/')],
    ['upload', await visitor.get('/notes.md')],
  ] as const) {
    assert.equal(r.status, 200, what);
    assert.equal(r.headers['x-frame-options'], undefined, `${what}: no X-Frame-Options`);
    assert.doesNotMatch(String(r.headers['content-security-policy'] ?? ''), /frame-ancestors/, what);
  }
  // The owner's own answer (edit cookie, toolbar) renders only under the owner's own pages (issue #43;
  // security.framed-documents): a neighbour's frame gets the visitor's answer.
  const mine = await owner.page('/');
  assert.equal(mine.status, 200);
  assert.equal(mine.headers['x-frame-options'], 'SAMEORIGIN');
  assert.match(String(mine.headers['content-security-policy']), /frame-ancestors 'self'/);
});
