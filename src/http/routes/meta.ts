// GET /_/meta — host discovery for the browser library: `spec` + `extensions` tell hyperclayjs to use
// Kiln's /_/sync live lanes; the `document` block describes the document named by Document-URL.
import type { RoutePlugin } from './plugin.ts';
import type { Services } from '../../services.ts';
import { documentUrlHeader } from '../../save/document-url.ts';
import { limits } from '../../limits.ts';
import { EVENT_DAYS } from '../../guard/guard.ts';
import { documentMeta } from '../../save/document-meta.ts';
import { MCP_PROTOCOL_VERSIONS } from '../../mcp/agent.ts';

/** What every host says of itself. `format`: `<html formathtml="true">` documents are re-indented on
 *  save; `conditional`: saves take If-Match and answer 412 on a stale one (hyperclay-local's host
 *  conformance page asks for both). `data-loss`: the data-clobber guard (GET /_/data-loss, POST
 *  /_/data-loss/<id>, `Save-Trigger`). `bus`: the host's message bus for its owner (src/bus), what a send's
 *  `delivered` counts, and whether Kiln itself answers AI edit requests. `mcp`: where agents connect (`/_/mcp`). */
function discovery(s: Services) {
  return {
    spec: 1,
    extensions: ['sync', 'upload', 'format', 'conditional', 'data-loss', 'bus', 'mcp'],
    dataLoss: {
      events: '/_/data-loss',
      saveTrigger: ['user', 'auto'],
      choices: ['restore', 'revert', 'dismiss'],
      keptDays: EVENT_DAYS,
      control: '/_/sync/control',
    },
    bus: {
      subscribe: '/_/bus/subscribe',
      send: '/_/bus/send',
      maxBytes: limits.bus.messageBytes,
      // A send's `delivered` counts the subscribers of the process that took it, not those of the others
      // (which hear it through Redis). Counting them all would need a shared tally of open streams, kept
      // right through a process that dies holding some, and a Redis round trip per send; no client reads
      // the count (hyperclayjs waits for a handler's ack instead).
      deliveredCounts: 'process',
      aiEdit: {
        builtIn: s.aiEdit.on,
        engines: s.aiEdit.list().map((e) => ({ name: e.name, default: e.isDefault })),
        agent: 'node <a Kiln checkout>/bin/kiln.js ai-edit serve',
      },
    },
    // Agents over MCP (src/mcp): the main app's endpoint, its transport and versions, the credential, the bridge.
    mcp: {
      endpoint: `${s.config.baseUrl}/_/mcp`,
      transport: 'streamable-http',
      protocolVersions: MCP_PROTOCOL_VERSIONS,
      credentials: ['Authorization: Bearer <key>', 'X-API-Key: <key>'],
      stdio: 'node <a Kiln checkout>/bin/kiln.js mcp',
    },
  };
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/meta', async (req, reply) => {
    reply.header('Cache-Control', 'no-store');
    // The document a page names (Document-URL), as far as the caller may see it (src/save/document-meta.ts).
    const url = documentUrlHeader(req.headers);
    const document = await documentMeta(req.ctx, { url, host: req.headers.host ?? '' });
    return document ? { ...discovery(s), document } : discovery(s);
  });
};
export default plugin;
