// Connecting an agent by URL (OAuth 2.1) over HTTP, with the official MCP SDK's own OAuth client (`auth()`):
// the metadata (RFC 9728, RFC 8414), dynamic registration, PKCE (S256 only), Kiln's consent page (sign in first;
// account or team, folder, read-only or read-write; deny), the code exchange, tokens bound to `<root>/_/mcp`,
// hashes only in the database, the token as the caller at the MCP door and nowhere else (read-only refused
// writing, the folder respected; the sync API answers it 401), refresh with rotation (a replayed refresh token ends
// the grant), revocation by the client and from the account page, a suspended account, and the sweeps.
import { actingAs } from './support/people.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  auth,
  Client as McpClient,
  extractWWWAuthenticateParams,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { movableClock, startKiln, storage, type TestKiln } from './support/kiln.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from './support/client.ts';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { keyHolder } from './support/sync-client.ts';
import { sessionsFor, storeSessions } from './support/people.ts';
import { connectAgent, kilnFetch, mcpUrl, REDIRECT_URI, TestOAuthClient } from './support/oauth.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { oauthClientNameOf, sweepOAuth } from '../src/oauth/grants.ts';
import { wwwAuthenticate } from '../src/oauth/token.ts';

const time = movableClock();
let kiln: TestKiln;
before(async () => (kiln = await startKiln({ clock: time.clock })));
after(() => kiln.stop());

/** A person with a paid plan, their documents (`top-…`, `notes/a-…`), and a browser signed in as them. */
async function personWithDocuments(over: Parameters<typeof keyHolder>[1] = {}) {
  const { person, api } = await keyHolder(kiln, over);
  const notes = await api.create({ type: 'folder', name: 'notes', parentId: 0 });
  // Document names are unique across a Kiln.
  const html = '<html><body>A</body></html>';
  const inside = await api.create({
    type: 'site',
    name: `a-${person.username}.html`,
    parentId: notes.id,
    content: html,
  });
  const outside = await api.create({ type: 'site', name: `top-${person.username}.html`, parentId: 0, content: html });
  const browser = kiln.client();
  storeSessions(
    browser.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, person.id, person.username),
  );
  return { person, api, browser, inside, outside, notes };
}

/** A request to another door with an OAuth access token. */
function withToken(token: string, method: string, path: string, body?: unknown) {
  return kiln.client().request(method, path, {
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body as object | undefined,
  });
}

/** One tool call at the MCP door with an OAuth access token, as a client sends it after its handshake (2025-11-25;
 *  the door keeps nothing between requests): a refusal's status and code (the door's 401 or 403, or the tool's),
 *  or 200 and the tool's structured answer. */
async function asAgent(token: string, name: string, args: Record<string, unknown> = {}, from = kiln.client()) {
  const res = await from.post(
    '/_/mcp',
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
    },
  );
  if (res.status !== 200) return { status: res.status, code: res.json?.code as string, text: res.text, out: null };
  const r = res.json.result;
  if (r.isError) {
    const { status, code } = r.structuredContent.error;
    return { status: status as number, code: code as string, text: res.text, out: null };
  }
  return { status: 200, code: null, text: res.text, out: r.structuredContent };
}

/** The agent reads a document (a path of its person's tree). */
const reads = (token: string, path: string, k = kiln) => asAgent(token, 'read_document', { path }, k.client());

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
  assert.equal(
    (await kiln.client(kiln.hostOf(person.username)).get('/.well-known/oauth-authorization-server')).status,
    404,
  );
  // What the MCP door answers a 401 with, as the SDK reads it (its sign-in starts there: connectAgent does).
  assert.equal(wwwAuthenticate(root), `Bearer resource_metadata="${root}/.well-known/oauth-protected-resource/_/mcp"`);
  const challenge = new Response(null, {
    status: 401,
    headers: { 'www-authenticate': wwwAuthenticate(root, { error: 'invalid_token', description: 'It "expired".' }) },
  });
  const read = extractWWWAuthenticateParams(challenge);
  assert.equal(read.resourceMetadataUrl?.href, `${root}/.well-known/oauth-protected-resource/_/mcp`);
  assert.equal(read.error, 'invalid_token');
  assert.equal(read.errorDescription, 'It expired.');
});

test('an MCP client connects with the SDK: registration, PKCE, the consent page, a read-only token for one folder, at the MCP door only', async () => {
  const { person, browser, inside, outside } = await personWithDocuments();
  const { client, page } = await connectAgent(kiln, browser, { folder: 'notes', access: 'read' }, 'Claude Test');
  assert.match(page.text, /Claude Test/);
  assert.ok(page.text.includes(REDIRECT_URI), 'the consent page shows where the person goes back to');
  const token = client.saved!.access_token;
  assert.equal(client.saved!.token_type, 'Bearer');
  assert.ok(client.saved!.refresh_token);
  // The token acts as the person at the MCP door.
  const listed = await asAgent(token, 'list_documents');
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.out.accounts[0].account, person.username);
  // Inside its folder: read. Outside: not there at all. Writing: refused, read-only.
  assert.equal((await reads(token, `notes/${inside.name}`)).status, 200);
  assert.equal((await reads(token, outside.name)).status, 404);
  const write = await asAgent(token, 'edit_document', {
    path: `notes/${inside.name}`,
    edits: [{ op: 'replaceText', find: 'A', replace: 'x' }],
  });
  assert.deepEqual([write.status, write.code], [403, 'read-only-key'], write.text);
  // Bound to /_/mcp, it acts nowhere else: not on the sync API (whatever its person may do there), nor on a team's.
  for (const [method, path] of [
    ['GET', '/_/sync/nodes'],
    ['GET', '/_/sync/status'],
    ['GET', `/_/sync/nodes/${inside.id}/content`],
    ['PUT', `/_/sync/nodes/${inside.id}/content`],
  ]) {
    const elsewhere = await withToken(
      token,
      method,
      path,
      method === 'PUT' ? { content: '<html>x</html>' } : undefined,
    );
    assert.deepEqual([elsewhere.status, elsewhere.json?.code], [401, 'invalid-oauth-token'], `${method} ${path}`);
    assert.match(elsewhere.json.msg, /only on \/_\/mcp/);
  }
  const host = kiln.hostOf(person.username);
  const bus = await kiln
    .client(host)
    .post(
      '/_/bus/send',
      { channel: 'ai-edit', type: 'ai-edit/request', v: 1, payload: { id: 'r1' }, sender: 'page-abc123' },
      { headers: { authorization: `Bearer ${token}`, 'page-url': `http://${host}/index.html` } },
    );
  assert.deepEqual([bus.status, bus.json?.code], [401, 'invalid-oauth-token'], bus.text);
  // Only hashes in the database: neither token appears in any stored row.
  const rows = await kiln.services.database.db.selectFrom('oauth_objects').selectAll().execute();
  const stored = JSON.stringify(rows);
  assert.ok(!stored.includes(token));
  assert.ok(!stored.includes(client.saved!.refresh_token!));
  // A token that is not one.
  const bogus = await asAgent('x'.repeat(43), 'list_documents');
  assert.deepEqual([bogus.status, bogus.code], [401, 'invalid-oauth-token']);
});

/** A token request straight to the token endpoint (what a client sends to refresh). */
async function tokenRequest(client: TestOAuthClient, form: Record<string, string>) {
  return kiln.client().post('/_/oauth/token', { client_id: client.clientInfo!.client_id, ...form }, { form: true });
}

test('refresh tokens rotate on use; a replayed one ends the grant (every token of it refused); the SDK refreshes', async () => {
  const { browser, inside } = await personWithDocuments();
  const { client, fetchFn } = await connectAgent(kiln, browser, {});
  const first = client.saved!;
  // The SDK refreshes (it holds a refresh token): new access and refresh tokens.
  assert.equal(await auth(client, { serverUrl: mcpUrl(kiln), fetchFn }), 'AUTHORIZED');
  const second = client.saved!;
  assert.notEqual(second.access_token, first.access_token);
  assert.notEqual(second.refresh_token, first.refresh_token);
  assert.equal((await reads(second.access_token, `notes/${inside.name}`)).status, 200);
  // The old refresh token again: refused, and the whole grant ends (a stolen copy was used, or this one is).
  const replay = await tokenRequest(client, { grant_type: 'refresh_token', refresh_token: first.refresh_token! });
  assert.equal(replay.status, 400, replay.text);
  assert.equal(replay.json.error, 'invalid_grant');
  const after = await reads(second.access_token, `notes/${inside.name}`);
  assert.deepEqual([after.status, after.code], [401, 'invalid-oauth-token'], after.text);
  const again = await tokenRequest(client, { grant_type: 'refresh_token', refresh_token: second.refresh_token! });
  assert.equal(again.json.error, 'invalid_grant');
  // Kiln's grant is revoked too: the account page no longer lists it.
  const page = await browser.get('/_/account');
  assert.deepEqual(page.json.connected, []);
});

test('the client revokes a token (RFC 7009): every token of its grant is refused at the next call, refreshing fails, the agent is no longer listed; another client cannot revoke it', async () => {
  const { browser, inside } = await personWithDocuments();
  const revocation = (client: TestOAuthClient, token: string) =>
    kiln.client().post('/_/oauth/token/revocation', { token, client_id: client.clientInfo!.client_id }, { form: true });
  for (const which of ['access_token', 'refresh_token'] as const) {
    const { client } = await connectAgent(kiln, browser, {});
    const { access_token, refresh_token } = client.saved!;
    // Another registered client's revocation of it does nothing.
    const { client: other } = await connectAgent(kiln, browser, {});
    assert.equal((await revocation(other, client.saved![which]!)).status, 200);
    assert.equal((await reads(access_token, `notes/${inside.name}`)).status, 200);
    assert.equal((await revocation(client, client.saved![which]!)).status, 200);
    const res = await reads(access_token, `notes/${inside.name}`);
    assert.deepEqual([res.status, res.code], [401, 'invalid-oauth-token'], res.text);
    const refreshed = await tokenRequest(client, { grant_type: 'refresh_token', refresh_token: refresh_token! });
    assert.equal(refreshed.json.error, 'invalid_grant', which);
    const agents = (await browser.get('/_/account')).json.connected;
    assert.equal(agents.length, 1, which);
    const revoked = await browser.post(`/_/account/agents/${agents[0].id}/revoke`, {});
    assert.equal(revoked.status, 200);
  }
});

test('the account page lists connected agents (client, scope, connected, last used); Revoke stops the agent at its next call and its refresh', async () => {
  const { browser, inside, person } = await personWithDocuments();
  const { client } = await connectAgent(kiln, browser, { folder: 'notes', access: 'write' }, 'Cursor Test');
  assert.equal((await reads(client.saved!.access_token, `notes/${inside.name}`)).status, 200);
  const listed = await browser.get('/_/account');
  assert.equal(listed.json.connected.length, 1);
  const agent = listed.json.connected[0];
  assert.equal(agent.client, 'Cursor Test');
  assert.equal(agent.folder, 'notes');
  assert.equal(agent.readOnly, false);
  assert.deepEqual(agent.account, { username: person.username, kind: 'personal' });
  assert.ok(agent.lastUsedAt, 'last used is recorded');
  const html = await browser.page('/_/account');
  assert.match(html.text, /Connected agents/);
  assert.match(html.text, /Cursor Test/);
  // Revoke, as the page's form posts it: back to the account page with the feedback.
  const revoked = await browser.post(
    `/_/account/agents/${agent.id}/revoke`,
    {},
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(revoked.status, 302, revoked.text);
  const back = await browser.page(revoked.headers.location!.replace(/^https?:\/\/[^/]+/, ''));
  assert.match(back.text, /Cursor Test is disconnected/);
  assert.doesNotMatch(back.text, /Cursor Test<\/strong>/);
  const res = await reads(client.saved!.access_token, `notes/${inside.name}`);
  assert.deepEqual([res.status, res.code], [401, 'invalid-oauth-token']);
  const refresh = await tokenRequest(client, {
    grant_type: 'refresh_token',
    refresh_token: client.saved!.refresh_token!,
  });
  assert.equal(refresh.json.error, 'invalid_grant');
  // Someone else's agent, or one gone: 404.
  assert.equal((await browser.post(`/_/account/agents/${agent.id}/revoke`, {})).status, 404);
});

test('a read-write token writes, and the activity feed names the agent; a team chosen on the consent page is the token’s only account; a team viewer’s token only reads', async () => {
  const { browser, inside, outside, person } = await personWithDocuments();
  const { client } = await connectAgent(kiln, browser, { access: 'write' }, 'Writer Agent');
  const token = client.saved!.access_token;
  const put = await asAgent(token, 'edit_document', {
    path: outside.name,
    edits: [{ op: 'replaceText', find: '<body>A</body>', replace: '<body>by agent</body>' }],
  });
  assert.equal(put.status, 200, put.text);
  const feed = await browser.get('/_/activity');
  assert.ok(
    feed.json.activity.some(
      (a: { client: string; path: string }) =>
        a.path === outside.name && a.client.endsWith(' via connection “Writer Agent”'),
    ),
    JSON.stringify(feed.json),
  );
  const [written] = (await browser.get('/_/account')).json.connected;
  assert.equal(await oauthClientNameOf(kiln.services, `oauth:${written.id}`), 'Writer Agent');
  assert.equal(await oauthClientNameOf(kiln.services, 'key:1'), null);
  assert.equal((await reads(token, `notes/${inside.name}`)).status, 200);
  // A team: the token reaches the team's files only.
  const { person: owner } = await keyHolder(kiln);
  const team = await createTeam(kiln.services, {
    username: `t${Date.now().toString(36)}`,
    ownerId: owner.id,
    plan: 'personal',
  });
  await setMember(await actingAs(kiln.services, owner.id), {
    teamId: team.id,
    username: person.username,
    role: 'viewer',
  });
  const { client: teamClient, page } = await connectAgent(kiln, browser, { account: team.id, access: 'write' });
  assert.match(page.text, new RegExp(`Team ${team.username} \\(viewer`));
  const teamToken = teamClient.saved!.access_token;
  // The person's own files are outside the token's one account: not there for it.
  const reached = await asAgent(teamToken, 'list_documents');
  assert.deepEqual(
    reached.out.accounts.map((a: { account: string }) => a.account),
    [team.username],
  );
  const mine = await asAgent(teamToken, 'read_document', { account: person.username, path: `notes/${inside.name}` });
  assert.deepEqual([mine.status, mine.code], [404, 'not-found'], mine.text);
  const agents = (await browser.get('/_/account')).json.connected;
  const teamAgent = agents.find((a: { account: { kind: string } }) => a.account.kind === 'team');
  assert.equal(teamAgent.readOnly, true, 'a viewer’s agent only reads');
});

test('the consent page: sign in first; a folder that does not exist or a team that is not yours goes back to the page; Deny sends access_denied', async () => {
  const { browser } = await personWithDocuments();
  const client = new TestOAuthClient();
  const fetchFn = kilnFetch(kiln);
  assert.equal(await auth(client, { serverUrl: mcpUrl(kiln), fetchFn }), 'REDIRECT');
  const url = client.authorizationUrl!;
  // Signed out (a browser with the provider's cookies but no Kiln session): to the sign-in page, and back.
  const stranger = kiln.client();
  const start = await stranger.page(url.pathname + url.search);
  assert.equal(start.status, 303);
  const signIn = await stranger.page(start.headers.location!.replace(/^https?:\/\/[^/]+/, ''));
  assert.equal(signIn.status, 302);
  assert.match(signIn.headers.location!, /^\/_\/login\?/);
  assert.match(decodeURIComponent(signIn.headers.location!), /return=\/_\/connect\//);
  // Signed in: a folder that is not there, then someone else's team: back to the page with the reason.
  const begin = await browser.page(url.pathname + url.search);
  const consentPath = begin.headers.location!.replace(/^https?:\/\/[^/]+/, '');
  const noFolder = await browser.post(
    consentPath,
    { answer: 'allow', folder: 'nowhere' },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(noFolder.status, 302);
  const shown = await browser.page(noFolder.headers.location!);
  assert.equal(shown.status, 200, shown.text);
  assert.match(shown.text, /There is no folder &quot;nowhere&quot;/);
  const { person: other } = await keyHolder(kiln);
  const notMine = await browser.post(
    consentPath,
    { answer: 'allow', account: String(other.id) },
    { form: true, headers: { accept: 'text/html' } },
  );
  assert.equal(notMine.status, 302);
  assert.match((await browser.page(notMine.headers.location!)).text, /Choose your own account or one of your teams/);
  // Deny: back to the client with access_denied, and no grant.
  const denied = await browser.post(consentPath, { answer: 'deny' }, { form: true, headers: { accept: 'text/html' } });
  assert.equal(denied.status, 303, denied.text);
  const back = await browser.page(denied.headers.location!.replace(/^https?:\/\/[^/]+/, ''));
  const to = new URL(back.headers.location!);
  assert.equal(to.origin + to.pathname, REDIRECT_URI);
  assert.equal(to.searchParams.get('error'), 'access_denied');
  assert.deepEqual((await browser.get('/_/account')).json.connected, []);
  // The answered request is gone: its page says so.
  const gone = await browser.page(consentPath);
  assert.equal(gone.status, 400);
  assert.match(gone.text, /connect again from the agent/);
});

test('PKCE is required, S256 only; a resource other than /_/mcp is refused', async () => {
  const { browser } = await personWithDocuments();
  const client = new TestOAuthClient();
  assert.equal(await auth(client, { serverUrl: mcpUrl(kiln), fetchFn: kilnFetch(kiln) }), 'REDIRECT');
  const url = client.authorizationUrl!;
  const variant = async (change: (q: URLSearchParams) => void) => {
    const q = new URLSearchParams(url.search);
    change(q);
    const res = await browser.page(`${url.pathname}?${q}`);
    assert.equal(res.status, 303, res.text);
    return new URL(res.headers.location!, kiln.config.baseUrl);
  };
  const none = await variant((q) => {
    q.delete('code_challenge');
    q.delete('code_challenge_method');
  });
  assert.equal(none.searchParams.get('error'), 'invalid_request');
  const plain = await variant((q) => q.set('code_challenge_method', 'plain'));
  assert.equal(plain.searchParams.get('error'), 'invalid_request');
  const elsewhere = await variant((q) => q.set('resource', 'https://elsewhere.example/mcp'));
  assert.equal(elsewhere.searchParams.get('error'), 'invalid_target');
});

test('a suspended account’s agent is refused at its next call (403 account-suspended) and cannot refresh', async () => {
  const { browser, inside, person } = await personWithDocuments();
  const { client } = await connectAgent(kiln, browser, {});
  await kiln.services.database.db
    .updateTable('accounts')
    .set({ suspended_at: new Date().toISOString() })
    .where('id', '=', person.id)
    .execute();
  const res = await reads(client.saved!.access_token, `notes/${inside.name}`);
  assert.deepEqual([res.status, res.code], [403, 'account-suspended'], res.text);
  const refresh = await tokenRequest(client, {
    grant_type: 'refresh_token',
    refresh_token: client.saved!.refresh_token!,
  });
  assert.equal(refresh.json.error, 'invalid_grant');
});

test('the sweep forgets expired codes and tokens (and the grant ended 90 days ago); an expired access token is refused before that', async () => {
  const { browser, inside } = await personWithDocuments();
  const { client } = await connectAgent(kiln, browser, {});
  const db = kiln.services.database.db;
  const count = async (model: string) =>
    (await db.selectFrom('oauth_objects').select('id').where('model', '=', model).execute()).length;
  assert.ok((await count('AccessToken')) > 0);
  try {
    time.advance(2 * 3600_000);
    const res = await reads(client.saved!.access_token, `notes/${inside.name}`);
    assert.equal(res.status, 401);
    await sweepOAuth(kiln.services);
    assert.equal(await count('AccessToken'), 0);
    assert.equal(await count('AuthorizationCode'), 0);
    assert.ok((await count('RefreshToken')) > 0, 'refresh tokens last 30 days');
    assert.equal((await browser.get('/_/account')).json.connected.length, 1);
    time.advance(500 * 86_400_000);
    await sweepOAuth(kiln.services);
    assert.equal(await count('RefreshToken'), 0);
    assert.equal((await db.selectFrom('oauth_grants').select('id').execute()).length, 0);
  } finally {
    time.reset();
  }
});

test('the sweep forgets a client a day after it registered without completing an authorization, and one whose grants hold no token and were not used for 30 days', async () => {
  const { browser } = await personWithDocuments();
  const db = kiln.services.database.db;
  const registered = async (c: TestOAuthClient) =>
    (
      await db
        .selectFrom('oauth_objects')
        .select('id')
        .where('model', '=', 'Client')
        .where('id', '=', c.clientInfo!.client_id)
        .execute()
    ).length === 1;
  // One registers and never finishes; another connects and makes a call.
  const unfinished = new TestOAuthClient('Never Finished');
  assert.equal(await auth(unfinished, { serverUrl: mcpUrl(kiln), fetchFn: kilnFetch(kiln) }), 'REDIRECT');
  const { client: used } = await connectAgent(kiln, browser, {});
  assert.equal((await asAgent(used.saved!.access_token, 'list_documents')).status, 200);
  const day = 86_400_000;
  try {
    await sweepOAuth(kiln.services);
    assert.ok(await registered(unfinished), 'a registration whose authorization may be under way stays');
    time.advance(2 * day);
    await sweepOAuth(kiln.services);
    assert.ok(!(await registered(unfinished)), 'a day on, a registration never authorized is forgotten');
    const url = unfinished.authorizationUrl!;
    const refused = await browser.page(url.pathname + url.search);
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, /This connection did not work/);
    assert.ok(await registered(used), 'a client whose refresh token still works stays');
    const refreshed = await tokenRequest(used, {
      grant_type: 'refresh_token',
      refresh_token: used.saved!.refresh_token!,
    });
    assert.equal(refreshed.status, 200, refreshed.text);
    // 30 days without a call: its refresh token has expired, nothing of it works, and it is forgotten.
    time.advance(31 * day);
    await sweepOAuth(kiln.services);
    assert.ok(!(await registered(used)));
    const late = await tokenRequest(used, { grant_type: 'refresh_token', refresh_token: refreshed.json.refresh_token });
    assert.equal(late.json.error, 'invalid_client', late.text);
  } finally {
    time.reset();
  }
});

test('an agent’s calls are not counted by the anonymous rate limit (a valid token is a credential); a bogus token’s are', async () => {
  const { browser, inside } = await personWithDocuments();
  const { client } = await connectAgent(kiln, browser, {});
  const token = client.saved!.access_token;
  // One client address, as the limiter counts.
  const from = kiln.client();
  const edit = (t: string) =>
    asAgent(
      t,
      'edit_document',
      { path: `notes/${inside.name}`, edits: [{ op: 'replaceText', find: 'A', replace: 'x' }] },
      from,
    );
  // A read-only agent's edits, each refused by the tool (403 read-only-key), none by the door.
  for (let i = 0; i < 105; i++) {
    const res = await edit(token);
    assert.deepEqual([res.status, res.code], [403, 'read-only-key'], `${i}: ${res.text}`);
  }
  let limited = false;
  for (let i = 0; i < 105 && !limited; i++) limited = (await edit('y'.repeat(43))).status === 429;
  assert.ok(limited, 'a token that does not work is counted like any anonymous write');
});

test('a client ID metadata document at a loopback or private address is never fetched: the authorization is refused on a Kiln page', async () => {
  const { browser } = await personWithDocuments();
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: 'https://localhost/client.json',
    redirect_uri: 'https://localhost/callback',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    resource: mcpUrl(kiln),
  });
  const res = await browser.page(`/_/oauth/auth?${q}`);
  assert.equal(res.status, 400, res.text);
  assert.match(res.text, /This connection did not work/);
  assert.match(res.text, /client_id metadata document/);
});

test('two Kilns on one PostgreSQL serve one flow alternately: registration, consent, code, refresh and calls each land on either', {
  skip: storage !== 'postgres' && 'two Kilns share a database on PostgreSQL only',
}, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-oauth-b-'));
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: kiln.config.databaseUrl!,
  };
  const running = await startServer(loadConfig({ ...env, ROOT_DOMAIN: kiln.config.rootDomain }));
  const other: TestKiln = {
    ...running,
    config: kiln.config,
    client: (host = kiln.config.rootDomain) => new Client(Number(new URL(running.url).port), host),
    hostOf: kiln.hostOf,
    stop: running.close,
  };
  try {
    const { browser, inside } = await personWithDocuments();
    const there = other.client();
    there.jar = browser.jar;
    const fetchFn = kilnFetch(kiln, other);
    const { client } = await connectAgent(kiln, [browser, there], { folder: 'notes' }, 'Two Kilns', fetchFn);
    const call = (k: TestKiln, token: string) => reads(token, `notes/${inside.name}`, k);
    assert.equal((await call(kiln, client.saved!.access_token)).status, 200);
    assert.equal((await call(other, client.saved!.access_token)).status, 200);
    assert.equal(await auth(client, { serverUrl: mcpUrl(kiln), fetchFn }), 'AUTHORIZED');
    assert.equal((await call(other, client.saved!.access_token)).status, 200);
    // Revoked on one, refused on the other at once.
    const [agent] = (await there.get('/_/account')).json.connected;
    assert.equal((await there.post(`/_/account/agents/${agent.id}/revoke`, {})).status, 200);
    assert.equal((await call(kiln, client.saved!.access_token)).status, 401);
  } finally {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('end to end at the MCP door: from its 401 to a token, a tool call named for the connection, Revoke on the account page, then 401 with the challenge', async () => {
  const { browser, inside } = await personWithDocuments();
  const { client, fetchFn } = await connectAgent(kiln, browser, { folder: 'notes', access: 'write' }, 'Claude Test');
  const token = client.saved!.access_token;
  const agent = new McpClient({ name: 'Claude', version: '1.0.0' });
  await agent.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl(kiln)), {
      fetch: fetchFn,
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const path = `notes/${inside.name}`;
  const edited = (await agent.callTool({
    name: 'edit_document',
    arguments: { path, edits: [{ op: 'replaceText', find: '<body>A</body>', replace: '<body>B</body>' }] },
  })) as { isError?: boolean; structuredContent?: any };
  assert.ok(!edited.isError, JSON.stringify(edited));
  const versions = (await agent.callTool({ name: 'list_versions', arguments: { path } })) as {
    structuredContent?: any;
  };
  assert.equal(versions.structuredContent.versions[0].savedBy, 'Claude via connection “Claude Test”');
  await agent.close();

  const connected = (await browser.get('/_/account')).json.connected;
  assert.equal((await browser.post(`/_/account/agents/${connected[0].id}/revoke`, {})).status, 200);
  const after = await fetchFn(mcpUrl(kiln), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(after.status, 401);
  const challenge = extractWWWAuthenticateParams(after);
  assert.equal(challenge.error, 'invalid_token');
  assert.equal(
    challenge.resourceMetadataUrl?.href,
    `${kiln.config.baseUrl}/.well-known/oauth-protected-resource/_/mcp`,
  );
});
