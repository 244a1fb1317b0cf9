// spliceOf: the run of bytes between two versions of a document (src/core/splice.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applySplice, spliceOf } from '../src/core/splice.ts';

/** A small seeded generator: the same cases on every run. */
function generator(seed: number) {
  let x = seed;
  return (n: number) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
}

test('applying the splice to the old bytes gives the new ones, for edits anywhere, over many sizes and repeats', () => {
  const next = generator(7);
  // Three letters make repeated runs common: the prefix and suffix must not overlap.
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => 97 + next(3)));
  for (let i = 0; i < 5000; i++) {
    const before = bytes(i % 50 === 0 ? 9000 + next(9000) : next(80));
    const at = next(before.length + 1);
    const to = at + next(before.length - at + 1);
    const after =
      i % 7 === 0 ? bytes(next(80)) : Buffer.concat([before.subarray(0, at), bytes(next(6)), before.subarray(to)]);
    const s = spliceOf(before, after);
    assert.ok(s.start >= 0 && s.removed >= 0 && s.start + s.removed <= before.length, `case ${i}`);
    assert.deepEqual(applySplice(before, s), after, `case ${i}`);
  }
});

test('a one-character edit of a large page is one small splice; equal bytes are an empty one', () => {
  const page = Buffer.from(`<html>${'<li>item</li>'.repeat(10_000)}</html>`);
  const edited = Buffer.from(page);
  edited[70_001] = 0x58;
  assert.deepEqual(spliceOf(page, edited), { start: 70_001, removed: 1, inserted: Buffer.from('X') });
  assert.deepEqual(spliceOf(page, page), { start: page.length, removed: 0, inserted: Buffer.alloc(0) });
});
