// The reading tools: list_documents, read_document, search_documents. They read the trees of the accounts the
// caller reaches (its own and its teams'), each node as the access table lets the caller see it.
import { z } from 'zod';
import type { Ctx } from '../../context.ts';
import type { NodeRow } from '../../store/schema.ts';
import { tool } from '../tool.ts';
import { nodesOf } from '../../store/nodes.ts';
import { documentContent } from '../../nodes/serve.ts';
import { decodeUtf8Exact } from '../../save/versions.ts';
import { contentTypeFor, EDITABLE_EXTENSIONS, extensionOf } from '../../uploads/content-types.ts';
import { elementSources } from '../../core/html-edit.ts';
import { notFound } from '../../errors.ts';
import {
  accountField,
  accountNamed,
  cleanPath,
  describe,
  fullPathOf,
  nodeAt,
  nodeShape,
  pathField,
  reachedAccounts,
  type Reached,
} from './common.ts';

/** The nodes of the accounts asked (or all reached), as the caller may see them, in tree order. */
async function visibleNodes(
  ctx: Ctx,
  account: string | undefined,
): Promise<Array<{ node: NodeRow; account: Reached }>> {
  const accounts = account ? [await accountNamed(ctx, account)] : await reachedAccounts(ctx);
  const out: Array<{ node: NodeRow; account: Reached }> = [];
  for (const a of accounts)
    for (const node of await nodesOf(ctx.database.db, a.id, { ordered: true }))
      if (await ctx.nodes.may(node, 'view')) out.push({ node, account: a });
  return out;
}

/** `*` any characters but `/`, `**` any characters, `?` one: a glob as a RegExp over a full path. */
function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}

const under = (folder: string) => {
  const f = cleanPath(folder).toLowerCase();
  return (path: string) => !f || path.toLowerCase().startsWith(`${f}/`);
};

export const listDocuments = tool({
  name: 'list_documents',
  title: 'List documents',
  description:
    'Lists the documents (self-saving HTML pages), folders and files of your Kiln account and of the teams you belong to: path, kind, size, last change, etag and public URL. Filter by `folder` or by `glob` over the full path; page with `cursor`. Example: {"glob": "**/*.html"} lists every document; {"account": "acme", "folder": "blog"} lists what the team acme has in blog/.',
  input: z.object({
    account: accountField,
    folder: z.string().max(1024).optional().describe('Only what is in this folder (at any depth), e.g. "notes/2026".'),
    glob: z
      .string()
      .max(256)
      .optional()
      .describe('Only paths matching this pattern: * within a folder name, ** across folders, ? one character.'),
    cursor: z.string().max(32).optional().describe('The nextCursor of the previous page.'),
    limit: z.number().int().min(1).max(500).default(200),
  }),
  output: z.object({
    accounts: z
      .array(z.object({ account: z.string(), kind: z.enum(['personal', 'team']), role: z.string() }))
      .describe('The accounts you reach, and your role in each.'),
    items: z.array(nodeShape),
    nextCursor: z.string().optional().describe('More items follow: pass this as cursor.'),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const accounts = await reachedAccounts(ctx);
    const inFolder = under(input.folder ?? '');
    const glob = input.glob ? globRegExp(input.glob) : null;
    const all = (await visibleNodes(ctx, input.account)).filter(({ node }) => {
      const path = fullPathOf(node);
      return inFolder(path) && (!glob || glob.test(path));
    });
    const start = Math.max(0, Number(input.cursor ?? 0) || 0);
    const page = all.slice(start, start + input.limit);
    return {
      accounts: accounts.map((a) => ({ account: a.username, kind: a.kind, role: a.role })),
      items: page.map(({ node, account }) => describe(ctx, node, account)),
      ...(start + input.limit < all.length ? { nextCursor: String(start + input.limit) } : {}),
    };
  },
});

/** How much text one answer carries at most (a model's context is the limit, not the document's). */
export const MAX_CHARS = 200_000;

/** A text as an answer takes it: from `offset`, at most `max` characters, saying whether it was cut. */
function window(text: string, offset: number, max: number) {
  const part = text.slice(offset, offset + max);
  const cut = offset + part.length < text.length;
  return { part, truncated: cut, ...(cut ? { nextOffset: offset + part.length } : {}) };
}

const readOutput = nodeShape.extend({
  html: z.string().optional().describe('The document’s HTML (from offset; see truncated).'),
  text: z.string().optional().describe('A text file’s content.'),
  elements: z.array(z.string()).optional().describe('The source of each element the selector matched.'),
  matched: z.number().optional().describe('How many elements the selector matched.'),
  contentType: z.string().optional(),
  truncated: z.boolean().describe('True when the answer stops before the end: ask again from nextOffset.'),
  nextOffset: z.number().optional(),
});

/** A document's answer: all of it, or the elements a selector matches. */
function documentAnswer(html: string, input: { selector?: string; offset: number; maxChars: number }) {
  if (input.selector === undefined) {
    const w = window(html, input.offset, input.maxChars);
    return { html: w.part, truncated: w.truncated, ...(w.nextOffset ? { nextOffset: w.nextOffset } : {}) };
  }
  const found = elementSources(html, input.selector);
  const elements: string[] = [];
  let room = input.maxChars;
  for (const source of found) {
    if (room <= 0) break;
    elements.push(source.slice(0, room));
    room -= source.length;
  }
  return { elements, matched: found.length, truncated: room < 0 || elements.length < found.length };
}

export const readDocument = tool({
  name: 'read_document',
  title: 'Read a document',
  description:
    'Reads a document’s HTML and its etag (pass the etag to edit_document or write_document). Give `selector` (CSS) to get only the matching elements, e.g. {"path": "todo.html", "selector": "#items > li"}; long answers are cut at maxChars (truncated: true, continue with offset). A text file (.css, .js, .json, .md …) answers its text; other files their size and type only.',
  input: z.object({
    account: accountField,
    path: pathField('notes/todo.html'),
    selector: z.string().max(1000).optional().describe('Only the elements matching this CSS selector.'),
    offset: z.number().int().min(0).default(0).describe('Start at this character (after a truncated answer).'),
    maxChars: z.number().int().min(1).max(MAX_CHARS).default(MAX_CHARS),
  }),
  output: readOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const { node, account } = await nodeAt(ctx, input, 'view');
    const described = describe(ctx, node, account);
    if (node.type === 'folder') return { ...described, truncated: false };
    if (node.type === 'site') {
      const stored = await documentContent(ctx, node);
      if (!stored) throw notFound();
      const html = stored.bytes.toString('utf8');
      return { ...described, etag: stored.checksum, ...documentAnswer(html, input) };
    }
    const contentType = contentTypeFor(node.name);
    const blob =
      EDITABLE_EXTENSIONS.has(extensionOf(node.name)) && node.blob_sha256
        ? await ctx.blobs.get(node.blob_sha256)
        : null;
    const text = blob ? decodeUtf8Exact(blob) : null;
    if (text === null) return { ...described, contentType, truncated: false };
    const w = window(text, input.offset, input.maxChars);
    return {
      ...described,
      contentType,
      text: w.part,
      truncated: w.truncated,
      ...(w.nextOffset ? { nextOffset: w.nextOffset } : {}),
    };
  },
});

/** How many documents one search reads at most. */
const SEARCH_DOCUMENTS = 1_000;
const SNIPPETS = 3;
const AROUND = 60;

function snippetsOf(text: string, query: string): string[] {
  const lower = text.toLowerCase();
  const q = query.toLowerCase();
  const out: string[] = [];
  for (let at = lower.indexOf(q); at !== -1 && out.length < SNIPPETS; at = lower.indexOf(q, at + q.length)) {
    const from = Math.max(0, at - AROUND);
    const to = Math.min(text.length, at + q.length + AROUND);
    out.push(`${from > 0 ? '…' : ''}${text.slice(from, to).replace(/\s+/g, ' ')}${to < text.length ? '…' : ''}`);
  }
  return out;
}

export const searchDocuments = tool({
  name: 'search_documents',
  title: 'Search documents',
  description:
    'Finds the documents whose HTML contains a text (case-insensitive), across your account and your teams: each with its path and a few snippets around the matches. Example: {"query": "price", "folder": "shop"}.',
  input: z.object({
    query: z.string().min(1).max(200),
    account: accountField,
    folder: z.string().max(1024).optional().describe('Only documents in this folder.'),
    limit: z.number().int().min(1).max(100).default(20),
  }),
  output: z.object({
    results: z.array(
      z.object({ account: z.string(), path: z.string(), etag: z.string().nullable(), snippets: z.array(z.string()) }),
    ),
    complete: z
      .boolean()
      .describe('False when not every document was searched (limit reached, or too many): narrow with folder.'),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const inFolder = under(input.folder ?? '');
    const documents = (await visibleNodes(ctx, input.account)).filter(
      ({ node }) => node.type === 'site' && inFolder(fullPathOf(node)),
    );
    const results = [];
    let searched = 0;
    for (const { node, account } of documents.slice(0, SEARCH_DOCUMENTS)) {
      if (results.length >= input.limit) break;
      searched++;
      const stored = await documentContent(ctx, node);
      const snippets = stored ? snippetsOf(stored.bytes.toString('utf8'), input.query) : [];
      if (snippets.length)
        results.push({ account: account.username, path: fullPathOf(node), etag: node.checksum, snippets });
    }
    return { results, complete: searched === documents.length };
  },
});
