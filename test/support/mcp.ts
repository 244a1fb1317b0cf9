// MCP clients for tests: the official SDK's own Client, over its Streamable HTTP transport to an in-process Kiln's
// `/_/mcp` (the main app answers on 127.0.0.1), or in memory to a server built for any caller (a scoped credential
// made with personCaller). Every client lists the tools once after connecting: the SDK validates each tool's
// structured answer against the output schema that listing declared (a mismatch throws).
import assert from 'node:assert/strict';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TestKiln } from './kiln.ts';
import type { Caller } from '../../src/access/caller.ts';
import { contextOf } from '../../src/context.ts';
import { kilnMcpServer } from '../../src/mcp/server.ts';

export type ProtocolVersion = '2025-06-18' | '2025-11-25' | '2026-07-28';

export interface McpOptions {
  protocolVersion?: ProtocolVersion;
  /** The client's name (its clientInfo). */
  name?: string;
  /** Extra request headers (Origin, X-Kiln-Agent …). */
  headers?: Record<string, string>;
}

function clientFor(opts: McpOptions) {
  const modern = opts.protocolVersion === '2026-07-28';
  return new Client(
    { name: opts.name ?? 'test-agent', version: '1.0.0' },
    {
      ...(modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(opts.protocolVersion && !modern ? { supportedProtocolVersions: [opts.protocolVersion] } : {}),
    },
  );
}

/** The door's address on the test Kiln (a loopback name reaches the main app). */
export const mcpUrl = (kiln: TestKiln) => new URL(`http://127.0.0.1:${new URL(kiln.url).port}/_/mcp`);

/** One raw JSON-RPC POST to the door with a Bearer credential (protocol 2025-11-25), as a client's first bytes. */
export function rawMcp(kiln: TestKiln, token: string, body: unknown): Promise<Response> {
  return fetch(mcpUrl(kiln), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify(body),
  });
}

/** A connected client of the test Kiln's door, with `token` as its Bearer credential. */
export async function mcpClient(kiln: TestKiln, token: string, opts: McpOptions = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(kiln), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...opts.headers } },
  });
  const client = clientFor(opts);
  await client.connect(transport);
  await client.listTools();
  return client;
}

/** A client of a server made for `caller` directly (no HTTP): a credential's scope without its key. */
export async function mcpClientAs(kiln: TestKiln, caller: Caller, opts: McpOptions = {}): Promise<Client> {
  const server = await kilnMcpServer(contextOf(kiln.services, caller), {
    grant: 'test grant',
    bridged: null,
    clientHint: null,
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = clientFor(opts);
  await client.connect(b);
  await client.listTools();
  return client;
}

type Answer = { isError?: boolean; structuredContent?: any; content?: any };

/** A tool's structured answer; fails the test on a refusal. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as Answer;
  assert.ok(!r.isError, `${name} refused: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

/** A tool's refusal: `{code, message, status, …}`; fails the test when it succeeds. */
export async function refused(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as Answer;
  assert.ok(r.isError, `${name} should have been refused: ${JSON.stringify(r.structuredContent)}`);
  const text = r.content?.[0]?.text ?? '';
  assert.match(text, /^[a-z-]+: /, 'a refusal says its code first');
  return r.structuredContent?.error;
}
