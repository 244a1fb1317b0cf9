// Connecting an agent by URL (OAuth 2.1) over HTTP, with the official MCP SDK's own OAuth client (`auth()`):
// the metadata (RFC 9728, RFC 8414), dynamic registration, PKCE (S256 only), Kiln's consent page (sign in first;
// account or team, folder, read-only or read-write; deny), the code exchange, tokens bound to `<root>/_/mcp`,
// hashes only in the database, the token as the caller on a door that takes keys (the sync API: read-only
// refused writing, the folder respected), refresh with rotation (a replayed refresh token ends the grant),
// revocation by the client and from the account page, a suspended account, and the sweep.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { auth } from '@modelcontextprotocol/client';
import { movableClock, startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder, type SyncApi } from './support/sync-client.ts';
import { sessionsFor, storeSessions } from './support/people.ts';
import { connectAgent, consent, kilnFetch, mcpUrl, REDIRECT_URI, TestOAuthClient } from './support/oauth.ts';
import type { Client } from './support/client.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { sweepOAuth } from '../src/oauth/grants.ts';
import { wwwAuthenticate } from '../src/oauth/token.ts';

const time = movableClock();
let kiln: TestKiln;
before(async () => (kiln = await startKiln({ clock: time.clock })));
after(() => kiln.stop());

/** A person with a paid plan, their documents (`top.html`, `notes/a.html`), and a browser signed in as them. */
async function personWithDocuments(over: Parameters<typeof keyHolder>[1] = {}) {
  const { person, api } = await keyHolder(kiln, over);
  const notes = await api.create({ type: 'folder', name: 'notes', parentId: 0 });
  const inside = await api.create({ type: 'site', name: 'a.html', parentId: notes.id, content: '<html><body>A</body></html>' });
  const outside = await api.create({ type: 'site', name: 'top.html', parentId: 0, content: '<html><body>T</body></html>' });
  const browser = kiln.client();
  storeSessions(browser.jar, kiln.config, await sessionsFor(kiln.services.database.db, kiln.config, person.id, person.username));
  return { person, api, browser, inside, outside, notes };
}

/** A sync API request with an OAuth access token. */
function withToken(token: string, method: string, path: string, body?: unknown) {
  return kiln.client().request(method, path, {
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body as object | undefined,
  });
}

test('the metadata: protected resource (RFC 9728) for /_/mcp, authorization server (RFC 8414) with S256 only, registration, revocation and client ID metadata documents', async () => {
  const c = kiln.client();
  const root = kiln.config.baseUrl;
  for (const path of ['/.well-known/oauth-protected-resource/_/mcp', '/.well-known/oauth-protected-resource']) {
    const prm = await c.get(path);
    assert.equal(prm.status, 200, prm.text);
    assert.equal(prm.json.resource, `${root}/_/mcp`);
    assert.deepEqual(prm.json.authorization_servers, [root]);
    assert.deepEqual(prm.json.bearer_methods_supported, ['header']);
    assert.equal(prm.headers['access-control-allow-origin'], '*');
  }
  const as = await c.get('/.well-known/oauth-authorization-server');
  assert.equal(as.status, 200, as.text);
  const m = as.json;
  assert.equal(m.issuer, root);
  assert.equal(m.authorization_endpoint, `${root}/_/oauth/auth`);
  assert.equal(m.token_endpoint, `${root}/_/oauth/token`);
  assert.equal(m.registration_endpoint, `${root}/_/oauth/reg`);
  assert.equal(m.revocation_endpoint, `${root}/_/oauth/token/revocation`);
  assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
  assert.deepEqual(m.response_types_supported, ['code']);
  assert.ok(m.grant_types_supported.includes('refresh_token'));
  assert.equal(m.client_id_metadata_document_supported, true);
  assert.equal(m.authorization_response_iss_parameter_supported, true);
  // The same document where OpenID clients look.
  assert.equal((await c.get('/.well-known/openid-configuration')).json.issuer, root);
  // Not on a document host.
  const { person } = await keyHolder(kiln);
  assert.equal((await kiln.client(kiln.hostOf(person.username)).get('/.well-known/oauth-authorization-server')).status, 404);
  // What the MCP door answers a 401 with.
  assert.equal(wwwAuthenticate(root), `Bearer resource_metadata="${root}/.well-known/oauth-protected-resource/_/mcp"`);
});

test('an MCP client connects with the SDK: registration, PKCE, the consent page, a read-only token for one folder, used on the sync API', async () => {
  const { person, browser, inside, outside } = await personWithDocuments();
  const { client, page } = await connectAgent(kiln, browser, { folder: 'notes', access: 'read' }, 'Claude Test');
  assert.match(page.text, /Claude Test/);
  assert.ok(page.text.includes(REDIRECT_URI), 'the consent page shows where the person goes back to');
  const token = client.saved!.access_token;
  assert.equal(client.saved!.token_type, 'Bearer');
  assert.ok(client.saved!.refresh_token);
  // The token acts as the person on a door that takes keys.
  const status = await withToken(token, 'GET', '/_/sync/status');
  assert.equal(status.status, 200, status.text);
  assert.equal(status.json.username, person.username);
  // Inside its folder: read. Outside: not there at all. Writing: refused, read-only.
  assert.equal((await withToken(token, 'GET', `/_/sync/nodes/${inside.id}/content`)).status, 200);
  assert.equal((await withToken(token, 'GET', `/_/sync/nodes/${outside.id}/content`)).status, 404);
  const write = await withToken(token, 'PUT', `/_/sync/nodes/${inside.id}/content`, { content: '<html>x</html>' });
  assert.equal(write.status, 403, write.text);
  assert.equal(write.json.code, 'read-only-key');
  // Only hashes in the database: neither token appears in any stored row.
  const rows = await kiln.services.database.db.selectFrom('oauth_objects').selectAll().execute();
  const stored = JSON.stringify(rows);
  assert.ok(!stored.includes(token));
  assert.ok(!stored.includes(client.saved!.refresh_token!));
  // A token that is not one.
  const bogus = await withToken('x'.repeat(43), 'GET', '/_/sync/status');
  assert.equal(bogus.status, 401);
  assert.equal(bogus.json.code, 'invalid-oauth-token');
});
