// How to connect an agent to this Kiln with a key: the lines to paste into each client, made from the Kiln's own
// address (`BASE_URL`) and the key. Pure: the account page shows them once, beside the new key; a program gets
// them in the JSON answer that made the key. The local bridge runs `node <a Kiln checkout>/bin/kiln.js mcp`, never
// `npx kiln`: Kiln is not published on npm, and the package of that name there is someone else's, which would
// be handed the key.
import path from 'node:path';
import { ROOT } from '../paths.ts';

export interface ConnectLines {
  /** The MCP endpoint: `<root>/_/mcp`. */
  url: string;
  /** The header any client sends: `Authorization: Bearer hcak_…`. */
  header: string;
  /** Claude Code over HTTP (`claude mcp add --transport http …`). */
  claudeCode: string;
  /** Claude Code with the local bridge (`kiln mcp` over stdio). */
  claudeCodeStdio: string;
  /** Claude Desktop's `claude_desktop_config.json`. */
  claudeDesktop: string;
  /** Cursor's `~/.cursor/mcp.json` (or `.cursor/mcp.json` in a project). */
  cursor: string;
}

/** A value inside double quotes on a POSIX shell line (the key and URL hold nothing to escape, but say so). */
const quoted = (v: string) => `"${v.replace(/(["\\$`])/g, '\\$1')}"`;

/** The `kiln` command of the agent's machine: this checkout's when Kiln serves on the same machine (a loopback
 *  or `*.localhost` address), else where the person keeps a checkout of Kiln. */
export function bridgePath(baseUrl: string): string {
  const host = new URL(baseUrl).hostname;
  const local = host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || host.startsWith('127.');
  return local ? path.join(ROOT, 'bin', 'kiln.js') : '/path/to/kiln/bin/kiln.js';
}

export function connectLines(baseUrl: string, key: string): ConnectLines {
  const root = baseUrl.replace(/\/+$/, '');
  const bin = bridgePath(root);
  const url = `${root}/_/mcp`;
  const header = `Authorization: Bearer ${key}`;
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  return {
    url,
    header,
    claudeCode: `claude mcp add --transport http kiln ${url} --header ${quoted(header)}`,
    claudeCodeStdio: `claude mcp add kiln -e KILN_URL=${root} -e KILN_KEY=${key} -- node ${quoted(bin)} mcp`,
    claudeDesktop: json({
      mcpServers: { kiln: { command: 'node', args: [bin, 'mcp'], env: { KILN_URL: root, KILN_KEY: key } } },
    }),
    cursor: json({ mcpServers: { kiln: { url, headers: { Authorization: `Bearer ${key}` } } } }),
  };
}
