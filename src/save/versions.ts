/**
 * Version (backup) storage rules: which versions are full snapshots, and the diffs between the
 * others. Pure functions, no I/O.
 *
 * Snapshot rule: backup number 1 and every multiple of 20 (1, 20, 40, 60, …) store the full HTML;
 * every other version stores a diff against the version right before it (`diffFromId` = the
 * previous version, `snapshotId` = the latest snapshot at or before it). A version is also stored
 * as a snapshot when it or the previous version is not valid UTF-8 (`planVersion`), so the chain
 * from a version back to its snapshot is at most 19 diffs long.
 *
 * Diff format (`diff_content`, text): a JSON array
 *   ["d1", prevLength, nextLength, skip₁, delete₁, insert₁, skip₂, delete₂, insert₂, …]
 * Lengths and counts are UTF-16 code units of the JavaScript strings. Applying it walks the
 * previous text: copy `skip` units, drop `delete` units, write the `insert` string; then copy the
 * rest. `prevLength`/`nextLength` are checked on apply, so a diff applied to the wrong base fails
 * loudly instead of producing wrong text; the caller also checks the SHA-256 of the result.
 *
 * How diffs are made: common prefix and suffix are cut off first (one small edit costs O(n) and
 * gives one operation). When the differing middle is larger than a few KB, a line diff (Myers'
 * O(ND) algorithm over line ids, at most MAX_LINE_EDITS changed lines) finds the separate changed
 * regions, and each region is trimmed to its changed characters. If the line diff gives up (huge
 * rewrites), the whole middle is one operation — still exact, just larger. (jsdiff's diffArrays
 * was tried first on the same line ids: ~6× slower for two distant edits in 100 KB, and over a
 * second for a rewritten 100 KB document even with a 2,000-line edit cap.)
 *
 * Reconstruction applies a chain of diffs to a list of string pieces (slices of the snapshot and
 * inserted strings) and joins once at the end, so a 19-diff chain over 1 MB copies the text once.
 */
import { gunzipSync, gzipSync } from 'node:zlib';

/** Every SNAPSHOT_INTERVAL-th backup number (and number 1) is a full snapshot. */
export const SNAPSHOT_INTERVAL = 20;
/** Above this many differing code units in the middle, look for separate changed regions. */
const SINGLE_SPLICE_LIMIT = 4096;
/** Give up on the line diff (and store one splice) beyond this many changed lines. */
const MAX_LINE_EDITS = 256;
const FORMAT = 'd1';

export class VersionDiffError extends Error {
  constructor(msg: string) {
    super(msg);
    this.name = 'VersionDiffError';
  }
}

/** Is this backup number stored as a full snapshot? 1, 20, 40, 60, … (numbers start at 1). */
export function isSnapshot(backupNumber: number): boolean {
  if (!Number.isInteger(backupNumber) || backupNumber < 1) {
    throw new RangeError(`backup numbers start at 1, got ${backupNumber}`);
  }
  return backupNumber === 1 || backupNumber % SNAPSHOT_INTERVAL === 0;
}

/**
 * The backup number of the regular snapshot at or before `backupNumber` (1 for 1–19, 20 for
 * 20–39, …). A forced snapshot (non-UTF-8 content) may sit later in the chain; the pipeline
 * knows it from the previous row (`prev.is_diff ? prev.snapshot_id : prev.id`).
 */
export function regularSnapshotFor(backupNumber: number): number {
  isSnapshot(backupNumber);
  return backupNumber < SNAPSHOT_INTERVAL ? 1 : backupNumber - (backupNumber % SNAPSHOT_INTERVAL);
}

// --- UTF-8 -------------------------------------------------------------------

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decode bytes as UTF-8 only if that is lossless: returns the string whose UTF-8 encoding is
 * exactly `bytes` (a leading BOM is kept), or null when the bytes are not valid UTF-8.
 * For such a string, `sha256(string)` (node:crypto hashes strings as UTF-8) equals `sha256(bytes)`.
 */
export function decodeUtf8Exact(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Can these bytes take part in a text diff (as the previous or the new version)? */
export function canDiff(bytes: Uint8Array): boolean {
  return decodeUtf8Exact(bytes) !== null;
}

export type VersionPlan = { isDiff: false } | { isDiff: true; diffContent: string };

/**
 * How to store version `backupNumber` whose content is `next`, given the content of the version
 * before it (`previous`, null when there is none): a snapshot (store `next` as `html`, no
 * `diffFromId`) or a diff (store `diffContent`, `diffFromId` = previous version).
 */
export function planVersion(backupNumber: number, previous: Uint8Array | null, next: Uint8Array): VersionPlan {
  if (isSnapshot(backupNumber) || previous === null) return { isDiff: false };
  const prevText = decodeUtf8Exact(previous);
  return planTextVersion(backupNumber, prevText, prevText === null ? null : decodeUtf8Exact(next));
}

/** `planVersion` for contents already decoded (null: not exact UTF-8, or no previous version). */
export function planTextVersion(backupNumber: number, prevText: string | null, nextText: string | null): VersionPlan {
  if (isSnapshot(backupNumber) || prevText === null || nextText === null) return { isDiff: false };
  return { isDiff: true, diffContent: makeDiff(prevText, nextText) };
}

// --- snapshot packing (optional) ------------------------------------------------

/**
 * Snapshot bytes are stored gzip-packed: HTML shrinks 4–10×; without it, 51 full copies per 1,000
 * versions are by themselves 5.1% of 1,000 full copies. Every snapshot is packed, so unpacking
 * never guesses from the content (a document may itself be any bytes).
 */
export function packSnapshot(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(gzipSync(bytes, { level: 6 }));
}

export function unpackSnapshot(stored: Uint8Array): Uint8Array {
  return new Uint8Array(gunzipSync(stored));
}

// --- diffs ---------------------------------------------------------------------

interface Op {
  /** Position in prev. */
  at: number;
  del: number;
  ins: string;
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function commonPrefix(a: string, b: string, limit: number): number {
  // Compare big blocks natively first, then characters.
  let n = 0;
  let block = 4096;
  while (block >= 1) {
    while (n + block <= limit && a.slice(n, n + block) === b.slice(n, n + block)) n += block;
    block = block >> 4;
  }
  while (n < limit && a.charCodeAt(n) === b.charCodeAt(n)) n++;
  return n;
}

function commonSuffix(a: string, b: string, limit: number): number {
  const la = a.length;
  const lb = b.length;
  let n = 0;
  let block = 4096;
  while (block >= 1) {
    while (n + block <= limit && a.slice(la - n - block, la - n) === b.slice(lb - n - block, lb - n)) n += block;
    block = block >> 4;
  }
  while (n < limit && a.charCodeAt(la - n - 1) === b.charCodeAt(lb - n - 1)) n++;
  return n;
}

/** Trim an op (del range of prev / ins text) to the characters that really differ. */
function trimOp(prev: string, at: number, del: number, ins: string): Op | null {
  const removed = prev.slice(at, at + del);
  if (removed === ins) return null;
  let p = commonPrefix(removed, ins, Math.min(removed.length, ins.length));
  if (p > 0 && isHigh(removed.charCodeAt(p - 1))) p--;
  let s = commonSuffix(removed, ins, Math.min(removed.length, ins.length) - p);
  if (s > 0 && isLow(removed.charCodeAt(removed.length - s))) s--;
  return { at: at + p, del: removed.length - p - s, ins: ins.slice(p, ins.length - s) };
}

/**
 * Myers' greedy O(ND) diff of two id arrays: the changed regions as [aStart, aEnd, bStart, bEnd]
 * (a[aStart, aEnd) is replaced by b[bStart, bEnd)), or null beyond `maxD` edits.
 */
function myers(a: Int32Array, b: Int32Array, maxD: number): number[][] | null {
  const n = a.length;
  const m = b.length;
  const off = maxD + 1;
  const v = new Int32Array(2 * maxD + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  outer: for (let d = 0; d <= maxD; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        trace.push(v.slice());
        found = d;
        break outer;
      }
    }
    trace.push(v.slice());
  }
  if (found < 0) return null;
  // Walk back from (n, m), collecting single-line edits, newest first.
  const edits: number[] = []; // pairs (x, y) with a flag: 0 = delete a[x], 1 = insert b[y]
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && prev[off + k - 1]! < prev[off + k + 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = prev[off + prevK]!;
    const prevY = prevX - prevK;
    if (down) edits.push(1, prevX, prevY);
    else edits.push(0, prevX, prevY);
    x = prevX;
    y = prevY;
  }
  const hunks: number[][] = [];
  for (let i = edits.length - 3; i >= 0; i -= 3) {
    const ins = edits[i] === 1;
    const ex = edits[i + 1]!;
    const ey = edits[i + 2]!;
    const last = hunks[hunks.length - 1];
    if (last && last[1] === ex && last[3] === ey) {
      if (ins) last[3]!++;
      else last[1]!++;
    } else {
      hunks.push(ins ? [ex, ex, ey, ey + 1] : [ex, ex + 1, ey, ey]);
    }
  }
  return hunks;
}

/** Line starts of s (code unit offsets), plus s.length at the end. */
function lineStarts(s: string): number[] {
  const starts = [0];
  let at = s.indexOf('\n');
  while (at !== -1) {
    starts.push(at + 1);
    at = s.indexOf('\n', at + 1);
  }
  if (starts[starts.length - 1] !== s.length) starts.push(s.length);
  return starts;
}

/** Ops turning a (at offset `base` of prev) into b, or null when the line diff gives up. */
function lineOps(prev: string, base: number, a: string, b: string): Op[] | null {
  const ids = new Map<string, number>();
  const toIds = (s: string, starts: number[]): Int32Array => {
    const out = new Int32Array(starts.length - 1);
    for (let i = 0; i + 1 < starts.length; i++) {
      const line = s.slice(starts[i], starts[i + 1]);
      let id = ids.get(line);
      if (id === undefined) ids.set(line, (id = ids.size));
      out[i] = id;
    }
    return out;
  };
  const startsA = lineStarts(a);
  const startsB = lineStarts(b);
  const hunks = myers(toIds(a, startsA), toIds(b, startsB), MAX_LINE_EDITS);
  if (!hunks) return null;
  const ops: Op[] = [];
  for (const [a0, a1, b0, b1] of hunks) {
    const at = startsA[a0!]!;
    const op = trimOp(prev, base + at, startsA[a1!]! - at, b.slice(startsB[b0!], startsB[b1!]));
    if (op) ops.push(op);
  }
  return ops;
}

/**
 * A compact serialized patch turning `prev` into `next` (see the module comment for the format).
 * `applyDiff(prev, makeDiff(prev, next)) === next` for all strings, lone surrogates included.
 */
export function makeDiff(prev: string, next: string): string {
  const ops: Op[] = [];
  if (prev !== next) {
    const limit = Math.min(prev.length, next.length);
    let p = commonPrefix(prev, next, limit);
    if (p > 0 && isHigh(prev.charCodeAt(p - 1))) p--;
    let s = commonSuffix(prev, next, limit - p);
    if (s > 0 && isLow(prev.charCodeAt(prev.length - s))) s--;
    const a = prev.slice(p, prev.length - s);
    const b = next.slice(p, next.length - s);
    let found: Op[] | null = null;
    if (a.length > 0 && b.length > 0 && a.length + b.length > SINGLE_SPLICE_LIMIT) {
      found = lineOps(prev, p, a, b);
    }
    if (found) ops.push(...found);
    else ops.push({ at: p, del: a.length, ins: b });
  }
  const out: (string | number)[] = [FORMAT, prev.length, next.length];
  let cursor = 0;
  for (const op of ops) {
    out.push(op.at - cursor, op.del, op.ins);
    cursor = op.at + op.del;
  }
  return JSON.stringify(out);
}

function parseDiff(diff: string): (string | number)[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(diff);
  } catch {
    throw new VersionDiffError('diff is not valid JSON');
  }
  if (!Array.isArray(parsed) || parsed[0] !== FORMAT || (parsed.length - 3) % 3 !== 0) {
    throw new VersionDiffError('unknown diff format');
  }
  return parsed as (string | number)[];
}

/**
 * Apply one parsed diff to text held as pieces (strings whose concatenation is the text, of total
 * length `length`). Returns the new pieces; slices of big pieces are cheap views, not copies.
 */
function applyToPieces(pieces: string[], length: number, d: (string | number)[]): string[] {
  const prevLength = d[1];
  if (prevLength !== length) {
    throw new VersionDiffError(`diff expects a base of ${String(prevLength)} code units, got ${length}`);
  }
  const out: string[] = [];
  let pi = 0; // current piece
  let po = 0; // offset inside it
  let cursor = 0; // position in the text
  const take = (count: number, keep: boolean): void => {
    while (count > 0) {
      const piece = pieces[pi]!;
      const avail = piece.length - po;
      if (avail <= count) {
        if (keep) out.push(po === 0 ? piece : piece.slice(po));
        count -= avail;
        pi++;
        po = 0;
      } else {
        if (keep) out.push(piece.slice(po, po + count));
        po += count;
        count = 0;
      }
    }
  };
  for (let i = 3; i < d.length; i += 3) {
    const skip = d[i];
    const del = d[i + 1];
    const ins = d[i + 2];
    if (!Number.isInteger(skip) || !Number.isInteger(del) || typeof ins !== 'string') {
      throw new VersionDiffError('malformed diff operation');
    }
    if ((skip as number) < 0 || (del as number) < 0 || cursor + (skip as number) + (del as number) > length) {
      throw new VersionDiffError('diff operation out of range');
    }
    take(skip as number, true);
    take(del as number, false);
    if (ins) out.push(ins);
    cursor += (skip as number) + (del as number);
  }
  take(length - cursor, true);
  return out;
}

function piecesLength(pieces: string[]): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

/** Apply a diff made by `makeDiff` to the text it was made from. Throws VersionDiffError on a mismatch. */
export function applyDiff(prev: string, diff: string): string {
  return reconstruct(prev, [diff]);
}

/**
 * The text of a version: its snapshot's text with the diffs of the versions after the snapshot
 * applied in order (oldest first, ending with the wanted version's own diff; empty for a snapshot).
 * Throws VersionDiffError when a diff does not fit the text it is applied to.
 */
export function reconstruct(snapshotHtml: string, diffsInOrder: readonly string[]): string {
  let pieces = [snapshotHtml];
  let length = snapshotHtml.length;
  for (const diff of diffsInOrder) {
    const d = parseDiff(diff);
    pieces = applyToPieces(pieces, length, d);
    length = piecesLength(pieces);
    if (length !== d[2]) {
      throw new VersionDiffError(`diff result has ${length} code units, expected ${String(d[2])}`);
    }
  }
  return pieces.length === 1 ? pieces[0]! : pieces.join('');
}
