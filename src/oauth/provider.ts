// Kiln as its own OAuth 2.1 authorization server, for MCP clients that connect by URL (claude.ai and Claude
// Desktop connectors, ChatGPT, Cursor): oidc-provider (a certified, well-kept implementation) mounted under
// `/_/oauth` on the main app, loaded on first use (`await import`). What it is set to do:
//   - authorization code with PKCE, S256 only, for every client (OAuth 2.1); no implicit, no device flow, no DPoP;
//   - dynamic client registration (RFC 7591, `/_/oauth/reg`, no registration access tokens) and client ID
//     metadata documents (an https `client_id` whose document the library fetches, refusing private addresses);
//   - the `resource` parameter (RFC 8707): the one resource is `<root>/_/mcp`, and every access token is bound to
//     it (opaque, one hour; src/oauth/token.ts reads it back on each call);
//   - refresh tokens (30 days) rotated on every use; a used one replayed revokes the whole grant;
//   - revocation (RFC 7009, `/_/oauth/token/revocation`);
//   - the authorization-server metadata (RFC 8414) at `<root>/.well-known/oauth-authorization-server`; the issuer is
//     `<root>` (BASE_URL), the endpoints live under `/_/oauth`.
// Every authorization request goes through Kiln's consent page (`/_/connect/:uid`, src/http/routes/oauth.ts): the
// signed-in person chooses what the client may reach there, every time; the library's own session only carries
// that choice back to the authorization endpoint. Its storage is Kiln's database (src/oauth/adapter.ts), so any
// process serves any step; the signing key (id tokens, should a client ask for `openid`) and the cookie key are
// derived from the instance secret, the same in every process.
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Services } from '../services.ts';
import { adapterFor } from './adapter.ts';
import { personRow } from '../store/accounts.ts';
import { mcpResource, MCP_SCOPE, OAUTH_MOUNT } from './token.ts';
import { oauthErrorPage } from '../ui/connect.ts';
import { limits } from '../limits.ts';

export type { Provider };

/** What the provider uses of the services. */
export type ProviderPorts = Pick<Services, 'config' | 'database' | 'clock' | 'secret'>;

const providers = new WeakMap<ProviderPorts, Promise<Provider>>();

/** The provider of this Kiln (made on first use, once per process). */
export function providerFor(s: ProviderPorts): Promise<Provider> {
  let p = providers.get(s);
  if (!p) {
    p = makeProvider(s);
    providers.set(s, p);
    p.catch(() => providers.delete(s));
  }
  return p;
}

/** A key derived from the instance secret for one purpose. */
function derived(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', secret, Buffer.alloc(0), `kiln oauth ${purpose}`, 32));
}

/** The P-256 signing key (ES256) every process derives alike from the instance secret. */
function signingJwk(secret: Buffer) {
  const d = derived(secret, 'signing key');
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const pub = ecdh.getPublicKey();
  const b64 = (b: Buffer) => b.toString('base64url');
  const x = b64(pub.subarray(1, 33));
  const y = b64(pub.subarray(33, 65));
  const kid = crypto.createHash('sha256').update(`${x}.${y}`).digest('base64url').slice(0, 16);
  return { kty: 'EC', crv: 'P-256', d: b64(d), x, y, use: 'sig', alg: 'ES256', kid };
}

async function makeProvider(s: ProviderPorts): Promise<Provider> {
  const { default: Provider, interactionPolicy, errors } = await import('oidc-provider');
  const resource = mcpResource(s.config);
  const ttl = limits.oauth;
  // Kiln's consent page on every authorization: a grant is made only by the person's choice there, never reused
  // from an earlier one.
  const policy = interactionPolicy.base();
  policy
    .get('consent')!
    .checks.add(
      new interactionPolicy.Check('kiln_consent', 'Kiln asks the person on every connection', (ctx) =>
        ctx.oidc.result?.consent ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );
  const cookie = { httpOnly: true, sameSite: 'lax' as const, signed: true, secure: s.config.secure };
  const configuration: Configuration = {
    adapter: adapterFor(s),
    clients: [],
    jwks: { keys: [signingJwk(s.secret)] },
    cookies: {
      keys: [derived(s.secret, 'cookies').toString('base64url')],
      names: { session: 'kiln_oauth', interaction: 'kiln_oauth_interaction', resume: 'kiln_oauth_resume' },
      long: cookie,
      short: cookie,
    },
    clientDefaults: {
      grant_types: ['authorization_code'],
      id_token_signed_response_alg: 'ES256',
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    responseTypes: ['code'],
    // `mcp` among them too: clients register with the scope they will ask for (RFC 7591 `scope`).
    scopes: ['openid', 'offline_access', MCP_SCOPE],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      userinfo: { enabled: false },
      // A client revokes only its own tokens (another's answer 200 as an unknown token does, and nothing happens).
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      registration: { enabled: true, issueRegistrationAccessToken: false },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`This server's one resource is ${resource}.`);
          return {
            scope: MCP_SCOPE,
            audience: resource,
            accessTokenTTL: ttl.accessTokenSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/_/connect/${interaction.uid}`, policy },
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    findAccount: async (_ctx, sub) => {
      const id = Number(sub);
      const person = Number.isSafeInteger(id) ? await personRow(s.database.db, { id }) : undefined;
      // A suspended or deleted person's grants mint nothing more (a refresh fails).
      if (!person || person.suspended_at !== null) return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: ttl.accessTokenSeconds,
      AuthorizationCode: ttl.codeSeconds,
      RefreshToken: ttl.refreshTokenSeconds,
      Grant: ttl.grantSeconds,
      Interaction: ttl.interactionSeconds,
      Session: ttl.interactionSeconds,
      IdToken: ttl.accessTokenSeconds,
    },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = oauthErrorPage(out.error_description ?? out.error ?? 'The request was refused.');
    },
  };
  const provider = new Provider(s.config.baseUrl, configuration);
  // Kiln sets the forwarded headers itself (below): the provider's URLs are always BASE_URL's.
  provider.proxy = true;
  provider.on('server_error', (_ctx, err) => console.error('OAuth server error:', err));
  return provider;
}

/** The public scheme and host of the main app, from BASE_URL. */
function publicOrigin(s: ProviderPorts) {
  const u = new URL(s.config.baseUrl);
  return { proto: u.protocol.replace(':', ''), host: u.host };
}

/** Hands a request to the provider as if it arrived at `path` below `/_/oauth` (the metadata at the root's
 *  well-known address is the provider's own discovery document). */
export async function serveOAuth(s: ProviderPorts, req: IncomingMessage, res: ServerResponse, path: string) {
  const provider = await providerFor(s);
  const { proto, host } = publicOrigin(s);
  const q = req.url?.indexOf('?') ?? -1;
  const search = q === -1 ? '' : req.url!.slice(q);
  (req as IncomingMessage & { originalUrl?: string }).originalUrl = `${OAUTH_MOUNT}${path}${search}`;
  req.url = `${path}${search}`;
  req.headers['x-forwarded-proto'] = proto;
  req.headers['x-forwarded-host'] = host;
  delete req.headers.forwarded;
  let handle = handlers.get(provider);
  if (!handle) handlers.set(provider, (handle = provider.callback()));
  await handle(req, res);
}

const handlers = new WeakMap<Provider, ReturnType<Provider['callback']>>();
