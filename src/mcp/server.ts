// The MCP server of one request: the official SDK's `Server` answering tools/list, tools/call and the resources
// (src/mcp/resources.ts), run with the caller's ctx. The SDK wants an instance per request (one transport each,
// and an instance keeps what a client said of itself), so what costs is made once per process instead: the
// catalog of TOOLS, each with its JSON Schemas and its tools/list entry. An instance is then a handful of
// handlers over that catalog and this request's ctx: nothing of one caller is kept where another's request
// could see it. A tool's KilnError is its result with `isError: true`: the text "<code>: <message>" for the
// model, and `{error: {code, message, status, …}}` for programs. The SDK is loaded on first use (only agents
// need it).
import type { Server, ServerContext } from '@modelcontextprotocol/server';
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
function clientOf(server: Server, sctx: ServerContext, who: CallAgent): string {
  if (who.bridged) return who.bridged;
  const envelope = sctx.mcpReq.envelope as Record<string, { name?: string; title?: string } | undefined> | undefined;
  const info = envelope?.[CLIENT_INFO] ?? server.getClientVersion();
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

/** The fields of the tools' answers that carry long text: a page, a file, the sources of matched elements, a
 *  diff. */
const LONG_TEXT = new Set(['html', 'text', 'elements', 'diff']);

/** An answer as both readers take it. `structuredContent` (declared by the output schema) is what the SDK's
 *  clients and Claude Code read; `content` is for clients that read text only (the spec asks for the JSON there
 *  too). There the long text follows the JSON of the rest as text blocks of its own: a page is escaped once for
 *  the answer, not a second time as a JSON string inside a JSON string, and a model reads it as it is. */
export function answerOf(out: Record<string, unknown>): Result {
  const rest: Record<string, unknown> = {};
  const long: string[] = [];
  for (const [field, value] of Object.entries(out)) {
    if (LONG_TEXT.has(field) && typeof value === 'string') long.push(value);
    else if (LONG_TEXT.has(field) && Array.isArray(value)) long.push(...value.map(String));
    else rest[field] = value;
  }
  const text = (t: string) => ({ type: 'text' as const, text: t });
  return { content: [text(JSON.stringify(rest)), ...long.map(text)], structuredContent: out };
}

/** A tool's JSON Schema as tools/list declares it (draft 2020-12, the SDK's target): every tool's input and
 *  output are objects. */
function jsonSchemaOf(schema: Tool['input'], io: 'input' | 'output'): Record<string, unknown> {
  const std = (schema as unknown as { '~standard': { jsonSchema: Record<string, (o: object) => unknown> } })[
    '~standard'
  ];
  const json = std.jsonSchema[io]({ target: 'draft-2020-12' }) as Record<string, unknown>;
  if (json.type !== 'object') throw new Error(`An MCP tool's ${io} schema must describe an object.`);
  return json;
}

/** Freezes a value and everything in it: the catalog is shared by every request, so nothing may change it. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

interface Catalog {
  /** The tools/list answer's tools, in TOOLS order. */
  listed: ReadonlyArray<Record<string, unknown>>;
  byName: ReadonlyMap<string, { tool: Tool; outputJson: Record<string, unknown> }>;
}

let catalog: Catalog | null = null;

/** TOOLS as the door declares them, worked out once per process. */
function toolCatalog(): Catalog {
  if (catalog) return catalog;
  const byName = new Map<string, { tool: Tool; outputJson: Record<string, unknown> }>();
  const listed = TOOLS.map((t) => {
    const outputJson = jsonSchemaOf(t.output, 'output');
    byName.set(t.name, { tool: t, outputJson });
    return {
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: jsonSchemaOf(t.input, 'input'),
      outputSchema: outputJson,
      annotations: { title: t.title, ...t.annotations },
    };
  });
  catalog = deepFreeze({ listed, byName });
  return catalog;
}

/** One tools/call: its input checked against the tool's schema, the tool run as the caller, its answer checked
 *  against the declared output (a mismatch is Kiln's bug). */
async function callTool(
  sdk: typeof import('@modelcontextprotocol/server'),
  ctx: Ctx,
  name: string,
  args: unknown,
  agent: () => AgentInfo,
): Promise<Result> {
  const entry = toolCatalog().byName.get(name);
  if (!entry) throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
  const { tool: t } = entry;
  const input = t.input.safeParse(args ?? {});
  if (!input.success) {
    const why = input.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message));
    return refusal(new KilnError(400, `Invalid arguments for ${name}: ${why.join('; ')}`, 'invalid'));
  }
  let out: Record<string, unknown>;
  try {
    out = (await t.run(ctx, input.data as never, agent())) as Record<string, unknown>;
  } catch (err) {
    return refusal(err);
  }
  const checked = t.output.safeParse(out);
  if (!checked.success) return refusal(new Error(`${name} answered outside its output schema: ${checked.error}`));
  return answerOf(out);
}

let sdk: Promise<typeof import('@modelcontextprotocol/server')> | null = null;
/** The SDK, loaded once (an `import()` of a loaded module still costs a resolution each time). */
export const mcpSdk = () => (sdk ??= import('@modelcontextprotocol/server'));

type ServerClass = typeof import('@modelcontextprotocol/server').Server;
let kilnServer: ServerClass | null = null;

/** The SDK's `Server`, but for the error its teardown makes when a request's transport closes: it is made
 *  (its stack captured: 3-4% of a 2026-07-28 call) whether or not anything is left to fail with it. Once the
 *  exchange's answer is delivered (the SDK's per-request transport closes itself then) and no request to the
 *  client is pending, nothing can fail with it, and it is made without a stack; otherwise as the SDK makes it.
 *  The teardown itself is the SDK's. */
function serverClass(mcp: typeof import('@modelcontextprotocol/server')): ServerClass {
  kilnServer ??= class KilnServer extends mcp.Server {
    override _onclose(): void {
      const self = this as unknown as {
        _responseHandlers?: { size: number };
        _transport?: { _terminalDelivered?: boolean };
      };
      const answered = self._transport?._terminalDelivered === true && self._responseHandlers?.size === 0;
      if (!answered) {
        super._onclose();
        return;
      }
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        super._onclose();
      } finally {
        Error.stackTraceLimit = limit;
      }
    }
  };
  return kilnServer;
}

/** A server for one request of this caller. */
export async function kilnMcpServer(ctx: Ctx, who: CallAgent): Promise<Server> {
  const mcp = await mcpSdk();
  const { listed } = toolCatalog();
  const server = new (serverClass(mcp))(SERVER_INFO, {
    capabilities: { tools: {}, resources: {} },
    instructions: INSTRUCTIONS,
  });
  server.setRequestHandler('tools/list', () => ({ tools: listed as never }));
  server.setRequestHandler('tools/call', (request, sctx) =>
    callTool(mcp, ctx, request.params.name, request.params.arguments, () => ({
      client: clientOf(server, sctx, who),
      grant: who.grant,
    })),
  );
  registerResources(server, ctx, mcp);
  return server;
}
