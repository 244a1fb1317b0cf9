// How to connect an agent to this Kiln with a key: the lines to paste into each client, made from the Kiln's own
// address (`BASE_URL`) and the key. Pure: the account page shows them once, beside the new key; a program gets
// them in the JSON answer that made the key.

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

export function connectLines(baseUrl: string, key: string): ConnectLines {
  const root = baseUrl.replace(/\/+$/, '');
  const url = `${root}/_/mcp`;
  const header = `Authorization: Bearer ${key}`;
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  return {
    url,
    header,
    claudeCode: `claude mcp add --transport http kiln ${url} --header ${quoted(header)}`,
    claudeCodeStdio: `claude mcp add kiln -e KILN_URL=${root} -e KILN_KEY=${key} -- npx kiln mcp`,
    claudeDesktop: json({
      mcpServers: { kiln: { command: 'npx', args: ['kiln', 'mcp'], env: { KILN_URL: root, KILN_KEY: key } } },
    }),
    cursor: json({ mcpServers: { kiln: { url, headers: { Authorization: `Bearer ${key}` } } } }),
  };
}
