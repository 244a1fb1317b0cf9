// `kiln mcp`: Kiln's tools for agents configured with a command line (Claude Desktop's config file,
// `claude mcp add kiln -- node /path/to/kiln/bin/kiln.js mcp`). An MCP server on standard input and output that forwards every request
// to a Kiln's `/_/mcp` (local or remote: KILN_URL) with the key in KILN_KEY, through the official SDK on both
// sides: the local client speaks whichever protocol version it speaks (2025 handshake or 2026-07-28), and so does
// the bridge with Kiln. Standard output carries protocol messages only; what is wrong (no key, a refused key, a
// Kiln that cannot be reached) is said on standard error, and the command exits 1. The client's own name reaches
// Kiln in `X-Kiln-Agent`, so that its writes are named for it ("Claude Desktop via sync key hcsk_…").
import type { Client } from '@modelcontextprotocol/client';
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { SERVER_INFO } from './server.ts';

export const DEFAULT_URL = 'http://localhost:8080';

const say = (line: string) => process.stderr.write(`kiln mcp: ${line}\n`);

/** A first request to the door: its refusal or silence, said in words a person acts on; null when it answers. */
async function preflight(url: URL, key: string): Promise<string | null> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return `cannot reach Kiln at ${url.origin} (${cause?.code ?? cause?.message ?? (err as Error).message}). Is KILN_URL right, and is Kiln running?`;
  }
  if (res.ok) return null;
  const body = (await res.json().catch(() => null)) as { msg?: string; code?: string } | null;
  if (res.status === 401 || res.status === 403)
    return `Kiln at ${url.origin} refused the key in KILN_KEY (${body?.code ?? res.status}): ${body?.msg ?? res.statusText}`;
  if (res.status === 404)
    return `${url.href} is not a Kiln MCP endpoint (404). Is KILN_URL the main address of a Kiln?`;
  return `Kiln at ${url.origin} answered ${res.status}${body?.msg ? `: ${body.msg}` : ''}`;
}

/** The local client's name, for `X-Kiln-Agent`: the 2026-07-28 envelope's, or the handshake's. */
function clientName(server: Server, ctx: ServerContext): string | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, { name?: string; title?: string } | undefined> | undefined;
  const info = envelope?.['io.modelcontextprotocol/clientInfo'] ?? server.getClientVersion();
  return info?.title ?? info?.name;
}

/** A local server whose every request is the remote Kiln's answer. */
async function proxy(remote: Client, agent: { name?: string }): Promise<Server> {
  const { Server } = await import('@modelcontextprotocol/server');
  const server = new Server(
    { ...SERVER_INFO, ...remote.getServerVersion(), name: 'kiln' },
    { capabilities: { tools: {}, resources: {} }, instructions: remote.getInstructions() },
  );
  // Each request: note who asks (for X-Kiln-Agent), then hand it to Kiln.
  const note = (ctx: ServerContext) => {
    agent.name = clientName(server, ctx) ?? agent.name;
  };
  server.setRequestHandler('tools/list', (req, ctx) => {
    note(ctx);
    return remote.listTools(req.params);
  });
  server.setRequestHandler('tools/call', (req, ctx) => {
    note(ctx);
    return remote.callTool(req.params);
  });
  server.setRequestHandler('resources/list', (req, ctx) => {
    note(ctx);
    return remote.listResources(req.params);
  });
  server.setRequestHandler('resources/templates/list', (req, ctx) => {
    note(ctx);
    return remote.listResourceTemplates(req.params);
  });
  server.setRequestHandler('resources/read', (req, ctx) => {
    note(ctx);
    return remote.readResource(req.params);
  });
  return server;
}

/** Runs the bridge until standard input ends; resolves with the exit code (1: it could not start). */
export async function mcpStdio(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const key = env.KILN_KEY?.trim();
  if (!key) {
    say('no key: set KILN_KEY to a key of your Kiln account (a sync key, hcsk_…, from the dashboard).');
    return 1;
  }
  let url: URL;
  try {
    url = new URL('/_/mcp', env.KILN_URL?.trim() || DEFAULT_URL);
  } catch {
    say(`KILN_URL is not a URL: ${env.KILN_URL}`);
    return 1;
  }
  const problem = await preflight(url, key);
  if (problem) {
    say(problem);
    return 1;
  }
  const [{ Client, StreamableHTTPClientTransport }, { serveStdio }] = await Promise.all([
    import('@modelcontextprotocol/client'),
    import('@modelcontextprotocol/server/stdio'),
  ]);
  const agent: { name?: string } = {};
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    // The local client's name goes with each request (read when the request is made).
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      if (agent.name) headers.set('x-kiln-agent', agent.name.replace(/[^\x20-\x7e]/g, '?').slice(0, 60));
      return fetch(input, { ...init, headers });
    },
  });
  const remote = new Client(
    { name: 'kiln-mcp', version: SERVER_INFO.version },
    { versionNegotiation: { mode: 'auto' } },
  );
  try {
    await remote.connect(transport);
  } catch (err) {
    say(`cannot connect to ${url.href}: ${(err as Error).message}`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    const handle = serveStdio(() => proxy(remote, agent), {
      onerror: (err) => say(err.message),
    });
    process.stdin.once('end', () => {
      void handle.close().finally(() => remote.close().finally(() => resolve(0)));
    });
  });
}
