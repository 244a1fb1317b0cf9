// The one run of bytes that turns one version of a document into the next: a browser save changes a few
// characters of a page, so the database can be sent those instead of the whole page (src/store/saves.ts).

export interface Splice {
  /** Bytes kept from the start. */
  start: number;
  /** Bytes of `before` replaced after them. */
  removed: number;
  /** What replaces them (a view into `after`, not a copy). */
  inserted: Buffer;
}

/** Block size of the native comparisons that skip the equal runs. */
const BLOCK = 4096;

/** `after` as `before` with bytes [start, start + removed) replaced by `inserted`: the longest common prefix,
 *  then the longest common suffix of what is left. */
export function spliceOf(before: Buffer, after: Buffer): Splice {
  const most = Math.min(before.length, after.length);
  let start = 0;
  while (start + BLOCK <= most && before.compare(after, start, start + BLOCK, start, start + BLOCK) === 0)
    start += BLOCK;
  while (start < most && before[start] === after[start]) start++;
  // The suffix never reaches back into the prefix: with a repeated run either side, the change stays after it.
  const room = most - start;
  let end = 0;
  while (
    end + BLOCK <= room &&
    before.compare(
      after,
      after.length - end - BLOCK,
      after.length - end,
      before.length - end - BLOCK,
      before.length - end,
    ) === 0
  )
    end += BLOCK;
  while (end < room && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { start, removed: before.length - start - end, inserted: after.subarray(start, after.length - end) };
}

/** `before` with `s` applied (what the database computes). */
export function applySplice(before: Buffer, s: Splice): Buffer {
  return Buffer.concat([before.subarray(0, s.start), s.inserted, before.subarray(s.start + s.removed)]);
}
