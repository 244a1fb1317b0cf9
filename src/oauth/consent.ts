// The consent step of an agent's connection (`/_/connect/:uid`): what the signed-in person is asked (which client,
// where it will send them back) and their answer. Allowing makes the grant: the library's (which the tokens carry)
// and Kiln's row with the choice (the person's account or one of their teams, optionally a folder of it, read-only
// or read-write), which becomes every token's `Scope` (src/oauth/token.ts). Denying sends the person back to the
// client with `access_denied`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Ctx } from '../context.ts';
import { signedIn } from '../nodes/manage.ts';
import { teamsOf } from '../teams/teams.ts';
import { badRequest, fail } from '../errors.ts';
import { insertOAuthGrant } from '../store/oauth.ts';
import { limits } from '../limits.ts';
import { providerFor, type ProviderPorts } from './provider.ts';
import { mcpResource, MCP_SCOPE } from './token.ts';

export interface ConsentRequest {
  uid: string;
  client: {
    name: string;
    id: string;
    /** True when the client id is the https address of its metadata document (not registered here). */
    metadataDocument: boolean;
  };
  /** Where the person is sent back to, with the answer. */
  redirectUri: string;
  /** The accounts the person may connect: their own first, then their teams, with their role there. */
  accounts: Array<{ id: number; username: string; kind: 'personal' | 'team'; role: string }>;
}

export interface ConsentAnswer {
  allow: boolean;
  accountId: number;
  folder: string;
  readOnly: boolean;
}

const expired = () =>
  fail(
    'oauth-request-expired',
    'This connection request is unknown, answered already or expired: connect again from the agent.',
  );

/** The provider's interaction of this request (its cookie), or 400 `oauth-request-expired`. */
async function interactionOf(s: ProviderPorts, req: IncomingMessage, res: ServerResponse, uid: string) {
  const provider = await providerFor(s);
  const details = await provider.interactionDetails(req, res).catch(() => null);
  if (!details || details.uid !== uid) throw expired();
  return { provider, details };
}

/** A client's name as shown: its own word for itself, or its id. */
function clientName(client: { clientName?: string; clientId: string }): string {
  return (client.clientName || client.clientId).slice(0, 120);
}

/** What the consent page shows. The person must be signed in (401 `login-required`: browsers go to sign in and
 *  come back). */
export async function consentRequest(
  ctx: Pick<Ctx, 'caller' | 'database'>,
  s: ProviderPorts,
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
): Promise<ConsentRequest> {
  const me = signedIn(ctx, 'manage');
  const { provider, details } = await interactionOf(s, req, res, uid);
  const clientId = String(details.params.client_id ?? '');
  const client = await provider.Client.find(clientId).catch(() => undefined);
  if (!client) throw expired();
  const teams = await teamsOf(ctx, me.accountId);
  return {
    uid,
    client: {
      name: clientName(client),
      id: client.clientId,
      metadataDocument: (client as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument === true,
    },
    redirectUri: String(details.params.redirect_uri ?? ''),
    accounts: [
      { id: me.accountId, username: me.username, kind: 'personal', role: 'owner' },
      ...teams.map((t) => ({ id: t.id, username: t.username, kind: 'team' as const, role: t.role })),
    ],
  };
}

/** The folder as the person typed it, checked: one of the account's folders they may see (the access table), kept
 *  as its stored path; empty: the whole account. */
async function folderOf(ctx: Pick<Ctx, 'nodes'>, accountId: number, typed: string): Promise<string | null> {
  const path = typed.trim().replace(/^\/+|\/+$/g, '');
  if (!path) return null;
  if (path.length > limits.pathLength) throw badRequest('Folder is too long.', 'too-long');
  const node = await ctx.nodes.open({ ownerId: accountId, path }, 'view', 'folder').catch(() => null);
  if (!node) throw badRequest(`There is no folder "${path}" in that account.`, 'invalid');
  return node.path ? `${node.path}/${node.name}` : node.name;
}

/** The person's answer: where the browser goes next (back to the client, with a code or `access_denied`). */
export async function answerConsent(
  ctx: Pick<Ctx, 'caller' | 'database' | 'nodes' | 'clock'>,
  s: ProviderPorts,
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
  answer: ConsentAnswer,
): Promise<string> {
  const me = signedIn(ctx, 'manage');
  const { provider, details } = await interactionOf(s, req, res, uid);
  if (!answer.allow) {
    return provider.interactionResult(req, res, {
      error: 'access_denied',
      error_description: 'The person did not allow the connection.',
    });
  }
  const role = answer.accountId === me.accountId ? 'owner' : await ctx.nodes.roleIn(answer.accountId);
  if (!role) throw badRequest('Choose your own account or one of your teams.', 'invalid');
  const folder = await folderOf(ctx, answer.accountId, answer.folder);
  const clientId = String(details.params.client_id ?? '');
  const client = await provider.Client.find(clientId);
  if (!client) throw expired();
  const accountId = String(me.accountId);
  const grant = new provider.Grant({ accountId, clientId });
  grant.addResourceScope(mcpResource(s.config), MCP_SCOPE);
  // What else it asked for is granted as asked (`offline_access`; `openid`: an id token naming the person): the
  // person's choice below is what narrows it.
  const asked = new Set(String(details.params.scope ?? '').split(' '));
  for (const scope of ['openid', 'offline_access', MCP_SCOPE]) if (asked.has(scope)) grant.addOIDCScope(scope);
  const grantId = await grant.save();
  const now = ctx.clock.now();
  await insertOAuthGrant(ctx.database.db, {
    grant_id: grantId,
    person_id: me.accountId,
    client_id: clientId,
    client_name: clientName(client),
    redirect_uri: String(details.params.redirect_uri ?? ''),
    account_id: answer.accountId,
    folder,
    // A team viewer's agent only reads (the access table would refuse its writes anyway).
    read_only: answer.readOnly || role === 'viewer' ? 1 : 0,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + limits.oauth.grantSeconds * 1000).toISOString(),
    last_used_at: null,
    revoked_at: null,
  });
  return provider.interactionResult(
    req,
    res,
    { login: { accountId }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}
