// The MCP door's use case (POST /_/mcp, src/http/routes/mcp.ts): one JSON-RPC message (or batch) in, the
// official SDK's answer out, stateless, so any process behind a balancer answers any request.
//  - 2026-07-28 requests (the per-request `_meta` envelope, no handshake) go to the SDK's `createMcpHandler`,
//    which answers JSON (SSE only when a tool reports progress before its result);
//  - 2025-11-25 and 2025-06-18 requests (an `initialize`, then plain calls) are answered one by one by a fresh
//    server on a stateless Streamable HTTP transport with JSON answers: no session is kept anywhere.
// Either way a server is made for the request (src/mcp/server.ts), with the caller's ctx.
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import type { Ctx } from '../context.ts';
import { unauthorized } from '../errors.ts';
import { kilnMcpServer, mcpSdk, type CallAgent } from './server.ts';
import type { LimitResult } from '../core/rate-limiter.ts';
import { assertMcpOn, countMcpCall } from '../agents/gate.ts';
import { cleanName, grantName, handshakeName, rememberClient, rememberedClient, userAgentName } from './agent.ts';

/** What the door knows of a request besides the message. */
export interface McpRequest {
  /** The request as the SDK reads it (its headers; the body is `body`). */
  request: Request;
  /** The parsed JSON body. */
  body: unknown;
  /** The credential as sent (for the grant's name). */
  token: string | undefined;
  userAgent: string | undefined;
  /** `X-Kiln-Agent`: the name of the client behind the `kiln mcp` bridge. */
  bridged: string | undefined;
}

/** The agent of an authenticated call and the credential's count of calls (for `RateLimit-*`), or the refusal:
 *  the refused key's own 401, or `missing-key`; 403 `mcp-off` (this Kiln or the plan); 429 past the calls a
 *  minute of one credential. */
export async function admitCall(
  ctx: Pick<Ctx, 'caller' | 'planSettings' | 'limiters' | 'database' | 'clock' | 'config'>,
  req: McpRequest,
): Promise<{ who: CallAgent; count: LimitResult }> {
  const writer = credentialOf(ctx);
  assertMcpOn(ctx);
  const count = await countMcpCall(ctx);
  return { who: await callAgent(ctx, writer, req), count };
}

/** The credential's writer of an authenticated call, or the refusal: the refused key's own 401, or `missing-key`. */
function credentialOf(ctx: Pick<Ctx, 'caller'>): string {
  const { caller } = ctx;
  if (caller.refused) throw caller.refused;
  if (caller.via !== 'key' || !caller.actor)
    throw unauthorized('Send a key: Authorization: Bearer <key> (or X-API-Key).', 'missing-key');
  return caller.actor.writer;
}

/** Who the agent is. A 2025 client names itself in its handshake only: kept for its later requests, which any
 *  process may answer (looked up for the calls that may write, when the client is not named otherwise). */
async function callAgent(ctx: Pick<Ctx, 'caller' | 'database' | 'clock'>, writer: string, req: McpRequest) {
  const { db } = ctx.database;
  const handshake = handshakeName(req.body);
  if (handshake) await rememberClient(db, writer, handshake, ctx.clock.now());
  const bridged = cleanName(req.bridged);
  const calls = (req.body as { method?: unknown } | null)?.method === 'tools/call';
  const remembered = !handshake && !bridged && calls ? await rememberedClient(db, writer, ctx.clock.now()) : null;
  return {
    grant: grantName(ctx.caller, req.token),
    bridged,
    clientHint: handshake ?? remembered ?? userAgentName(req.userAgent),
  } satisfies CallAgent;
}

interface Call {
  ctx: Ctx;
  who: CallAgent;
}

let handler: Promise<{ modern: McpHttpHandler; sdk: typeof import('@modelcontextprotocol/server') }> | null = null;

/** The SDK and its 2026-07-28 handler, made once per process. */
function door() {
  handler ??= mcpSdk().then((sdk) => ({
    sdk,
    modern: sdk.createMcpHandler(
      ({ authInfo }) => {
        const call = authInfo?.extra?.call as Call;
        return kilnMcpServer(call.ctx, call.who);
      },
      { legacy: 'reject', onerror: (err) => console.error('MCP:', err.message) },
    ),
  }));
  return handler;
}

/** The first revision without a handshake (the SDK's own bound, which it does not export). */
const FIRST_MODERN = '2026-07-28';

const plain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Where the SDK's classification (`isLegacyRequest`) sends the common messages, decided without it: it runs a
 *  schema over the body for each kind of message it tries (most fail, each failure an error made), and the
 *  modern handler classifies the body again. Only what it decides beyond doubt: one message that is no
 *  response; with a 2026-07-28 (or later) `MCP-Protocol-Version` the SDK never serves it as legacy; with none
 *  or an earlier one, a valid request or notification whose params carry no envelope claim is legacy.
 *  Anything else (batches, responses, envelope claims, malformed messages) is the SDK's to classify. */
function eraOf(sdk: typeof import('@modelcontextprotocol/server'), req: McpRequest): 'modern' | 'legacy' | null {
  const body = req.body;
  if (!plain(body) || 'result' in body || 'error' in body) return null;
  const version = req.request.headers.get('mcp-protocol-version')?.replace(/^[ \t]+|[ \t]+$/g, '');
  if (version !== undefined && version >= FIRST_MODERN) return 'modern';
  const meta = plain(body.params) ? body.params._meta : undefined;
  if (plain(meta) && sdk.PROTOCOL_VERSION_META_KEY in meta) return null;
  return sdk.isJSONRPCRequest(body) || sdk.isJSONRPCNotification(body) ? 'legacy' : null;
}

/** Answers one POST of the MCP door for an authenticated caller (`callAgent` first). */
export async function answerMcp(ctx: Ctx, who: CallAgent, req: McpRequest): Promise<Response> {
  const { sdk, modern } = await door();
  const authInfo: AuthInfo = { token: '', clientId: 'kiln', scopes: [], extra: { call: { ctx, who } } };
  const era = eraOf(sdk, req) ?? ((await sdk.isLegacyRequest(req.request, req.body)) ? 'legacy' : 'modern');
  if (era === 'modern') return modern.fetch(req.request, { authInfo, parsedBody: req.body });
  const server = await kilnMcpServer(ctx, who);
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  // Not closed after: a JSON answer leaves nothing open, and both go with the request (closing them costs an
  // error made, with its stack, for the pending requests there are none of).
  return transport.handleRequest(req.request, { parsedBody: req.body, authInfo });
}
