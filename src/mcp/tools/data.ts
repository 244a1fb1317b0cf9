// A page's data through its own rules: read_data answers what its `api` rules tag extracts (what `/_/api` gives
// a visitor, for any document the caller may see), write_data puts JSON back into the page through the same rules
// with the engine the data-clobber guard restores with (src/guard/restore.ts), so the rest of the page stays as
// it is; the new page must extract to exactly that data, else nothing is saved.
import { z } from 'zod';
import { tool } from '../tool.ts';
import { KilnError, fail, notFound, type ErrorCode } from '../../errors.ts';
import { documentData } from '../../data/read.ts';
import { documentContent } from '../../nodes/serve.ts';
import { withData } from '../../guard/restore.ts';
import { stableJson } from '../../guard/classify.ts';
import { checksum } from '../../core/checksum.ts';
import { exactly } from '../../core/conditional.ts';
import { saveDocument } from '../../save/pipeline.ts';
import { shortDiff } from '../../core/html-edit.ts';
import { agentSavedBy } from '../agent.ts';
import { accountField, cleanPath, etagField, nodeAt, pathField, whoChanged } from './common.ts';

const json = z.json().describe('Any JSON value.');

/** A failure of the rules engine as the data API answers it (`{error, code}`), with its code's status. */
function dataFailure(body: string | Buffer): KilnError {
  const { error, code } = JSON.parse(body.toString()) as { error: string; code: ErrorCode };
  return fail(code, error);
}

export const readData = tool({
  name: 'read_data',
  title: 'Read a page’s data',
  description:
    'Reads a document’s data as JSON, as its own `api` rules tag defines it (<script type="application/json" data-rules-name="api">): the same JSON its /_/api address gives. Example: {"path": "notes/todo.html"} → {"data": {"items": ["milk", "bread"]}}',
  input: z.object({ account: accountField, path: pathField('notes/todo.html') }),
  output: z.object({ path: z.string(), etag: z.string(), data: json }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const { node } = await nodeAt(ctx, input, 'view', 'site');
    const answer = await documentData(ctx, node);
    if (answer.status !== 200) throw dataFailure(answer.body);
    return { path: cleanPath(input.path), etag: node.checksum ?? '', data: JSON.parse(answer.body.toString()) };
  },
});

/** What the page's rules read from these bytes (the extraction pool, as the guard reads it). */
async function extracted(ctx: Parameters<typeof readData.run>[0], bytes: Buffer) {
  const reply = await ctx.extractions.run({ checksum: checksum(bytes), bytes, rules: { kind: 'api' } });
  if (reply.busy) throw new KilnError(503, 'Kiln is busy reading pages; try again in a moment.', 'busy');
  return reply.result;
}

const misfit = (why: string) =>
  new KilnError(422, `The data does not fit this page’s api rules: ${why} Nothing was saved.`, 'data-shape');

export const writeData = tool({
  name: 'write_data',
  title: 'Write a page’s data',
  description:
    'Writes JSON into a document through its `api` rules: the elements the rules read get the new values (lists grow or shrink by cloning their items), and the rest of the page stays as it is. Give the whole data object, as read_data answers it. Example: {"path": "notes/todo.html", "data": {"items": ["milk", "bread", "eggs"]}, "etag": "…"}',
  input: z.object({
    account: accountField,
    path: pathField('notes/todo.html'),
    data: json,
    etag: etagField.optional(),
  }),
  output: z.object({
    path: z.string(),
    etag: z.string(),
    changed: z.boolean(),
    version: z.object({ id: z.number(), number: z.number() }).nullable(),
    diff: z.string(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input, agent) {
    const { node } = await nodeAt(ctx, input, 'save', 'site');
    const stored = await documentContent(ctx, node);
    if (!stored) throw notFound();
    const before = stored.bytes.toString('utf8');
    const rules = await extracted(ctx, stored.bytes);
    if (!rules.ok) throw fail(rules.code, rules.error);
    const html = await withData(before, input.data);
    if (html === null) throw misfit('its shape is not the one the rules read (see read_data).');
    const bytes = Buffer.from(html, 'utf8');
    const back = await extracted(ctx, bytes);
    if (!back.ok || stableJson(back.data) !== stableJson(input.data as never))
      throw misfit('the page would not read back exactly this data.');
    return whoChanged(ctx, node.id, async () => {
      const by = agentSavedBy(ctx.caller, agent);
      const result = await saveDocument(ctx, {
        nodeId: node.id,
        bytes,
        by,
        ifMatch: exactly(input.etag ?? stored.checksum),
      });
      return {
        path: cleanPath(input.path),
        etag: result.checksum,
        changed: result.changed,
        version: result.version ?? null,
        diff: shortDiff(before, html),
      };
    });
  },
});
