// A document's content stored as a base and one splice (src/core/splice.ts): every layout the writes produce
// stands for exactly the bytes saved, the splice grows to cover every change since the base, and the whole
// content is written again once the splice would be too large.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applySplice,
  commonPrefix,
  commonSuffix,
  type ContentLayout,
  nextSplice,
  spliceBytes,
  type StoredContent,
} from '../src/core/splice.ts';

/** The row a store keeps after writing `next` over `row` (which holds `previous`), as src/store/saves.ts does. */
function write(row: StoredContent | null, previous: Buffer | null, next: Buffer): StoredContent {
  const layout: ContentLayout | undefined = row
    ? { baseSize: row.base.length, at: row.splice_at, end: row.splice_end }
    : undefined;
  const s = row && previous && layout ? nextSplice(layout, previous, next) : null;
  if (!row || !s) return { base: next, splice_at: null, splice_end: null, splice: null };
  return { ...row, splice_at: s.at, splice_end: s.end, splice: spliceBytes(next, s) };
}

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

test('a splice never grows past a sixteenth of the page (or 2 KB): the next write is the whole content', () => {
  const items = Array.from({ length: 4000 }, (_, i) => `item ${i}`);
  const first = doc(items);
  let row = write(null, null, first);
  // The first and the last item change: the splice would span the whole page.
  items[0] = 'first, edited';
  items[3999] = 'last, edited';
  const next = doc(items);
  row = write(row, first, next);
  assert.equal(row.splice, null);
  assert.equal(row.base, next);
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

test('a splice outside its base is refused, not read as other bytes', () => {
  assert.throws(
    () => applySplice({ base: Buffer.from('abc'), splice_at: 2, splice_end: 5, splice: Buffer.from('x') }),
    RangeError,
  );
});
