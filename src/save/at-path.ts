// A save of the document at a path (the browser's Document-URL): find it, check the caller may save it, save it.
// The lookup is a statement a save can skip: the process keeps the row it last found at each path
// (`s.documents.found`), and the save's locked read confirms it is still that document with the same rights
// (`found` in src/save/pipeline.ts). A stale row costs a fresh lookup, never a wrong write.
import type { Services } from '../services.ts';
import { findByPath } from '../nodes/find.ts';
import type { NodeRow } from '../store/schema.ts';
import { KilnError, notFound } from '../errors.ts';
import { FoundRowChanged, saveDocument, type SaveInput, type SaveResult } from './pipeline.ts';

/** Fresh lookups after the kept row, before a document that keeps changing under the save is refused. */
const FRESH_TRIES = 3;

export async function saveAtPath(
  s: Services,
  input: Omit<SaveInput, 'nodeId' | 'found'> & {
    ownerId: number;
    path: string;
    /** Throws when the caller may not save these bytes to this document (run on each row the save tries). */
    check(node: NodeRow): void;
  },
): Promise<SaveResult> {
  const key = `${input.ownerId}/${input.path.replace(/^\/+/, '').normalize('NFC').toLowerCase()}`;
  const kept = s.documents.found.get(key);
  if (kept) {
    // Any refusal decided on the kept row (its share token, its visibility may be old) is decided again on the
    // stored one, as is a row the save finds changed.
    let allowed = true;
    try {
      input.check(kept);
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
    const node = await findByPath(s, input.ownerId, input.path);
    if (node?.type !== 'site') throw notFound();
    s.documents.found.set(key, node);
    input.check(node);
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

function save(s: Services, input: Parameters<typeof saveAtPath>[1], node: NodeRow): Promise<SaveResult> {
  const { bytes, by, ifMatch } = input;
  return saveDocument(s, { nodeId: node.id, bytes, by, ifMatch, found: node });
}
