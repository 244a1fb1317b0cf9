// The MCP server of one call: the official SDK's McpServer with every tool of TOOLS and the documents as
// resources, run with the caller's ctx. Made for each request (the door is stateless: any process answers any
// request), by the HTTP door (src/mcp/http.ts). A tool's KilnError is its result with `isError: true`: the
// text "<code>: <message>" for the model, and `{error: {code, message, status, …}}` for programs. The SDK is
// loaded on first use (only agents need it).
import type { McpServer, ServerContext } from '@modelcontextprotocol/server';
import type { Ctx } from '../context.ts';
import { KilnError } from '../errors.ts';
import type { AgentInfo, Tool } from './tool.ts';
import { TOOLS } from './tools/index.ts';
import { registerResources } from './resources.ts';
import { cleanName } from './agent.ts';

export const SERVER_INFO = { name: 'kiln', title: 'Kiln', version: '1.0.0' };

const INSTRUCTIONS = `Kiln hosts self-saving HTML documents (single-file apps) and the files beside them, in the account of the key's person and the teams they belong to.
Start with list_documents, then read_document (it answers the etag). Prefer edit_document (exact text or CSS-selector edits, each matching once) to write_document (the whole page). Every write makes a version (list_versions, restore_version undo it) and reaches open tabs of the page at once.
A document's data (what its "api" rules tag extracts) is read with read_data and written with write_data, which changes only the data in the page.`;

/** What a call knows of its agent before a tool runs: the grant, and the names the request gave. */
export interface CallAgent {
  /** The credential, as people know it ("sync key hcsk_1a2b3c4…"). */
  grant: string;
  /** The client behind the `kiln mcp` bridge (its `X-Kiln-Agent`): the bridge's own client name is no agent's. */
  bridged: string | null;
  /** A name for the client when the message carries none: its 2025 handshake's (remembered), its User-Agent's. */
  clientHint: string | null;
}

const CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';

/** The client's own name: the bridged one's, the 2026-07-28 envelope's, the handshake's (a 2025 initialize
 *  on this server), or the door's hint. */
function clientOf(server: McpServer, sctx: ServerContext, who: CallAgent): string {
  if (who.bridged) return who.bridged;
  const envelope = sctx.mcpReq.envelope as Record<string, { name?: string; title?: string } | undefined> | undefined;
  const info = envelope?.[CLIENT_INFO] ?? server.server.getClientVersion();
  return cleanName(info?.title) ?? cleanName(info?.name) ?? who.clientHint ?? 'MCP client';
}

type Result = {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** A refusal as a tool result. Anything but a KilnError is a bug: logged, and answered without its details. */
export function refusal(err: unknown): Result {
  if (!(err instanceof KilnError)) {
    console.error('MCP tool failed:', err);
    return { isError: true, content: [{ type: 'text', text: 'internal: Something went wrong in Kiln.' }] };
  }
  const code = err.code ?? 'error';
  const extra = err.extra && Object.keys(err.extra).length ? ` ${JSON.stringify(err.extra)}` : '';
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${err.message}${extra}` }],
    structuredContent: { error: { code, message: err.message, status: err.status, ...err.extra } },
  };
}

type Standard = { '~standard': Record<string, unknown> & { jsonSchema?: Record<string, (o: object) => unknown> } };
const standards = new WeakMap<object, Standard>();

/** A tool's zod schema as the SDK reads it (Standard Schema with JSON Schema), with its JSON Schema worked out
 *  once per process: a server is made per request, and converting 16 tools' schemas on each was most of a call. */
function standard(schema: Tool['input']): Standard {
  let s = standards.get(schema);
  if (s) return s;
  const std = (schema as unknown as Standard)['~standard'];
  const memo = new Map<string, unknown>();
  const converted = (io: 'input' | 'output') => (o: object) => {
    const key = `${io} ${JSON.stringify(o)}`;
    if (!memo.has(key)) memo.set(key, std.jsonSchema![io](o));
    return memo.get(key);
  };
  s = { '~standard': { ...std, jsonSchema: { input: converted('input'), output: converted('output') } } };
  standards.set(schema, s);
  return s;
}

async function call(t: Tool, ctx: Ctx, input: unknown, agent: AgentInfo): Promise<Result> {
  try {
    const out = (await t.run(ctx, input as never, agent)) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
  } catch (err) {
    return refusal(err);
  }
}

let sdk: Promise<typeof import('@modelcontextprotocol/server')> | null = null;
/** The SDK, loaded once (an `import()` of a loaded module still costs a resolution each time). */
export const mcpSdk = () => (sdk ??= import('@modelcontextprotocol/server'));

/** A server for one call of this caller. */
export async function kilnMcpServer(ctx: Ctx, who: CallAgent): Promise<McpServer> {
  const { McpServer } = await mcpSdk();
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {}, resources: {} },
    instructions: INSTRUCTIONS,
  });
  for (const t of TOOLS) {
    const config = {
      title: t.title,
      description: t.description,
      inputSchema: standard(t.input),
      outputSchema: standard(t.output),
      annotations: { title: t.title, ...t.annotations },
    };
    server.registerTool(
      t.name,
      config as never,
      ((input: unknown, sctx: ServerContext) =>
        call(t, ctx, input, { client: clientOf(server, sctx, who), grant: who.grant })) as never,
    );
  }
  registerResources(server, ctx, (await mcpSdk()).ResourceTemplate);
  return server;
}
