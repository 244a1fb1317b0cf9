// The tools that change a document's HTML: edit_document (targeted edits of the stored text, src/core/html-edit.ts)
// and write_document (the whole page). Both save through THE pipeline as the agent (kind `agent`): a version each,
// the activity line naming the agent, the data-clobber guard's check (an agent's write is external to the page),
// the live push to the page's open tabs. A stale etag is 412 `conflict` with the current etag and who saved it.
import { z } from 'zod';
import type { Ctx } from '../../context.ts';
import type { NodeRow } from '../../store/schema.ts';
import { tool, type AgentInfo } from '../tool.ts';
import { KilnError, notFound } from '../../errors.ts';
import { documentContent } from '../../nodes/serve.ts';
import { decodeUtf8Exact } from '../../save/versions.ts';
import { conflictError, saveDocument } from '../../save/pipeline.ts';
import { assertDocumentBytes } from '../../save/root-html.ts';
import { exactly } from '../../core/conditional.ts';
import { applyEdits, shortDiff, type HtmlEdit } from '../../core/html-edit.ts';
import { newestVersion } from '../../store/nodes.ts';
import { createPath } from '../../nodes/tree.ts';
import type { SavedBy } from '../../save/saved.ts';
import { agentChange, agentSavedBy } from '../agent.ts';
import { accountField, accountNamed, cleanPath, etagField, nodeAt, pathField, whoChanged } from './common.ts';

const target = {
  selector: z.string().max(1000).optional().describe('CSS selector of the one element to edit, e.g. "#items".'),
  editId: z.string().max(200).optional().describe('Or the element’s data-edit-id.'),
};
const html = z.string().max(1_000_000);

const editSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('replaceText'),
    find: z.string().min(1).max(100_000).describe('Exact text of the stored HTML; must occur exactly once.'),
    replace: z.string().max(1_000_000),
  }),
  z.object({ op: z.enum(['replace', 'replaceInner', 'insertBefore', 'insertAfter', 'append']), ...target, html }),
  z.object({ op: z.literal('setAttribute'), ...target, name: z.string().min(1).max(200), value: z.string() }),
  z.object({ op: z.literal('removeAttribute'), ...target, name: z.string().min(1).max(200) }),
  z.object({ op: z.literal('remove'), ...target }),
]);
type EditInput = z.infer<typeof editSchema>;

/** An element edit names its element once: by selector or by data-edit-id. */
function asEdit(e: EditInput, index: number): HtmlEdit {
  if (e.op === 'replaceText') return e;
  const { selector, editId, ...rest } = e;
  if ((selector === undefined) === (editId === undefined))
    throw new KilnError(400, `Edit ${index + 1}: give either selector or editId.`, 'edit-invalid', { edit: index });
  return (selector !== undefined ? { ...rest, selector } : { ...rest, editId }) as HtmlEdit;
}

const savedShape = z.object({
  path: z.string(),
  etag: z.string().describe('The document’s etag now: pass it to the next edit.'),
  changed: z.boolean().describe('False when the result was the stored page already (no version made).'),
  version: z
    .object({ id: z.number(), number: z.number() })
    .nullable()
    .describe('The version this write made (read_version, restore_version).'),
  diff: z.string().describe('A short unified diff of the change.'),
});

/** The bytes of a page an agent sends: UTF-8 with a root <html> element (as every outside writer's). */
function pageBytes(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  assertDocumentBytes(bytes);
  return bytes;
}

/** The version a document's creation made (its newest). */
async function firstVersion(ctx: Ctx, nodeId: number) {
  const v = await newestVersion(ctx.database.db, nodeId);
  return v ? { id: v.id, number: v.backup_number } : null;
}

/** The stored text of a document, or 404; a page that is not UTF-8 text cannot be edited as text. */
async function storedText(ctx: Ctx, node: NodeRow): Promise<{ text: string; etag: string }> {
  const stored = await documentContent(ctx, node);
  if (!stored) throw notFound();
  const text = decodeUtf8Exact(stored.bytes);
  if (text === null)
    throw new KilnError(
      415,
      'This document is not UTF-8 text: replace it whole with write_document.',
      'unsupported-media-type',
    );
  return { text, etag: stored.checksum };
}

/** One try of an edit: read, edit, save under the etag read (or the caller's). */
async function editOnce(ctx: Ctx, node: NodeRow, edits: HtmlEdit[], etag: string | undefined, by: SavedBy) {
  const stored = await storedText(ctx, node);
  // A stale etag is refused before the edits are matched against a page the caller has not seen.
  if (etag !== undefined && etag !== stored.etag)
    throw conflictError(stored.etag, node.saved_by_account_id, node.saved_by_writer, by);
  const edited = applyEdits(stored.text, edits);
  const result = await saveDocument(ctx, {
    nodeId: node.id,
    bytes: pageBytes(edited.text),
    by,
    ifMatch: exactly(etag ?? stored.etag),
  });
  return { result, diff: edited.diff };
}

export const editDocument = tool({
  name: 'edit_document',
  title: 'Edit a document',
  description:
    'Changes parts of a document without resending it, in one save (one version): exact-text replacements and element edits by CSS selector or data-edit-id (replace, replaceInner, insertBefore, insertAfter, append, setAttribute, removeAttribute, remove). Each edit must match exactly once, else nothing changes and the refusal names the count. Pass the etag you read to be sure nobody changed the page since. Example: {"path": "todo.html", "etag": "…", "edits": [{"op": "replaceText", "find": "<li>milk</li>", "replace": "<li>oat milk</li>"}, {"op": "append", "selector": "#items", "html": "<li>eggs</li>"}]}',
  input: z.object({
    account: accountField,
    path: pathField('notes/todo.html'),
    edits: z.array(editSchema).min(1).max(100),
    etag: etagField.optional(),
  }),
  output: savedShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(ctx, input, agent) {
    const edits = input.edits.map(asEdit);
    const by = agentSavedBy(ctx.caller, agent);
    let { node } = await nodeAt(ctx, input, 'save', 'site');
    return whoChanged(ctx, node.id, async () => {
      // Without the caller's etag, a save that lands between the read and the write makes the edit start over
      // on the new page (a few times): the edit never overwrites what it did not see.
      for (let attempt = 0; ; attempt++) {
        try {
          const { result, diff } = await editOnce(ctx, node, edits, input.etag, by);
          const version = result.version ?? null;
          return { path: cleanPath(input.path), etag: result.checksum, changed: result.changed, version, diff };
        } catch (err) {
          if (input.etag !== undefined || attempt >= 3 || !(err instanceof KilnError) || err.code !== 'conflict')
            throw err;
          ({ node } = await nodeAt(ctx, input, 'save', 'site'));
        }
      }
    });
  },
});

/** Writes a whole page over an existing document, under the etag the caller read it at. */
async function overwrite(
  ctx: Ctx,
  node: NodeRow,
  input: { path: string; html: string; etag?: string },
  agent: AgentInfo,
) {
  if (input.etag === undefined)
    throw new KilnError(
      428,
      'This document exists: pass the etag you read it at (read_document), so that nobody’s change is overwritten unseen.',
      'precondition-required',
    );
  const by = agentSavedBy(ctx.caller, agent);
  return whoChanged(ctx, node.id, async () => {
    const before = await storedText(ctx, node).catch(() => ({ text: '', etag: '' }));
    const result = await saveDocument(ctx, {
      nodeId: node.id,
      bytes: pageBytes(input.html),
      by,
      ifMatch: exactly(input.etag!),
    });
    return {
      path: cleanPath(input.path),
      etag: result.checksum,
      changed: result.changed,
      version: result.version ?? null,
      diff: shortDiff(before.text, input.html),
    };
  });
}

export const writeDocument = tool({
  name: 'write_document',
  title: 'Write a whole document',
  description:
    'Replaces a document’s whole HTML (or creates the document when nothing is at the path). For an existing document the etag you read it at is required; a stale one is refused with the current etag and who changed it. Prefer edit_document for small changes. Example: {"path": "hello.html", "html": "<!DOCTYPE html><html><body><h1>Hello</h1></body></html>"}',
  input: z.object({
    account: accountField,
    path: pathField('hello.html'),
    html: z.string().min(1).max(6_000_000).describe('The whole page, with its <html> element.'),
    etag: etagField.optional(),
  }),
  output: savedShape.extend({ created: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input, agent) {
    const found = await nodeAt(ctx, input, 'save', 'site').catch((err) => {
      if (err instanceof KilnError && err.status === 404 && input.etag === undefined) return null;
      throw err;
    });
    if (found) return { ...(await overwrite(ctx, found.node, input, agent)), created: false };
    const account = await accountNamed(ctx, input.account);
    const bytes = pageBytes(input.html);
    const made = await createPath(ctx, {
      ownerId: account.id,
      path: cleanPath(input.path),
      type: 'site',
      html: bytes,
      ...agentChange(ctx.caller, agent),
    });
    const version = await firstVersion(ctx, made.id);
    const etag = made.checksum ?? '';
    return {
      path: cleanPath(input.path),
      etag,
      changed: true,
      version,
      diff: shortDiff('', input.html),
      created: true,
    };
  },
});
