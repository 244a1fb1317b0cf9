// Duplicate: a copy of a document beside it (`notes-copy.html`, then `notes-copy-2.html` …) holding its
// current bytes, written through the one write path; the copy starts its own history.
import type { Ctx } from '../context.ts';
import { KilnError, badRequest, conflict, notFound } from '../errors.ts';
import { createNode } from './tree.ts';
import type { NodeRow } from '../store/schema.ts';
import { documentContent } from './serve.ts';

const MAX_TRIES = 50;

function copyName(name: string, n: number): string {
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  return `${stem}-copy${n === 1 ? '' : `-${n}`}${ext}`;
}

export async function duplicateDocument(ctx: Ctx, node: NodeRow): Promise<NodeRow> {
  if (node.type !== 'site') throw badRequest('Only documents can be duplicated.', 'invalid-type');
  const content = await documentContent(ctx, node);
  if (!content) throw notFound();
  for (let n = 1; n <= MAX_TRIES; n++) {
    try {
      return await createNode(ctx, {
        ownerId: node.owner_id,
        parentId: node.parent_id,
        type: 'site',
        name: copyName(node.name, n),
        html: content.bytes,
      });
    } catch (err) {
      if (!(err instanceof KilnError && err.code === 'name-conflict')) throw err;
    }
  }
  throw conflict('Too many copies of this document already; rename one first.', 'name-conflict');
}
