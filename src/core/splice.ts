// A document's stored content as a base and its splices: regions of the base replaced by other bytes,
// content = base with each region [at, end) replaced by its `size` bytes of the splice, in order. A save that
// changes a few hundred bytes of a 110 KB page then rewrites only what changed since the base, not the whole
// row: on PostgreSQL a rewrite of the whole row was most of the database's work per save (compression, TOAST
// chunks, WAL). A save's change is found as separate spans (`changedSpans`), so edits far apart make several
// small regions rather than one splice spanning the page between them. Once the splices would be larger than
// SPLICE_SHARE of the document, the next write is the whole content again (a new base).
//
// Stored (src/store/schema.ts, node_contents): one region as `splice_at`, `splice_end` and `splice` (as since
// migration 021); several as `splice_map` (their bounds) and `splice` (their bytes, one after the other), with
// `splice_at` 0 and `splice_end` SEVERAL. A process older than migration 030 reads that as a splice past the
// base's end and refuses the row (a RangeError, never other bytes), and when it saves over it, finds no room for
// a splice and writes the whole content (clearing the splice columns, so the map it leaves is ignored).
// Pure functions, no I/O.

/** A region of the base and how many bytes of the splice stand in its place. */
export interface Region {
  at: number;
  end: number;
  size: number;
}

/** How a content row holds its content: the base's length and the regions replaced (none: the base itself). */
export interface ContentLayout {
  baseSize: number;
  regions: Region[];
}

/** A content row as stored (src/store/schema.ts, node_contents). */
export interface StoredContent {
  base: Uint8Array;
  splice_at: number | null;
  splice_end: number | null;
  splice: Uint8Array | null;
  splice_map: Uint8Array | null;
}

/** `splice_end` of a row with several regions (the largest PostgreSQL integer: past any base). */
export const SEVERAL = 2 ** 31 - 1;

/** The splices may be up to this share of the document (or SPLICE_FLOOR bytes) before the base is rewritten:
 *  with edits spreading at g bytes a save over a document of S bytes, rewriting the base when the splice
 *  reaches ~√(2Sg) writes the fewest bytes; 1/16 of 110 KB is that for edits ~50 bytes apart. */
const SPLICE_SHARE = 16;
const SPLICE_FLOOR = 2048;
/** At most this many regions: past it the nearest are joined (a region's bounds and a lookup each). */
const MAX_REGIONS = 32;
/** Bytes of `splice_map` per region, counted with the splices' bytes. */
const REGION_BYTES = 12;
/** Regions this close are one: the unchanged bytes between cost less than another region's bounds. */
const JOIN_GAP = REGION_BYTES;

/** The content a stored row stands for (the base itself when it has no splice). */
export function applySplice(row: StoredContent): Uint8Array {
  const { base, splice } = row;
  const regions = storedRegions(row, splice?.length ?? 0);
  if (regions.length === 0) return base;
  const parts: Uint8Array[] = [];
  let from = 0;
  let taken = 0;
  for (const r of regions) {
    if (r.at < from || r.at > r.end || r.end > base.length || taken + r.size > splice!.length)
      throw new RangeError(`a splice [${r.at}, ${r.end}) outside a base of ${base.length}`);
    parts.push(base.subarray(from, r.at), splice!.subarray(taken, taken + r.size));
    from = r.end;
    taken += r.size;
  }
  if (taken !== splice!.length) throw new RangeError(`splices of ${taken} bytes in ${splice!.length}`);
  parts.push(base.subarray(from));
  return Buffer.concat(parts);
}

/** The regions of a stored row; `spliceSize` is the length of its `splice`. */
export function storedRegions(
  row: Pick<StoredContent, 'splice_at' | 'splice_end' | 'splice_map'>,
  spliceSize: number,
): Region[] {
  const { splice_at: at, splice_end: end, splice_map: map } = row;
  if (at === null || end === null) return [];
  if (end !== SEVERAL || map === null) return [{ at, end, size: spliceSize }];
  if (map.length % REGION_BYTES !== 0) throw new RangeError(`a splice map of ${map.length} bytes`);
  const m = asBuffer(map);
  const regions: Region[] = [];
  for (let i = 0; i < m.length; i += REGION_BYTES)
    regions.push({ at: m.readUInt32LE(i), end: m.readUInt32LE(i + 4), size: m.readUInt32LE(i + 8) });
  return regions;
}

/** The splice columns that store `regions` whose bytes are `bytes` (all null: the content is the base). */
export function spliceColumns(regions: Region[], bytes: Buffer) {
  if (regions.length === 0) return { splice_at: null, splice_end: null, splice: null, splice_map: null };
  if (regions.length === 1)
    return { splice_at: regions[0].at, splice_end: regions[0].end, splice: bytes, splice_map: null };
  const map = Buffer.allocUnsafe(regions.length * REGION_BYTES);
  regions.forEach((r, i) => {
    map.writeUInt32LE(r.at, i * REGION_BYTES);
    map.writeUInt32LE(r.end, i * REGION_BYTES + 4);
    map.writeUInt32LE(r.size, i * REGION_BYTES + 8);
  });
  return { splice_at: 0, splice_end: SEVERAL, splice: bytes, splice_map: map as Uint8Array };
}

/** How `next` is stored over the base that `previous` is stored over: the regions and the splice's bytes. */
export interface Spliced {
  layout: ContentLayout;
  bytes: Buffer;
}

/** How `next` is stored over the base that `previous` (the content now, laid out as `layout`) is stored over,
 *  or null when the whole content is to be written (the splices would be too large, or `layout` does not fit
 *  `previous`). */
export function nextSplice(layout: ContentLayout, previousBytes: Uint8Array, next: Buffer): Spliced | null {
  const previous = asBuffer(previousBytes);
  const limit = Math.max(SPLICE_FLOOR, next.length / SPLICE_SHARE);
  // The regions where `previous` is not the base, in its own offsets.
  const old: Span[] = [];
  let shift = 0;
  let from = 0;
  for (const r of layout.regions) {
    if (r.at < from || r.end < r.at) return null;
    old.push({ a0: r.at + shift, a1: r.at + shift + r.size, b0: r.at, b1: r.end });
    shift += r.size - (r.end - r.at);
    from = r.end;
  }
  if (from > layout.baseSize || layout.baseSize + shift !== previous.length) return null;
  const changes = changedSpans(previous, next, MAX_REGIONS + layout.regions.length, limit);
  if (!changes) return null;
  let groups = join(old, changes, JOIN_GAP);
  if (groups.length > MAX_REGIONS) {
    // Join across the smallest gaps until few enough are left.
    const gaps = groups.slice(1).map((g, i) => g.start - groups[i].end);
    gaps.sort((x, y) => x - y);
    groups = join(old, changes, gaps[groups.length - MAX_REGIONS - 1]);
    if (groups.length > MAX_REGIONS) return null;
  }
  const regions: Region[] = [];
  const parts: Buffer[] = [];
  let size = 0;
  for (const g of groups) {
    // A group starts and ends on base bytes (or an old region's bounds), so its offsets map to the base's by the
    // old regions before it, and to `next`'s by the changes before it.
    const n0 = g.start + g.changeShiftBefore;
    const n1 = g.end + g.changeShiftBefore + g.changeShiftIn;
    regions.push({ at: g.start - g.oldShiftBefore, end: g.end - g.oldShiftBefore - g.oldShiftIn, size: n1 - n0 });
    parts.push(next.subarray(n0, n1));
    size += n1 - n0;
  }
  if (size + (regions.length > 1 ? regions.length * REGION_BYTES : 0) > limit) return null;
  return {
    layout: { baseSize: layout.baseSize, regions },
    bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts, size),
  };
}

/** `previous[a0, a1)` stands where `next[b0, b1)` now is (for an old region: the base's [b0, b1)). */
interface Span {
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

/** A run of old regions and changes in `previous`'s offsets [start, end), and how far each moves offsets. */
interface Group {
  start: number;
  end: number;
  oldShiftBefore: number;
  oldShiftIn: number;
  changeShiftBefore: number;
  changeShiftIn: number;
}

/** Old regions and changes (each list in order, not overlapping) as runs: spans less than `gap` apart join. */
function join(old: Span[], changes: Span[], gap: number): Group[] {
  const groups: Group[] = [];
  let oldShift = 0;
  let changeShift = 0;
  let i = 0;
  let j = 0;
  let g: Group | null = null;
  while (i < old.length || j < changes.length) {
    const isOld = j >= changes.length || (i < old.length && old[i].a0 <= changes[j].a0);
    const s = isOld ? old[i++] : changes[j++];
    if (!g || s.a0 > g.end + gap) {
      if (g) {
        oldShift += g.oldShiftIn;
        changeShift += g.changeShiftIn;
      }
      g = {
        start: s.a0,
        end: s.a1,
        oldShiftBefore: oldShift,
        oldShiftIn: 0,
        changeShiftBefore: changeShift,
        changeShiftIn: 0,
      };
      groups.push(g);
    }
    g.end = Math.max(g.end, s.a1);
    if (isOld) g.oldShiftIn += s.a1 - s.a0 - (s.b1 - s.b0);
    else g.changeShiftIn += s.b1 - s.b0 - (s.a1 - s.a0);
  }
  return groups;
}

/** Bytes a probe of `next` is looked for with in `previous`, and the least run of equal bytes worth a split. */
const PROBE = 32;
const LEAST_MATCH = 64;
/** How far from where it would be if no length changed a probe is looked for first. */
const NEAR = 256;

/** The spans where `a` and `b` differ, in order: `a[a0, a1)` became `b[b0, b1)`, with the bytes between them
 *  equal. Null when there are more than `most`, or their bytes in `b` pass `limit`. Each part still unequal is
 *  split around a run of equal bytes found from a probe at its middle, a quarter or three quarters of the way
 *  (edits far apart are separate spans); a part without one is one span. */
export function changedSpans(a: Buffer, b: Buffer, most: number, limit = Number.POSITIVE_INFINITY): Span[] | null {
  const out: Span[] = [];
  let bytes = 0;
  // Looking for runs has a budget: past it, what is left unequal is one span each (more bytes, never wrong).
  let looks = 2 * most;
  const split = (a0: number, a1: number, b0: number, b1: number): boolean => {
    const p = commonPrefix(a.subarray(a0, a1), b.subarray(b0, b1));
    a0 += p;
    b0 += p;
    const s = commonSuffix(a.subarray(a0, a1), b.subarray(b0, b1), Math.min(a1 - a0, b1 - b0));
    a1 -= s;
    b1 -= s;
    if (a0 === a1 && b0 === b1) return true;
    const m = a1 - a0 >= LEAST_MATCH && b1 - b0 >= LEAST_MATCH && looks-- > 0 ? equalRun(a, a0, a1, b, b0, b1) : null;
    if (m) return split(a0, m.a0, b0, m.b0) && split(m.a1, a1, m.b1, b1);
    bytes += b1 - b0;
    out.push({ a0, a1, b0, b1 });
    return out.length <= most && bytes <= limit;
  };
  return split(0, a.length, 0, b.length) ? out : null;
}

/** A run of at least LEAST_MATCH equal bytes of a[a0, a1) and b[b0, b1), or null. */
function equalRun(a: Buffer, a0: number, a1: number, b: Buffer, b0: number, b1: number): Span | null {
  const within = a.subarray(a0, a1);
  for (const share of [0.5, 0.25, 0.75]) {
    const y = b0 + Math.floor((b1 - b0 - PROBE) * share);
    const probe = b.subarray(y, y + PROBE);
    // Where the probe's bytes are if the changes before it, or those after it, kept the length (few edits
    // change it by much): looked for near there first, then anywhere.
    const near = y - b0;
    const far = near + (a1 - a0) - (b1 - b0);
    const from = Math.max(0, Math.min(near, far) - NEAR);
    let x = within.subarray(from, Math.max(near, far) + PROBE + NEAR).indexOf(probe);
    x = x === -1 ? within.indexOf(probe) : from + x;
    // Repeated text may put the probe in several places: the first few are tried.
    for (let tries = 0; x !== -1 && tries < 4; tries++, x = within.indexOf(probe, x + 1)) {
      const back = commonSuffix(a.subarray(a0, a0 + x), b.subarray(b0, y), Math.min(x, y - b0));
      const on = commonPrefix(a.subarray(a0 + x + PROBE, a1), b.subarray(y + PROBE, b1));
      if (back + PROBE + on >= LEAST_MATCH)
        return { a0: a0 + x - back, a1: a0 + x + PROBE + on, b0: y - back, b1: y + PROBE + on };
    }
  }
  return null;
}

/** The same memory as a Buffer (no copy): the drivers hand rows' bytes back as Buffers already. */
const asBuffer = (u: Uint8Array): Buffer =>
  Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** Blocks compared natively, largest first, before the byte at which two buffers differ is looked for one by
 *  one (each compare is a call into C++: fewer for large equal stretches). */
const BLOCKS = [65536, 8192, 1024];

/** How many leading bytes `a` and `b` share. */
export function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  for (const block of BLOCKS) while (i + block <= n && a.compare(b, i, i + block, i, i + block) === 0) i += block;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** How many trailing bytes `a` and `b` share, at most `max`. */
export function commonSuffix(a: Buffer, b: Buffer, max: number): number {
  let i = 0;
  let ea = a.length;
  let eb = b.length;
  for (const block of BLOCKS)
    while (i + block <= max && a.compare(b, eb - block, eb, ea - block, ea) === 0) {
      i += block;
      ea -= block;
      eb -= block;
    }
  while (i < max && a[ea - 1] === b[eb - 1]) {
    i++;
    ea--;
    eb--;
  }
  return i;
}
