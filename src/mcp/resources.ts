// Every document (and text file) the caller reaches is also an MCP resource: `kiln://<account>/<path>`, one
// URI template, listed and read as the tools read them (through ctx.nodes).
import type { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import type { Ctx } from '../context.ts';
import { nodesOf } from '../store/nodes.ts';
import { documentContent } from '../nodes/serve.ts';
import { decodeUtf8Exact } from '../save/versions.ts';
import { contentTypeFor, EDITABLE_EXTENSIONS, extensionOf } from '../uploads/content-types.ts';
import { notFound } from '../errors.ts';
import { fullPathOf, nodeAt, reachedAccounts } from './tools/common.ts';

export const URI_TEMPLATE = 'kiln://{account}/{+path}';

/** `kiln://alice/notes/todo.html` (each path segment percent-encoded). */
export const resourceUri = (account: string, path: string) =>
  `kiln://${account}/${path.split('/').map(encodeURIComponent).join('/')}`;

/** At most this many resources are listed (list_documents pages through any number). */
const MAX_LISTED = 1_000;

async function listed(ctx: Ctx) {
  const resources = [];
  for (const account of await reachedAccounts(ctx))
    for (const node of await nodesOf(ctx.database.db, account.id, { ordered: true })) {
      if (resources.length >= MAX_LISTED) return resources;
      if (node.type === 'folder' || !(await ctx.nodes.may(node, 'view'))) continue;
      const path = fullPathOf(node);
      resources.push({
        uri: resourceUri(account.username, path),
        name: `${account.username}/${path}`,
        mimeType: contentTypeFor(node.name),
        size: node.size,
      });
    }
  return resources;
}

async function read(ctx: Ctx, uri: string, account: string, path: string) {
  const { node } = await nodeAt(ctx, { account, path: decodeURIComponent(path) }, 'view');
  const mimeType = node.type === 'site' ? 'text/html' : contentTypeFor(node.name);
  let bytes: Buffer | null = null;
  if (node.type === 'site') bytes = (await documentContent(ctx, node))?.bytes ?? null;
  else if (node.type === 'upload' && node.blob_sha256) bytes = await ctx.blobs.get(node.blob_sha256);
  if (!bytes) throw notFound();
  const text = node.type === 'site' || EDITABLE_EXTENSIONS.has(extensionOf(node.name)) ? decodeUtf8Exact(bytes) : null;
  return { contents: [text !== null ? { uri, mimeType, text } : { uri, mimeType, blob: bytes.toString('base64') }] };
}

export function registerResources(server: McpServer, ctx: Ctx, Template: typeof ResourceTemplate): void {
  const template = new Template(URI_TEMPLATE, { list: async () => ({ resources: await listed(ctx) }) });
  server.registerResource(
    'document',
    template,
    { title: 'Kiln documents and files', description: 'A document or file of an account you reach.' },
    async (uri, variables) => read(ctx, uri.href, String(variables.account), String(variables.path)),
  );
}
