// An OAuth access token → THE caller of a request: the person who connected the agent, narrowed to what they chose
// on the consent page (the account or team, the folder, read-only: `Scope`). Read straight from the database on
// every call (no library needed on this path): the token's row by the SHA-256 of the token, joined to Kiln's grant;
// expired, revoked (from the account page, by the client, or a refresh token replayed), bound to another resource,
// or a suspended person: refused on the very next call. The 401s carry `WWW-Authenticate` with the protected
// resource metadata's address (RFC 9728), which an MCP client starts its sign-in from.
import type { Services } from '../services.ts';
import type { Config } from '../config.ts';
import { personCaller, type Caller, type ShareGrant } from '../access/caller.ts';
import { forbidden, unauthorized, type KilnError } from '../errors.ts';
import { sha256 } from '../core/checksum.ts';
import { accessTokenWithGrant, touchOAuthGrant } from '../store/oauth.ts';
import { personRow, teamRole } from '../store/accounts.ts';
import { actorOfPerson } from '../accounts/actors.ts';
import { MINUTE } from '../limits.ts';

/** Where the authorization server's endpoints live on the main app. */
export const OAUTH_MOUNT = '/_/oauth';
/** The MCP door, the one protected resource. */
export const MCP_PATH = '/_/mcp';
/** The one scope: what the person chose on the consent page is Kiln's own (`Scope`), not OAuth scope strings. */
export const MCP_SCOPE = 'mcp';

/** `<root>/_/mcp`: the resource every access token is bound to (RFC 8707). */
export const mcpResource = (config: Pick<Config, 'baseUrl'>) => `${config.baseUrl}${MCP_PATH}`;

/** The protected resource metadata's address for the MCP door (RFC 9728: the path after the well-known name). */
export const resourceMetadataUrl = (root: string) => `${root}/.well-known/oauth-protected-resource${MCP_PATH}`;

/** The `WWW-Authenticate` value of a 401 on the MCP door: where a client finds how to sign in. With `error`, the
 *  RFC 6750 error of a token that was sent and refused. */
export function wwwAuthenticate(root: string, error?: { error: string; description?: string }): string {
  let v = `Bearer resource_metadata="${resourceMetadataUrl(root)}"`;
  if (error) v += `, error="${error.error}"`;
  if (error?.description) v += `, error_description="${error.description.replace(/["\\]/g, '')}"`;
  return v;
}

/** The protected resource metadata (RFC 9728) of the MCP door. */
export function protectedResourceMetadata(config: Pick<Config, 'baseUrl'>) {
  return {
    resource: mcpResource(config),
    authorization_servers: [config.baseUrl],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Kiln',
    resource_documentation: `${config.baseUrl}/_/meta`,
  };
}

/** The writer of everything an OAuth grant's agent writes (`oauth:<grant row id>`), like `key:<id>`. */
export const oauthWriter = (grantRowId: number) => `oauth:${grantRowId}`;

/** The grant row id of an `oauth:<id>` writer, or null. */
export function oauthGrantIdOf(writer: string | null | undefined): number | null {
  const m = writer ? /^oauth:(\d+)$/.exec(writer) : null;
  return m ? Number(m[1]) : null;
}

const refused = (msg: string): KilnError => unauthorized(msg, 'invalid-oauth-token');

/** Tokens are 43 characters (256 bits, base64url); anything far from that is not one. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,200}$/;

/** The caller an OAuth access token makes: `personCaller('key', …)` with the grant's scope; refused: a KilnError
 *  (401 `invalid-oauth-token`, 403 `account-suspended`). `host`: the document host the request came in on (null:
 *  the main app), where the person acts in their team role; `shareGrant`: the request's share grants. */
export async function oauthCaller(
  s: Pick<Services, 'database' | 'clock' | 'config'>,
  bearerToken: string,
  host: number | null,
  shareGrant?: ShareGrant,
): Promise<Caller> {
  if (!TOKEN_SHAPE.test(bearerToken)) throw refused('That access token is not valid.');
  const { db } = s.database;
  const row = await accessTokenWithGrant(db, sha256(bearerToken));
  const now = s.clock.now();
  if (!row) throw refused('That access token is not valid (unknown, or revoked by its client); connect again.');
  const token = JSON.parse(row.payload) as { exp?: number; aud?: string | string[]; jkt?: string };
  const audiences = Array.isArray(token.aud) ? token.aud : [token.aud];
  if (!audiences.includes(mcpResource(s.config)) || token.jkt)
    throw refused('That access token was not made for this server.');
  if (row.revoked_at !== null) throw refused('This agent was disconnected (revoked); connect it again.');
  if ((token.exp ?? 0) * 1000 <= now.getTime() || row.expires_at <= now.toISOString())
    throw refused('That access token has expired; refresh it.');
  const person = await personRow(db, { id: row.person_id });
  if (person?.suspended_at) throw forbidden('This account is suspended; its agents do not work.', 'account-suspended');
  const actor = person && actorOfPerson(person, oauthWriter(row.id));
  if (!actor) throw refused('That access token is not valid.');
  actor.grantName = row.client_name;
  const caller = personCaller('key', actor, host, shareGrant, {
    accountId: row.account_id,
    folder: row.folder,
    readOnly: row.read_only === 1,
  });
  if (host !== null && host !== actor.accountId)
    caller.roles.set(host, (await teamRole(db, host, actor.accountId)) ?? null);
  // "Last used" on the account page, written at most once a minute per grant.
  if (row.last_used_at === null || Date.parse(row.last_used_at) < now.getTime() - MINUTE)
    void touchOAuthGrant(db, row.id, now.toISOString()).catch(() => {});
  return caller;
}
