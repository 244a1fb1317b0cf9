// A private document's name answers exactly like a missing one (same status, same body) to anyone but
// its owner, on every route of its host that takes a document name: so no route tells the two apart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import type { Client, Res } from './support/client.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const DOC = '<!DOCTYPE html><html><body><p>secret</p></body></html>';
const HOME = '<!DOCTYPE html><html><body><h1>home</h1></body></html>';

/** Every way a visitor can ask a host about a document `name`. */
function probes(c: Client, host: string, name: string): Array<[string, () => Promise<Res>]> {
  const url = `http://${host}/${name}`;
  const write = { 'content-type': 'text/plain;charset=UTF-8', 'document-url': url };
  return [
    ['GET page', () => c.get(`/${name}`)],
    ['HEAD page', () => c.request('HEAD', `/${name}`)],
    ['browser page', () => c.page(`/${name}`)],
    ['save', () => c.post('/_/save', DOC, { headers: write })],
    ['editor', () => c.get(`/_/edit?path=${name}`)],
    ['versions', () => c.get(`/_/versions?path=${name}`)],
    ['saved lane', () => c.get(`/_/sync?document-url=${encodeURIComponent(url)}&lane=saved`)],
    ['live lane', () => c.get(`/_/sync?document-url=${encodeURIComponent(url)}&lane=live`)],
    ['relay', () => c.post('/_/sync', { snapshot: DOC, sender: 's' }, { headers: { 'document-url': url } })],
    ['upload', () => c.post('/_/upload', { fileName: 'a.txt', fileBody: 'aGk=' }, { headers: { 'page-url': url } })],
    ['meta', () => c.get('/_/meta', { headers: { 'document-url': url } })],
    ['data api', () => c.get(`/_/api/${name}`)],
    ['data query', () => c.get(`/${name}?data=${encodeURIComponent('{"p":"p"}')}`)],
    ['stylesheet', () => c.get(`/tailwindcss/${name.replace(/\.html$/, '.css')}`)],
  ];
}

test('a private name and a missing name answer alike to visitors and to people signed in elsewhere', async () => {
  const owner = kiln.client();
  const me = await signedIn(kiln, owner);
  const created = await owner.post('/_/dashboard/nodes', {
    type: 'site',
    name: `hidden-${me.username}.html`,
    html: DOC,
  });
  assert.equal(created.status, 201, created.text);
  const vis = await owner.post(`/_/dashboard/nodes/${created.json.node.id}/visibility`, { visibility: 'private' });
  assert.equal(vis.status, 200);
  const host = kiln.hostOf(me.username);
  const other = kiln.client();
  await signedIn(kiln, other);
  for (const c of [kiln.client(host), other.on(host)]) {
    const hidden = probes(c, host, `hidden-${me.username}.html`);
    const missing = probes(c, host, `absent-${me.username}.html`);
    for (let i = 0; i < hidden.length; i++) {
      const [what, ask] = hidden[i];
      const a = await ask();
      const b = await missing[i][1]();
      assert.equal(a.status, b.status, `${what}: status`);
      assert.equal(a.text.replaceAll('hidden-', 'absent-'), b.text, `${what}: body`);
      assert.doesNotMatch(a.text, /secret/, `${what}: nothing of the document`);
    }
  }
  // The owner, on the owner's host, sees it.
  assert.equal((await owner.on(host).get(`/hidden-${me.username}.html`)).text, DOC);
});

test('with a home page too: a private document or upload answers exactly as a missing one (the fallback, its headers)', async () => {
  const owner = kiln.client();
  const me = await signedIn(kiln, owner, { plan: 'maker' });
  const home = await owner.post('/_/dashboard/nodes', { type: 'site', name: 'index.html', html: HOME });
  assert.equal(home.status, 201, home.text);
  const made = await owner.post('/_/dashboard/nodes', { type: 'site', name: `private-${me.username}.html`, html: DOC });
  await owner.post(`/_/dashboard/nodes/${made.json.node.id}/visibility`, { visibility: 'private' });
  const host = kiln.hostOf(me.username);
  const up = await owner
    .on(host)
    .post(
      '/_/upload',
      { fileName: 'notes.txt', fileBody: Buffer.from('secret notes').toString('base64') },
      { headers: { 'page-url': `http://${host}/` } },
    );
  assert.equal(up.status, 200, up.text);
  const nodes = (await owner.get('/_/dashboard/nodes', { headers: { accept: 'application/json' } })).json
    .nodes as Array<{
    id: number;
    name: string;
  }>;
  const notes = nodes.find((n) => n.name === 'notes.txt')!;
  assert.equal((await owner.post(`/_/dashboard/nodes/${notes.id}/visibility`, { visibility: 'private' })).status, 200);
  const other = kiln.client();
  await signedIn(kiln, other);
  const asks = (c: Client, path: string): Array<[string, () => Promise<Res>]> => [
    ['GET', () => c.get(path)],
    ['HEAD', () => c.request('HEAD', path)],
    ['browser page', () => c.page(path)],
    ['script fetch', () => c.get(path, { headers: { 'sec-fetch-dest': 'empty' } })],
    ['image', () => c.get(path, { headers: { 'sec-fetch-dest': 'image' } })],
    ['range', () => c.get(path, { headers: { range: 'bytes=0-3' } })],
    ['spa route', () => c.get(`${path}/deeper/route`)],
  ];
  const volatile = new Set(['date', 'connection', 'keep-alive']);
  const headers = (r: Res) => Object.entries(r.headers).filter(([k]) => !volatile.has(k));
  for (const c of [kiln.client(host), other.on(host)]) {
    for (const [hidden, missing] of [
      [`/private-${me.username}.html`, `/absent-${me.username}.html`],
      ['/notes.txt', '/absent.txt'],
    ]) {
      const a = asks(c, hidden);
      const b = asks(c, missing);
      for (let i = 0; i < a.length; i++) {
        const cookies = c.jar.cookies.map((k) => ({ ...k }));
        const x = await a[i][1]();
        c.jar.cookies = cookies;
        const y = await b[i][1]();
        const what = `${hidden} ${a[i][0]}`;
        assert.equal(x.status, y.status, `${what}: status`);
        assert.equal(x.text, y.text, `${what}: body`);
        assert.deepEqual(headers(x), headers(y), `${what}: headers`);
        assert.doesNotMatch(x.text, /secret/, `${what}: nothing of it`);
      }
    }
  }
  // The fallback is the home page, and the owner still gets the private ones.
  assert.match((await kiln.client(host).get(`/private-${me.username}.html`)).text, /home/);
  assert.equal((await owner.on(host).get(`/private-${me.username}.html`)).text, DOC);
  assert.equal((await owner.on(host).get('/notes.txt')).text, 'secret notes');
});
