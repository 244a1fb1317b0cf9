// The session handshake on every kind of host (#25): the account's own host, a team's host for its owners,
// editors and viewers, a stranger's host, a custom domain. A browser follows redirects; this follows them too,
// counting hops: it must always end (a page, or a clear refusal), never cycle between the main app and a host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import type { Client, Res } from './support/client.ts';
import { createTeam, removeMember, setMember } from '../src/teams/teams.ts';
import { createNode } from '../src/nodes/tree.ts';

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

const MAX_HOPS = 8;

/** Follows redirects the way a browser does (cookies per host), from `host` + `path`; returns the last answer and
 *  the hops it took. Throws past MAX_HOPS: that is a cycle. */
async function browse(client: Client, host: string, path: string): Promise<{ res: Res; hops: string[] }> {
  const hops: string[] = [];
  let at = new URL(`http://${host}${path}`);
  for (;;) {
    // As a browser's top-level navigation says it is one.
    const res = await client.on(at.host).page(at.pathname + at.search, { headers: { 'sec-fetch-dest': 'document' } });
    hops.push(`${res.status} ${at.host}${at.pathname}`);
    const to = res.headers.location;
    if (res.status < 300 || res.status > 399 || !to) return { res, hops };
    if (hops.length >= MAX_HOPS) throw new Error(`a redirect cycle:\n${hops.join('\n')}`);
    at = new URL(to, at);
  }
}

async function teamWithMembers() {
  const owner = kiln.client();
  const o = await signedIn(kiln, owner, { plan: 'maker' });
  const team = await createTeam(kiln.services, { username: `t${o.username}`, ownerId: o.id, plan: 'maker' });
  const people: Record<'editor' | 'viewer' | 'stranger', { client: Client; username: string; id: number }> =
    {} as never;
  for (const role of ['editor', 'viewer', 'stranger'] as const) {
    const client = kiln.client();
    const p = await signedIn(kiln, client);
    if (role !== 'stranger')
      await setMember(await actingAs(kiln.services, o.id), { teamId: team.id, username: p.username, role });
    people[role] = { client, username: p.username, id: p.id };
  }
  const doc = await createNode(await actingAs(kiln.services, o.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `${team.username}-plan.html`,
    html: '<!doctype html><html><body><h1>Team plan</h1></body></html>',
  });
  const secret = await createNode(await actingAs(kiln.services, o.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `${team.username}-secret.html`,
    html: '<!doctype html><html><body>internal</body></html>',
  });
  await kiln.services.database.db
    .updateTable('nodes')
    .set({ visibility: 'private' })
    .where('id', '=', secret.id)
    .execute();
  return { owner, o, team, people, doc, host: kiln.hostOf(team.username), plan: doc.name, secret: secret.name };
}

/** The dashboard's links: through the main app's handshake to a page of the host. */
const viaMain = (host: string, path: string) =>
  `/_/session/start?host=${encodeURIComponent(host.replace(/:\d+$/, ''))}&return=${encodeURIComponent(path)}`;

test('a team’s owners and editors open, edit and save its documents on its host, as their own', async () => {
  const { owner, people, host, plan } = await teamWithMembers();
  for (const [who, client] of [
    ['owner', owner],
    ['editor', people.editor.client],
  ] as const) {
    const page = await browse(client, kiln.config.rootDomain, viaMain(host, `/${plan}`));
    assert.equal(page.res.status, 200, `${who}: ${page.hops.join(' → ')}`);
    assert.ok(page.hops.length <= 3, `${who}: ${page.hops.join(' → ')}`);
    assert.match(page.res.text, /kiln-toolbar/, `${who} gets the edit toolbar`);
    assert.match(String(page.res.headers['set-cookie']), /isAdminOfCurrentResource=true/);
    for (const path of [`/_/edit?path=${plan}`, `/_/versions?path=${plan}`]) {
      const r = await browse(client, host, path);
      assert.equal(r.res.status, 200, `${who} ${path}: ${r.hops.join(' → ')}`);
    }
    const doc = client.on(host);
    const save = await doc.post('/_/save', `<!doctype html><html><body><h1>Saved by the ${who}</h1></body></html>`, {
      headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/${plan}`, origin: `http://${host}` },
    });
    assert.equal(save.status, 200, save.text);
    assert.match((await kiln.client(host).get(`/${plan}`)).text, new RegExp(`Saved by the ${who}`));
  }
});

test('a team’s viewers read its private documents without edit controls and change nothing', async () => {
  const { people, host, plan, secret } = await teamWithMembers();
  const viewer = people.viewer.client;
  const page = await browse(viewer, kiln.config.rootDomain, viaMain(host, `/${secret}`));
  assert.equal(page.res.status, 200, page.hops.join(' → '));
  assert.equal(page.res.text.includes('kiln-toolbar'), false);
  assert.equal(String(page.res.headers['set-cookie'] ?? '').includes('isAdminOfCurrentResource=true'), false);
  const edit = await browse(viewer, host, `/_/edit?path=${plan}`);
  assert.equal(edit.res.status, 403, edit.hops.join(' → '));
  const save = await viewer.on(host).post('/_/save', '<!doctype html><html><body>x</body></html>', {
    headers: { 'content-type': 'text/plain', 'document-url': `http://${host}/${plan}`, origin: `http://${host}` },
  });
  assert.equal(save.status, 403);
  assert.equal(save.json.code, 'viewer');
});

test('someone the host does not grant gets the page as a visitor, or a clear refusal: never a cycle', async () => {
  const { people, host, o, plan, secret } = await teamWithMembers();
  const stranger = people.stranger.client;
  const visit = await browse(stranger, kiln.config.rootDomain, viaMain(host, `/${plan}`));
  assert.equal(visit.res.status, 200, visit.hops.join(' → '));
  assert.equal(visit.res.text.includes('kiln-toolbar'), false);
  const hidden = await browse(stranger, host, `/${secret}`);
  assert.equal(hidden.res.status, 404);
  for (const path of [`/_/edit?path=${plan}`, `/_/versions?path=${plan}`]) {
    const r = await browse(stranger, host, path);
    assert.equal(r.res.status, 403, `${path}: ${r.hops.join(' → ')}`);
    assert.match(r.res.text, /signed in as/i);
  }
  // Someone else's own host, the same.
  const own = await createNode(await actingAs(kiln.services, o.id), {
    ownerId: o.id,
    parentId: 0,
    type: 'site',
    name: `${o.username}-own.html`,
    html: '<!doctype html><html><body>own</body></html>',
  });
  const theirs = await browse(stranger, kiln.hostOf(o.username), `/_/edit?path=${own.name}`);
  assert.equal(theirs.res.status, 403, theirs.hops.join(' → '));
  // Nobody signed in: the sign-in page, after which the handshake ends as above.
  const nobody = await browse(kiln.client(), host, `/_/edit?path=${plan}`);
  assert.equal(nobody.res.status, 200, nobody.hops.join(' → '));
  assert.match(nobody.res.text, /Sign in/);
});

test('one’s own host and a custom domain: the owner gets a session there through the handshake', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main, { plan: 'maker' });
  await createNode(await actingAs(kiln.services, me.id), {
    ownerId: me.id,
    parentId: 0,
    type: 'site',
    name: 'mine.html',
    html: '<!doctype html><html><body>mine</body></html>',
  });
  const own = await browse(main, kiln.config.rootDomain, viaMain(kiln.hostOf(me.username), '/_/edit?path=mine.html'));
  assert.equal(own.res.status, 200, own.hops.join(' → '));
  const domain = `${me.username}-docs.example`;
  await kiln.services.database.db
    .insertInto('domains')
    .values({
      account_id: me.id,
      domain,
      status: 'active',
      ssl_status: null,
      provider_id: null,
      dns_instructions: '',
      created_at: new Date().toISOString(),
    })
    .execute();
  const port = new URL(kiln.url).port;
  const onDomain = await browse(main, kiln.config.rootDomain, viaMain(`${domain}:${port}`, '/_/edit?path=mine.html'));
  assert.equal(onDomain.res.status, 200, onDomain.hops.join(' → '));
});

test('a member removed from the team loses the host at once: the next request is a visitor’s', async () => {
  const { o, team, people, host, secret } = await teamWithMembers();
  const editor = people.editor.client;
  assert.equal((await browse(editor, kiln.config.rootDomain, viaMain(host, `/${secret}`))).res.status, 200);
  await removeMember(await actingAs(kiln.services, o.id), { teamId: team.id, personId: people.editor.id });
  assert.equal((await editor.on(host).get(`/${secret}`)).status, 404);
});
