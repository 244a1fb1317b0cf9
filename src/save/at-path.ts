// A save of the document at a path (the browser's Document-URL): find it, judge the caller's `save` on it through
// the access table (ctx.nodes), save it.
// The lookup is a statement a save can skip: the process keeps the row it last found at each path
// (`s.documents.found`), and the save's locked read confirms it is still that document with the same rights
// (`found` in src/save/pipeline.ts). A stale row costs a fresh lookup, never a wrong write.
import type { Ctx } from '../context.ts';
import type { Row } from '../store/schema.ts';
import { nodeAtPath } from '../nodes/open.ts';
import { KilnError, notFound } from '../errors.ts';
import { assertDocumentBytes } from './root-html.ts';
import { FoundRowChanged, saveDocument, type SaveInput, type SaveResult } from './pipeline.ts';

type NodeRow = Row<'nodes'>;

/** Fresh lookups after the kept row, before a document that keeps changing under the save is refused. */
const FRESH_TRIES = 3;

/** The browser's save (`/_/save`, the code editor): the document at `path` of the caller's host. The history
 *  names the caller, or a share-link guest when the share grant alone let the save in. */
export async function saveAtPath(
  ctx: Ctx,
  input: Omit<SaveInput, 'nodeId' | 'found' | 'by'> & { path: string; by: Pick<SaveInput['by'], 'kind' | 'trigger'> },
): Promise<SaveResult> {
  const s = ctx;
  const actor = ctx.caller.actor;
  const by: SaveInput['by'] = { ...input.by, accountId: actor?.accountId ?? null, writer: actor?.writer ?? null };
  const ownerId = ctx.caller.host;
  if (ownerId === null) throw notFound('Documents are saved on their own host.');
  /** Throws when the caller may not save these bytes to this document (run on each row the save tries). */
  const check = async (node: NodeRow) => {
    await ctx.nodes.check(node, 'save');
    by.shareGuest = !actor && (await ctx.nodes.standingOn(node)).shareGuest === true;
    assertDocumentBytes(input.bytes);
  };
  return saveFound(s, { ...input, by, ownerId }, check);
}

async function saveFound(
  s: Ctx,
  input: Omit<SaveInput, 'nodeId' | 'found'> & { ownerId: number; path: string },
  check: (node: NodeRow) => Promise<void>,
): Promise<SaveResult> {
  const key = `${input.ownerId}/${input.path.replace(/^\/+/, '').normalize('NFC').toLowerCase()}`;
  const kept = s.documents.found.get(key);
  if (kept) {
    // Any refusal decided on the kept row (its share token, its visibility may be old) is decided again on the
    // stored one, as is a row the save finds changed.
    let allowed = true;
    try {
      await check(kept);
    } catch {
      allowed = false;
    }
    if (allowed)
      try {
        return await save(s, input, kept);
      } catch (err) {
        if (!(err instanceof FoundRowChanged)) throw err;
      }
    s.documents.found.delete(key);
  }
  for (let i = 1; ; i++) {
    const node = await nodeAtPath(s.database.db, input.ownerId, input.path);
    if (node?.type !== 'site') throw notFound();
    s.documents.found.set(key, node);
    await check(node);
    try {
      return await save(s, input, node);
    } catch (err) {
      if (!(err instanceof FoundRowChanged)) throw err;
      s.documents.found.delete(key);
      if (i === FRESH_TRIES)
        throw err.gone
          ? notFound()
          : new KilnError(412, 'This document was moved or changed while it was being saved.', 'conflict');
    }
  }
}

function save(s: Ctx, input: Omit<SaveInput, 'nodeId' | 'found'>, node: NodeRow): Promise<SaveResult> {
  const { bytes, by, ifMatch } = input;
  return saveDocument(s, { nodeId: node.id, bytes, by, ifMatch, found: node });
}
