// An MCP client's OAuth sign-in against a test Kiln, with the official SDK's own flow (`auth()` from
// @modelcontextprotocol/client: discovery, dynamic registration, PKCE, the code exchange, refresh), its requests
// sent to the in-process Kiln (127.0.0.1, with the Host of the URL), and the person's part (the authorization
// endpoint, Kiln's consent page, the answer) played by a signed-in test client.
import assert from 'node:assert/strict';
import {
  auth,
  extractWWWAuthenticateParams,
  type FetchLike,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import type { TestKiln } from './kiln.ts';
import type { Client, Res } from './client.ts';

/** `fetch` for the SDK: every request goes to the test Kiln with the URL's host as its Host header (several Kilns
 *  serving one database: to each in turn). */
export function kilnFetch(...kilns: TestKiln[]): FetchLike {
  let turn = 0;
  return async (url, init = {}) => {
    const kiln = kilns[turn++ % kilns.length];
    const u = new URL(String(url));
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body =
      init.body === undefined || init.body === null
        ? undefined
        : init.body instanceof URLSearchParams
          ? ((headers['content-type'] ??= 'application/x-www-form-urlencoded'), init.body.toString())
          : String(init.body);
    const res = await kiln.client(u.host).request(init.method ?? 'GET', u.pathname + u.search, { headers, body });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
    const nullBody = res.status === 204 || res.status === 304 || (res.status >= 300 && res.status < 400);
    return new Response(nullBody ? null : new Uint8Array(res.body), { status: res.status, headers: out });
  };
}

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** An MCP client's OAuth state, in memory (what a real client keeps on disk). */
export class TestOAuthClient implements OAuthClientProvider {
  clientInfo: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
  saved: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
  verifier = '';
  discovery: Awaited<ReturnType<NonNullable<OAuthClientProvider['discoveryState']>>>;
  authorizationUrl: URL | null = null;
  readonly name: string;
  constructor(name = 'Test Agent') {
    this.name = name;
  }
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.clientInfo;
  }
  saveClientInformation(info: NonNullable<TestOAuthClient['clientInfo']>) {
    this.clientInfo = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: NonNullable<TestOAuthClient['saved']>) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: NonNullable<TestOAuthClient['discovery']>) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

export const mcpUrl = (kiln: TestKiln) => `${kiln.config.baseUrl}/_/mcp`;

/** The path and query of an absolute URL (or a path). */
const pathOf = (to: string) => {
  const u = new URL(to, 'http://x');
  return u.pathname + u.search;
};

export interface ConsentChoice {
  answer?: 'allow' | 'deny';
  account?: number;
  folder?: string;
  access?: 'read' | 'write';
}

/** The person's part: the authorization URL → Kiln's consent page (asserted: the client's name and redirect
 *  address are on it) → the answer → back to the client. Returns the redirect back (with `code`, `state`, `iss`,
 *  or `error`), and the consent page. */
export async function consent(
  browsers: Client | Client[],
  authorizationUrl: URL,
  choice: ConsentChoice = {},
): Promise<{ back: URL; page: Res }> {
  // One browser, or the same browser's requests to several Kilns in turn.
  let turn = 0;
  const next = () => (Array.isArray(browsers) ? browsers[turn++ % browsers.length] : browsers);
  let browser = next();
  const start = await browser.page(pathOf(authorizationUrl.href));
  assert.equal(start.status, 303, start.text);
  const consentPath = pathOf(start.headers.location!);
  assert.match(consentPath, /^\/_\/connect\/[\w-]+$/);
  browser = next();
  const page = await browser.page(consentPath);
  assert.equal(page.status, 200, page.text);
  const form: Record<string, string> = { answer: choice.answer ?? 'allow', access: choice.access ?? 'read' };
  if (choice.account !== undefined) form.account = String(choice.account);
  if (choice.folder !== undefined) form.folder = choice.folder;
  browser = next();
  const answered = await browser.post(consentPath, form, { form: true, headers: { accept: 'text/html' } });
  assert.equal(answered.status, 303, answered.text);
  browser = next();
  const resume = await browser.page(pathOf(answered.headers.location!));
  assert.equal(resume.status, 303, resume.text);
  return { back: new URL(resume.headers.location!), page };
}

/** The whole sign-in as an MCP client does it: from the MCP door's 401 (its `WWW-Authenticate`), `auth()` to the redirect, the person's consent, `auth()` with the code. Returns the
 *  client (its tokens saved) and the consent page. */
export async function connectAgent(
  kiln: TestKiln,
  browser: Client | Client[],
  choice: ConsentChoice = {},
  name?: string,
  fetchFn = kilnFetch(kiln),
) {
  const client = new TestOAuthClient(name);
  // The door's own challenge: a call without a token.
  const challenge = await fetchFn(mcpUrl(kiln), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(challenge.status, 401);
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(challenge);
  assert.ok(resourceMetadataUrl);
  assert.equal(await auth(client, { serverUrl: mcpUrl(kiln), fetchFn, resourceMetadataUrl }), 'REDIRECT');
  assert.ok(client.authorizationUrl);
  const { back, page } = await consent(browser, client.authorizationUrl, choice);
  const code = back.searchParams.get('code');
  assert.ok(code, `no code: ${back.href}`);
  const iss = back.searchParams.get('iss') ?? undefined;
  assert.equal(await auth(client, { serverUrl: mcpUrl(kiln), fetchFn, authorizationCode: code, iss }), 'AUTHORIZED');
  assert.ok(client.saved?.access_token);
  return { client, page, fetchFn };
}
