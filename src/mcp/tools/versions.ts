// The history tools: list_versions, read_version, diff_versions, restore_version. A document's versions are
// whoever may look back on it (the table's `versions`); a restore is a new save of the old bytes, through THE
// pipeline, named for the agent (so it can be undone by restoring the version before it).
import { z } from 'zod';
import type { Ctx } from '../../context.ts';
import { tool } from '../tool.ts';
import { listVersions } from '../../save/history.ts';
import { restoreVersion, versionedDocument, versionOf } from '../../documents/versions.ts';
import { documentContent } from '../../nodes/serve.ts';
import { shortDiff } from '../../core/html-edit.ts';
import { exactly } from '../../core/conditional.ts';
import { badRequest, notFound } from '../../errors.ts';
import { agentSavedBy } from '../agent.ts';
import { accountField, accountNamed, cleanPath, etagField, fullPathOf, pathField, whoChanged } from './common.ts';
import { MAX_CHARS } from './documents.ts';

const versionShape = z.object({
  id: z.number().describe('The version’s id (read_version, diff_versions, restore_version take it).'),
  number: z.number().describe('1 for the first version of the document, then one more per save.'),
  createdAt: z.string(),
  size: z.number(),
  savedBy: z.string().describe('How it was saved: browser, editor, sync key, restore, or the agent’s name.'),
  username: z.string().nullable().describe('Whose account saved it.'),
});

const versionId = z.number().int().min(1);

function shaped(v: Awaited<ReturnType<typeof listVersions>>[number]) {
  return {
    id: v.id,
    number: v.backupNumber,
    createdAt: v.createdAt,
    size: v.size,
    savedBy: v.savedByAgent ?? v.savedBy,
    username: v.savedByUsername,
  };
}

export const listVersionsTool = tool({
  name: 'list_versions',
  title: 'List a document’s versions',
  description:
    'Lists a document’s saved versions, newest first: id, number, time, size and who saved it (a browser, the code editor, a sync key, a restore, or an agent by name). Example: {"path": "notes/todo.html", "limit": 10}',
  input: z.object({
    account: accountField,
    path: pathField('notes/todo.html'),
    limit: z.number().int().min(1).max(500).default(50),
  }),
  output: z.object({ path: z.string(), total: z.number(), versions: z.array(versionShape) }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const account = await accountNamed(ctx, input.account);
    const node = await versionedDocument(ctx, { ownerId: account.id, path: cleanPath(input.path) });
    const all = await listVersions(ctx.database.db, node.id);
    return { path: fullPathOf(node), total: all.length, versions: all.slice(0, input.limit).map(shaped) };
  },
});

export const readVersion = tool({
  name: 'read_version',
  title: 'Read a version',
  description:
    'Reads the HTML of one saved version of a document (by the id list_versions gives), cut at maxChars like read_document. Example: {"id": 1234}',
  input: z.object({
    id: versionId,
    offset: z.number().int().min(0).default(0),
    maxChars: z.number().int().min(1).max(MAX_CHARS).default(MAX_CHARS),
  }),
  output: versionShape.extend({
    path: z.string(),
    html: z.string(),
    truncated: z.boolean(),
    nextOffset: z.number().optional(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const { v, node, info } = await versionOf(ctx, { id: input.id });
    const text = v.bytes.toString('utf8');
    const html = text.slice(input.offset, input.offset + input.maxChars);
    const end = input.offset + html.length;
    const more = end < text.length;
    return { ...shaped(info), path: fullPathOf(node), html, truncated: more, ...(more ? { nextOffset: end } : {}) };
  },
});

/** A version's text, or the document's current one (`current`). */
async function textOf(ctx: Ctx, id: number | 'current', nodeId: number) {
  if (id !== 'current') {
    const { v, node } = await versionOf(ctx, { id });
    if (node.id !== nodeId) throw badRequest('Both versions must be of the same document.', 'invalid');
    return v.bytes.toString('utf8');
  }
  const node = await versionedDocument(ctx, nodeId);
  const stored = await documentContent(ctx, node);
  if (!stored) throw notFound();
  return stored.bytes.toString('utf8');
}

export const diffVersions = tool({
  name: 'diff_versions',
  title: 'Compare two versions',
  description:
    'A unified diff between two versions of a document, or between a version and the document as it is now (omit `to`). Example: {"from": 1230, "to": 1234}',
  input: z.object({
    from: versionId,
    to: versionId.optional().describe('A later version; none: the current document.'),
  }),
  output: z.object({ path: z.string(), from: z.number(), to: z.number().nullable(), diff: z.string() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const { v, node } = await versionOf(ctx, { id: input.from });
    const after = await textOf(ctx, input.to ?? 'current', node.id);
    return {
      path: fullPathOf(node),
      from: input.from,
      to: input.to ?? null,
      diff: shortDiff(v.bytes.toString('utf8'), after, fullPathOf(node)),
    };
  },
});

export const restoreVersionTool = tool({
  name: 'restore_version',
  title: 'Restore a version',
  description:
    'Makes an earlier version the document’s content again, as a new save (a new version: nothing is lost, and it can itself be undone). Pass the document’s current etag to be sure nobody saved since you looked. Example: {"id": 1230, "etag": "…"}',
  input: z.object({ id: versionId, etag: etagField.optional() }),
  output: z.object({
    path: z.string(),
    etag: z.string(),
    changed: z.boolean(),
    version: z.object({ id: z.number(), number: z.number() }).nullable(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input, agent) {
    const { node } = await versionOf(ctx, { id: input.id });
    return whoChanged(ctx, node.id, async () => {
      const by = agentSavedBy(ctx.caller, agent);
      const ifMatch = input.etag !== undefined ? exactly(input.etag) : undefined;
      const { result } = await restoreVersion(ctx, { id: input.id, by, ifMatch });
      return {
        path: fullPathOf(node),
        etag: result.checksum,
        changed: result.changed,
        version: result.version ?? null,
      };
    });
  },
});
