// What a transaction shared by grouped writes (src/store/writes.ts) carries from one save to the next, so a
// save that joins costs the database only what is new in it:
// - Each document's content row is written once per group: a row replaced before anyone can read it is 110 KB
//   of work for nothing (on PostgreSQL, compression, TOAST and WAL for every save). A lone save writes its own
//   (it keeps its round trips). In a group every save but the last leaves its bytes here; the last writes its
//   own with its version (no extra statement) and what is still pending (other documents, or a last save that
//   changed nothing or failed) is written just before the COMMIT. Versions, checksums and activity lines are
//   still written save by save, so each save keeps its version; reads of the content in the transaction see
//   these bytes.
// - The document as the transaction last read or wrote it (its row stays locked until the COMMIT), so the
//   next save of it skips the read.
// A save that fails rolls back to its savepoint, and this state to what it was before that save.
import type { Kysely, OnConflictBuilder } from 'kysely';
import type { DB } from './schema.ts';
import type { DocumentForWrite } from './document-for-write.ts';

interface State {
  /** Whether the save being written defers its content (every one of a group but its last). */
  deferring: boolean;
  contents: Map<number, { checksum: string; bytes: Buffer }>;
  documents: Map<number, DocumentForWrite>;
}

const states = new WeakMap<Kysely<DB>, State>();

/** The content row's upsert of the whole content (a new base, no splice) takes the bytes once: naming them
 *  again in the update would send them twice (a second 110 KB parameter per save on PostgreSQL). */
export const replaceContent = (c: OnConflictBuilder<DB, 'node_contents'>) =>
  c.column('node_id').doUpdateSet((eb) => ({
    base: eb.ref('excluded.base'),
    splice_at: null,
    splice_end: null,
    splice: null,
    splice_map: null,
  }));

/** `tx` now carries state from save to save (`endGroup` writes what it owes); `deferring` when more saves will
 *  follow the first. */
export function startGroup(tx: Kysely<DB>, deferring: boolean): void {
  states.set(tx, { deferring, contents: new Map(), documents: new Map() });
}

/** Whether the next saves defer their content: yes while more follow, no for the last of the group. */
export function setDeferring(tx: Kysely<DB>, deferring: boolean): void {
  const s = states.get(tx);
  if (s) s.deferring = deferring;
}

/** What the group holds now, to put back when a save's savepoint rolls back (`restore`). */
export function snapshot(tx: Kysely<DB>): State | undefined {
  const s = states.get(tx);
  return s && { deferring: s.deferring, contents: new Map(s.contents), documents: new Map(s.documents) };
}

export function restore(tx: Kysely<DB>, state: State | undefined): void {
  if (state) states.set(tx, state);
}

/** Keeps the bytes for the COMMIT when `tx` defers content writes; false when it does not (the caller writes
 *  them now, and what was pending for the document is older). */
export function deferContent(tx: Kysely<DB>, nodeId: number, checksum: string, bytes: Buffer): boolean {
  const s = states.get(tx);
  if (!s) return false;
  if (!s.deferring) {
    s.contents.delete(nodeId);
    return false;
  }
  s.contents.set(nodeId, { checksum, bytes });
  return true;
}

/** The content a grouped `tx` will write for `nodeId`, if any. */
export function deferredContent(tx: Kysely<DB>, nodeId: number) {
  return states.get(tx)?.contents.get(nodeId);
}

/** The document as a grouped `tx` last read or wrote it, if it did. */
export function knownDocument(tx: Kysely<DB>, nodeId: number): DocumentForWrite | undefined {
  return states.get(tx)?.documents.get(nodeId);
}

export function rememberDocument(tx: Kysely<DB>, doc: DocumentForWrite): void {
  states.get(tx)?.documents.set(doc.id, doc);
}

/** Writes the pending contents, one statement for all of them, and forgets the group's state. */
export async function endGroup(tx: Kysely<DB>): Promise<void> {
  const s = states.get(tx);
  states.delete(tx);
  if (!s || s.contents.size === 0) return;
  await tx
    .insertInto('node_contents')
    .values([...s.contents].map(([node_id, c]) => ({ node_id, base: c.bytes })))
    .onConflict(replaceContent)
    .execute();
}
