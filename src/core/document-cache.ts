// What a process keeps of documents, read and filled by src/nodes/serve.ts and the save pipeline.
import { Lru } from './lru.ts';
import { limits } from '../limits.ts';
import type { NodeRow } from '../store/schema.ts';

/** What a process keeps of documents (one per Services, built in createServices):
 *  - `content`: stored bytes keyed by node id with their checksum. The checksum read with the node
 *    decides whether an entry is current, so a save (here or in another process) makes a stale entry
 *    unused at once.
 *  - `served`: what each URL of a document host last served, public documents only: while the
 *    database cannot be reached these still answer (from `content`, when it holds the same bytes).
 *  - `found`: the document a save last found at each path (owner id and path, case-folded), a guess its save
 *    confirms under the row lock (src/save/at-path.ts): a stale entry costs a fresh lookup, never a wrong write. */
export class DocumentCache {
  readonly content = new Lru<{ checksum: string; bytes: Buffer }>({
    maxEntries: limits.memory.documents.entries,
    maxBytes: limits.memory.documents.bytes,
    sizeOf: (v) => v.bytes.length,
  });
  readonly served = new Lru<{ id: number; checksum: string; name: string; forbidFraming: boolean }>({
    maxEntries: 10_000,
  });
  readonly found = new Lru<NodeRow>({ maxEntries: 4_096 });
  /** The text and bytes of the last save of a document in this process, with their SHA-256: the next save's
   *  version diff starts from it instead of reading and decoding the stored bytes again, and its content write
   *  finds the span that changed. The bytes are the Buffer `content` holds for the same save, so only the text
   *  is counted: counting both would keep a 4 MB document out of this memo (an entry over an eighth of the
   *  budget is not kept), and its next save would read and decode the stored bytes again. */
  readonly texts = new Lru<{ hash: string; text: string; bytes: Buffer }>({
    maxEntries: limits.memory.savedTexts.entries,
    maxBytes: limits.memory.savedTexts.bytes,
    sizeOf: (v) => v.text.length,
  });
}
