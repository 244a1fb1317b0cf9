// Every document (and text file) the caller reaches is also an MCP resource: `kiln://<account>/<path>`, one
// URI template, listed and read as the tools read them (through ctx.nodes).
import type { Server, UriTemplate } from '@modelcontextprotocol/server';
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

/** The template's words, as resources/templates/list gives them and each listed resource carries. */
const WORDS = { title: 'Kiln documents and files', description: 'A document or file of an account you reach.' };

let template: UriTemplate | null = null;

/** resources/list, resources/templates/list and resources/read on a request's server, for its caller. */
export function registerResources(server: Server, ctx: Ctx, sdk: typeof import('@modelcontextprotocol/server')): void {
  server.setRequestHandler('resources/list', async () => ({
    resources: (await listed(ctx)).map((r) => ({ ...WORDS, ...r })),
  }));
  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: [{ name: 'document', uriTemplate: URI_TEMPLATE, ...WORDS }],
  }));
  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    if (!URL.canParse(uri))
      throw new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, `Resource URI ${uri} is invalid`);
    const href = new URL(uri).href;
    template ??= new sdk.UriTemplate(URI_TEMPLATE);
    const variables = template.match(href);
    if (!variables) throw new sdk.ResourceNotFoundError(uri);
    return read(ctx, href, String(variables.account), String(variables.path));
  });
}
