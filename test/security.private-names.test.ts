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
