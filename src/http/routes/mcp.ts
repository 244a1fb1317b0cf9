// The MCP door for agents (Claude Code, Claude Desktop, Cursor, any MCP client), on the main app only:
//   POST   /_/mcp   one JSON-RPC message (or batch) of the Streamable HTTP transport, stateless: protocol
//                   2026-07-28 (no handshake) and 2025-11-25 / 2025-06-18 (initialize, then calls); JSON answers
//   GET    /_/mcp   405 (no server-initiated stream: nothing is kept between requests)
//   DELETE /_/mcp   405 (no session to end)
// The credential is a key: `Authorization: Bearer <key>` or `X-API-Key` (`keys: true`: the auth hook resolves the
// caller from it), or an OAuth access token (`oauth: true`: this is the resource tokens are bound to); none, or a refused one, is 401 with `WWW-Authenticate: Bearer resource_metadata=…` (OAuth discovery). The Host must be the main
// app's and a browser's Origin too (DNS rebinding, other sites' pages): else 403 `cross-origin`. What an agent
// may do is the tools' use cases (src/mcp/), asked through the caller like every other door.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { RoutePlugin } from './plugin.ts';
import { limits } from '../../limits.ts';
import { onlyOn } from '../hosts.ts';
import { jsonAnswers } from '../io.ts';
import { refuseForeignSite } from '../origin.ts';
import { keyOf } from '../auth.ts';
import { admitCall, answerMcp, type McpRequest } from '../../mcp/http.ts';
import { KilnError } from '../../errors.ts';
import { setRateLimitHeaders } from '../../ratelimit/http.ts';
import { wwwAuthenticate } from '../../oauth/token.ts';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The headers the SDK reads (the transport's, the protocol's `Mcp-*`); the others are Kiln's. */
const SDK_HEADER = /^(content-type|accept|mcp-.*|last-event-id)$/;

/** The request as the SDK reads it: its method, URL and headers (the body is already parsed). The SDK reads a
 *  request's headers with `get` only, so a parsed body gets this small stand-in rather than a web `Request`
 *  (building one, with its `Headers`, was a tenth of the door's own CPU per call); no body (nothing to parse)
 *  gets a real one, which the SDK reads. */
function mcpRequest(req: FastifyRequest): McpRequest {
  const url = `${req.protocol}://${req.headers.host ?? 'localhost'}${req.url}`;
  const get = (name: string): string | null => sdkHeader(req, name.toLowerCase()) ?? null;
  const request =
    req.body === undefined
      ? new Request(url, { method: 'POST', headers: sdkHeaders(req) })
      : ({ method: 'POST', url, headers: { get, has: (name: string) => get(name) !== null } } as unknown as Request);
  return {
    request,
    body: req.body,
    token: one(keyOf(req)),
    userAgent: one(req.headers['user-agent']),
    bridged: one(req.headers['x-kiln-agent']),
  };
}

/** A header the SDK reads (`name` in lower case), repeated ones joined as one; undefined for the others. */
function sdkHeader(req: FastifyRequest, name: string): string | undefined {
  const value = SDK_HEADER.test(name) ? req.headers[name] : undefined;
  return Array.isArray(value) ? value.join(', ') : value;
}

function sdkHeaders(req: FastifyRequest): Headers {
  const headers = new Headers();
  for (const name of Object.keys(req.headers)) {
    const value = sdkHeader(req, name);
    if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** A credential came and was refused: the challenge says `invalid_token` (RFC 6750), so a client refreshes. */
function tokenRefused(req: FastifyRequest, err: KilnError) {
  return req.headers.authorization ? { error: 'invalid_token', description: err.message } : undefined;
}

/** The SDK's answer, as Fastify sends it (a stream only when the SDK streams). */
async function send(reply: FastifyReply, res: Response) {
  reply.code(res.status);
  for (const [name, value] of res.headers) reply.header(name, value);
  reply.header('cache-control', 'no-store');
  if (!res.body) return reply.send();
  if (res.headers.get('content-type')?.startsWith('text/event-stream'))
    return reply.send(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream));
  return reply.send(await bytesOf(res.body));
}

/** A JSON answer's bytes, as the SDK's `Response.json` queued them (one chunk): read off its stream rather than
 *  with `arrayBuffer()`, which gathers and copies them twice more. */
async function bytesOf(body: ReadableStream<Uint8Array>): Promise<Buffer> {
  const reader = body.getReader();
  const chunks: Buffer[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main', 'The MCP endpoint is on the main address of this Kiln: /_/mcp.');
  jsonAnswers(app);
  const door = { config: { keys: true, oauth: true }, bodyLimit: limits.body.jsonSyncAndUpload };

  app.post('/_/mcp', door, async (req, reply) => {
    refuseForeignSite(req, s);
    const input = mcpRequest(req);
    try {
      const { who, count } = await admitCall(req.ctx, input);
      setRateLimitHeaders(reply, count, limits.mcpCalls.windowMs);
      return await send(reply, await answerMcp(req.ctx, who, input));
    } catch (err) {
      // Where to sign in: the challenge names the protected resource metadata (RFC 9728), which leads an OAuth
      // client to Kiln's authorization server (src/oauth/).
      if (err instanceof KilnError && err.status === 401)
        reply.header('www-authenticate', wwwAuthenticate(s.config.baseUrl, tokenRefused(req, err)));
      throw err;
    }
  });

  const notAllowed = async (req: FastifyRequest, reply: FastifyReply) => {
    refuseForeignSite(req, s);
    return reply
      .code(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
  };
  app.get('/_/mcp', door, notAllowed);
  app.delete('/_/mcp', door, notAllowed);
};

export default plugin;
