// A document's stored content as a base and one splice: content = base[0, at) + splice + base[end, base.length).
// A save that changes a few hundred bytes of a 110 KB page then rewrites only the changed span, not the whole
// row: on PostgreSQL a rewrite of the whole row was most of the database's work per save (compression, TOAST
// chunks, WAL). The splice spans every change since the base was written, so it grows as edits spread; once it
// is larger than SPLICE_SHARE of the document, the next write is the whole content again (a new base).
// Pure functions, no I/O.

/** Where the splice sits in the base, and the base's length. `at` null: the content is the base. */
export interface ContentLayout {
  baseSize: number;
  at: number | null;
  end: number | null;
}

/** A content row as stored (src/store/schema.ts, node_contents). */
export interface StoredContent {
  base: Uint8Array;
  splice_at: number | null;
  splice_end: number | null;
  splice: Uint8Array | null;
}

/** A splice may be up to this share of the document (or SPLICE_FLOOR bytes) before the base is rewritten:
 *  with edits spreading at g bytes a save over a document of S bytes, rewriting the base when the splice
 *  reaches ~√(2Sg) writes the fewest bytes; 1/16 of 110 KB is that for edits ~50 bytes apart. */
const SPLICE_SHARE = 16;
const SPLICE_FLOOR = 2048;

/** The content a base and its splice stand for (the base itself when there is no splice). */
export function applySplice(row: StoredContent): Uint8Array {
  const { base, splice_at: at, splice_end: end, splice } = row;
  if (at === null || end === null || splice === null) return base;
  if (at > end || end > base.length) throw new RangeError(`a splice [${at}, ${end}) outside a base of ${base.length}`);
  return Buffer.concat([base.subarray(0, at), splice, base.subarray(end)]);
}

/** A layout with a splice: how a row holds content that differs from its base. */
export type Spliced = ContentLayout & { at: number; end: number };

/** How `next` is stored over the base that `previous` (the content now, laid out as `layout`) is stored over:
 *  the same base with the splice's new bounds, or null when the whole content is to be written (the splice
 *  would be too large). */
export function nextSplice(layout: ContentLayout, previousBytes: Uint8Array, next: Buffer): Spliced | null {
  const previous = asBuffer(previousBytes);
  const same = commonPrefix(previous, next);
  const sameEnd = commonSuffix(previous, next, Math.min(previous.length, next.length) - same);
  // Bytes the change left alone at either end are still the base's where the old splice did not cover them.
  const at = layout.at === null ? same : Math.min(layout.at, same);
  const kept = layout.end === null ? sameEnd : Math.min(layout.baseSize - layout.end, sameEnd);
  const spliceSize = next.length - at - kept;
  if (spliceSize > Math.max(SPLICE_FLOOR, next.length / SPLICE_SHARE)) return null;
  return { baseSize: layout.baseSize, at, end: layout.baseSize - kept };
}

/** The splice's bytes of `next` for a layout from `nextSplice`. */
export function spliceBytes(next: Buffer, s: Spliced): Buffer {
  return next.subarray(s.at, next.length - (s.baseSize - s.end));
}

/** The same memory as a Buffer (no copy): the drivers hand rows' bytes back as Buffers already. */
const asBuffer = (u: Uint8Array): Buffer =>
  Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** Blocks compared natively before the byte at which two buffers differ is looked for one by one. */
const BLOCK = 1024;

/** How many leading bytes `a` and `b` share. */
export function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + BLOCK <= n && a.compare(b, i, i + BLOCK, i, i + BLOCK) === 0) i += BLOCK;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** How many trailing bytes `a` and `b` share, at most `max`. */
export function commonSuffix(a: Buffer, b: Buffer, max: number): number {
  let i = 0;
  let ea = a.length;
  let eb = b.length;
  while (i + BLOCK <= max && a.compare(b, eb - BLOCK, eb, ea - BLOCK, ea) === 0) {
    i += BLOCK;
    ea -= BLOCK;
    eb -= BLOCK;
  }
  while (i < max && a[ea - 1] === b[eb - 1]) {
    i++;
    ea--;
    eb--;
  }
  return i;
}
