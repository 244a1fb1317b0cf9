// A document's content stored as a base and its splices (src/core/splice.ts): every layout the writes produce
// stands for exactly the bytes saved, edits far apart make separate small regions, the splices cover every
// change since the base, the whole content is written again once they would be too large, rows written before
// several splices (one splice, or none) read and build on as before, and a process still on that code refuses a
// row with several splices and writes the whole content over it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applySplice,
  changedSpans,
  commonPrefix,
  commonSuffix,
  type ContentLayout,
  nextSplice,
  SEVERAL,
  spliceColumns,
  type StoredContent,
  storedRegions,
} from '../src/core/splice.ts';

const whole = (next: Buffer): StoredContent => ({
  base: next,
  splice_at: null,
  splice_end: null,
  splice: null,
  splice_map: null,
});

/** The row a store keeps after writing `next` over `row` (which holds `previous`), as src/store/saves.ts does. */
function write(row: StoredContent | null, previous: Buffer | null, next: Buffer): StoredContent {
  const layout: ContentLayout | undefined = row
    ? { baseSize: row.base.length, regions: storedRegions(row, row.splice?.length ?? 0) }
    : undefined;
  const s = row && previous && layout ? nextSplice(layout, previous, next) : null;
  if (!row || !s) return whole(next);
  return { base: row.base, ...spliceColumns(s.layout.regions, s.bytes) };
}

/** The bytes of splices a row stores (the splices' and their bounds'). */
const spliceSize = (row: StoredContent) => (row.splice?.length ?? 0) + (row.splice_map?.length ?? 0);

const doc = (items: string[]) => Buffer.from(`<!doctype html><ul>${items.map((t) => `<li>${t}</li>`).join('')}</ul>`);

test('a small edit is stored as a splice of the changed bytes, and reads back as the saved bytes', () => {
  const items = Array.from({ length: 2000 }, (_, i) => `item ${i}`);
  const first = doc(items);
  let row = write(null, null, first);
  items[1000] = 'item 1000 done';
  const second = doc(items);
  row = write(row, first, second);
  assert.notEqual(row.splice, null, 'a 5-byte change in 26 KB is a splice');
  assert.ok(row.splice!.length < 50, `splice of ${row.splice!.length} bytes`);
  assert.equal(row.base, first, 'the base is not rewritten');
  assert.deepEqual(applySplice(row), second);
});

test('random edits anywhere, growing and shrinking the page: every row reads back as its save', () => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const items = Array.from({ length: 800 }, (_, i) => `item ${i}`);
  let previous = doc(items);
  let row = write(null, null, previous);
  let splices = 0;
  let bases = 1;
  for (let i = 0; i < 600; i++) {
    // Mostly edits near the last one (a person working down a list), sometimes anywhere, added or removed.
    const at = i % 10 === 9 ? random(items.length) : Math.min(items.length - 1, (i * 3) % items.length);
    const kind = random(6);
    if (kind === 0) items.splice(at, 0, `new ${i}`);
    else if (kind === 1 && items.length > 10) items.splice(at, 1);
    else items[at] = `${items[at]} é${i}`;
    const next = doc(items);
    const before = row.base;
    row = write(row, previous, next);
    if (row.base === before) splices++;
    else bases++;
    assert.deepEqual(applySplice(row), next, `save ${i}`);
    previous = next;
  }
  assert.ok(splices > bases, `${splices} splices, ${bases} whole writes`);
  assert.ok(bases > 1, 'edits spreading over the page write a new base now and then');
});

test('splices never grow past a sixteenth of the page (or 2 KB): the next write is the whole content', () => {
  const items = Array.from({ length: 4000 }, (_, i) => `item ${i}`);
  const first = doc(items);
  let row = write(null, null, first);
  // One change spanning a tenth of the page.
  for (let i = 1000; i < 1400; i++) items[i] = `item ${i} rewritten`;
  const next = doc(items);
  row = write(row, first, next);
  assert.equal(row.splice, null);
  assert.equal(row.base, next);
  // Changes all over the page: more regions than a row keeps, joined across the page between them.
  for (let i = 0; i < 4000; i += 50) items[i] = `item ${i} edited`;
  const spread = doc(items);
  row = write(row, next, spread);
  assert.equal(row.splice, null);
  assert.equal(row.base, spread);
});

test('a document emptied and filled again, and a write with no previous bytes, read back as saved', () => {
  const page = doc(['a', 'b']);
  let row = write(null, null, page);
  row = write(row, page, Buffer.alloc(0));
  assert.deepEqual(applySplice(row), Buffer.alloc(0));
  row = write(row, Buffer.alloc(0), page);
  assert.deepEqual(applySplice(row), page);
  assert.deepEqual(applySplice(write(row, null, doc(['c']))), doc(['c']));
});

test('common prefix and suffix across the native block size, never overlapping', () => {
  const a = Buffer.alloc(5000, 'x');
  const b = Buffer.from(a);
  b[3000] = 0x79;
  assert.equal(commonPrefix(a, b), 3000);
  assert.equal(commonSuffix(a, b, 5000), 1999);
  assert.equal(commonPrefix(a, a), 5000);
  // "aaaa" → "aaaaa": the shared suffix is capped by what the prefix left of the shorter one.
  const short = Buffer.from('aaaa');
  const long = Buffer.from('aaaaa');
  const p = commonPrefix(short, long);
  assert.equal(p, 4);
  assert.equal(commonSuffix(short, long, Math.min(short.length, long.length) - p), 0);
});

test('a splice outside its base, or a splice map that does not fit it, is refused, not read as other bytes', () => {
  const row = (over: Partial<StoredContent>): StoredContent => ({
    base: Buffer.from('abcdef'),
    splice_at: 2,
    splice_end: 5,
    splice: Buffer.from('x'),
    splice_map: null,
    ...over,
  });
  assert.throws(() => applySplice(row({ splice_end: 7 })), RangeError);
  const two = spliceColumns(
    [
      { at: 1, end: 2, size: 1 },
      { at: 4, end: 5, size: 2 },
    ],
    Buffer.from('xyz'),
  );
  assert.equal(applySplice(row(two)).toString(), 'axcdyzf');
  // Regions out of order, past the base, or the splice's bytes not all used.
  const [first, second] = [two.splice_map!.subarray(0, 12), two.splice_map!.subarray(12)];
  assert.throws(() => applySplice(row({ ...two, splice_map: Buffer.concat([second, first]) })), RangeError);
  assert.throws(() => applySplice(row({ ...two, splice: Buffer.from('xyzw') })), RangeError);
  assert.throws(() => applySplice(row({ ...two, splice: Buffer.from('xy') })), RangeError);
  assert.throws(() => applySplice(row({ ...two, splice_map: first.subarray(0, 8) })), RangeError);
  assert.throws(() => applySplice(row({ ...two, splice_map: null })), RangeError, 'several without a map');
});

/** Items with a little markup each, as a page (the bench's document: 1,300 items, 110 KB). */
const list = (items: string[]) =>
  Buffer.from(`<!DOCTYPE html><ul>\n${items.map((t) => `  <li class="item"><em>${t}</em></li>\n`).join('')}</ul>\n`);
/** `n` items, each its number and `state`. */
const numbered = (n: number, state: string) => Array.from({ length: n }, (_, i) => `item ${i}: ${state}`);

test('edits far apart are stored as separate small regions, whatever order concurrent saves arrive in', () => {
  const items = numbered(1300, 'pending');
  const first = list(items);
  let row = write(null, null, first);
  let previous: Buffer = first;
  // Each edit ~600 items from the last; saves sent four at a time arrive out of order, so the stored bytes go
  // from one save to an older one (the newer edit undone, the older one made): changes in two places far apart.
  const saves: Buffer[] = [];
  for (let n = 0; n < 24; n++) {
    items[(n * 617) % 1300] = `item ${(n * 617) % 1300}: done ${n}`;
    saves.push(list(items));
  }
  const order = saves.flatMap((_, k) => (k % 2 ? [k - 1] : k + 1 < saves.length ? [k + 1] : [k]));
  for (const k of order) {
    row = write(row, previous, saves[k]);
    assert.equal(row.base, first, `save ${k}: still over the first base`);
    assert.deepEqual(applySplice(row), saves[k], `save ${k}`);
    previous = saves[k];
  }
  // One region per item edited (24 of ~18 bytes, and 12 bytes of bounds each), not one spanning the page.
  assert.equal(row.splice_end, SEVERAL);
  assert.equal(storedRegions(row, row.splice!.length).length, 24);
  assert.ok(spliceSize(row) < 24 * 40, `${spliceSize(row)} bytes of splices`);
});

test('random edits near and far, bytes added, removed and multi-byte: every row reads back as its save', () => {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (const spread of [1, 3, 20]) {
    const items = numbered(1000, 'pending');
    let previous: Buffer = list(items);
    let row = write(null, null, previous);
    let splices = 0;
    for (let i = 0; i < 500; i++) {
      // 1 to `spread` edits a save, anywhere: an item changed, added, removed, or a run of items rewritten.
      for (let e = 1 + random(spread); e > 0; e--) {
        const at = random(items.length);
        const kind = random(8);
        if (kind === 0) items.splice(at, 0, `new ${i}`);
        else if (kind === 1 && items.length > 10) items.splice(at, 1);
        else if (kind === 2) for (let k = at; k < Math.min(items.length, at + random(30)); k++) items[k] = `run ${i}`;
        else items[at] = `${items[at].slice(0, 12)} é${i}`;
      }
      const next = list(items);
      const before = row.base;
      row = write(row, previous, next);
      if (row.base === before) splices++;
      assert.deepEqual(applySplice(row), next, `spread ${spread}, save ${i}`);
      assert.ok(spliceSize(row) <= Math.max(2048, next.length / 16), 'within the share');
      previous = next;
    }
    assert.ok(splices > (spread === 20 ? 100 : 400), `spread ${spread}: ${splices} of 500 saves spliced`);
  }
});

test('changed spans: in order, the bytes between them equal, each change where it is', () => {
  const a = list(numbered(400, 'pending'));
  const items = numbered(400, 'pending');
  items[3] = 'three';
  items[200] = 'two hundred, longer';
  items.splice(390, 1);
  const b = list(items);
  const spans = changedSpans(a, b, 32)!;
  assert.equal(spans.length, 3);
  let ai = 0;
  let bi = 0;
  for (const s of spans) {
    assert.deepEqual(a.subarray(ai, s.a0), b.subarray(bi, s.b0), 'equal between');
    assert.ok(s.a1 - s.a0 + s.b1 - s.b0 < 80, 'each is one edit');
    ai = s.a1;
    bi = s.b1;
  }
  assert.deepEqual(a.subarray(ai), b.subarray(bi));
  assert.equal(changedSpans(a, b, 2), null, 'more spans than asked for');
  assert.deepEqual(changedSpans(a, a, 2), []);
});

test('a row written before several splices (one splice, or none) reads back and takes the next save', () => {
  const items = numbered(1300, 'pending');
  const first = list(items);
  items[10] = 'done';
  const second = list(items);
  // As migration 021's code stored it: one splice in splice_at, splice_end and splice; no splice_map.
  const at = commonPrefix(first, second);
  const kept = commonSuffix(first, second, Math.min(first.length, second.length) - at);
  const old: StoredContent = {
    base: first,
    splice_at: at,
    splice_end: first.length - kept,
    splice: second.subarray(at, second.length - kept),
    splice_map: null,
  };
  assert.deepEqual(applySplice(old), second);
  assert.deepEqual(applySplice(whole(second)), second);
  items[1200] = 'done too';
  const third = list(items);
  const row = write(old, second, third);
  assert.equal(row.base, first);
  assert.equal(row.splice_end, SEVERAL, 'the old splice and the new edit, far apart');
  assert.deepEqual(applySplice(row), third);
});

// The reader and the writer's splice of the code before several splices (src/core/splice.ts at 1f178c7), as a
// process still running it during an upgrade reads and saves a row.
const before030 = {
  read(row: StoredContent) {
    const { base, splice_at: at, splice_end: end, splice } = row;
    if (at === null || end === null || splice === null) return base;
    if (at > end || end > base.length) throw new RangeError('a splice outside its base');
    return Buffer.concat([base.subarray(0, at), splice, base.subarray(end)]);
  },
  /** Whether it would splice `next` over the row's layout (else it writes the whole content). */
  splices(row: StoredContent, previous: Buffer, next: Buffer) {
    const same = commonPrefix(previous, next);
    const sameEnd = commonSuffix(previous, next, Math.min(previous.length, next.length) - same);
    const at = row.splice_at === null ? same : Math.min(row.splice_at, same);
    const kept = row.splice_end === null ? sameEnd : Math.min(row.base.length - row.splice_end, sameEnd);
    return next.length - at - kept <= Math.max(2048, next.length / 16);
  },
};

test('a process on the code before several splices refuses a row with several, and writes the whole content over it', () => {
  const items = numbered(1300, 'pending');
  const first = list(items);
  items[10] = 'done';
  items[1200] = 'done';
  const second = list(items);
  const row = write(whole(first), first, second);
  assert.equal(row.splice_end, SEVERAL);
  assert.throws(() => before030.read(row), RangeError);
  // Its save over the row, from bytes it holds (its memo of the newest version): never a splice, whatever the edit
  // (here one byte at the start, then at the end), so the whole content; that clears splice_at, splice_end and
  // splice, and the map it leaves behind is not read.
  for (const next of [Buffer.concat([Buffer.from(' '), second]), Buffer.concat([second, Buffer.from(' ')])])
    assert.equal(before030.splices(row, second, next), false);
  const over: StoredContent = { ...whole(Buffer.from('whole, by the old code')), splice_map: row.splice_map };
  assert.equal(applySplice(over).toString(), 'whole, by the old code');
  // Rows with one splice stay readable by it: a save near the last writes one as before.
  items[11] = 'done';
  const near = write(whole(second), second, list(items));
  assert.equal(near.splice_map, null);
  assert.deepEqual(before030.read(near), Buffer.from(list(items)));
});
