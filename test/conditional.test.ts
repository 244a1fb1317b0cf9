// If-Match as every write route reads it (src/core/conditional.ts), case by case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ifMatchHolds, parseIfMatch } from '../src/core/conditional.ts';

const tags = (...t: string[]) => ({ kind: 'tags', tags: t });

test('absent is no condition, `*` any version; quoted, bare and weak tags, lists and several header lines', () => {
  assert.deepEqual(parseIfMatch(undefined), { kind: 'none' });
  assert.deepEqual(parseIfMatch(' * '), { kind: 'any' });
  assert.deepEqual(parseIfMatch('"abc"'), tags('abc'));
  assert.deepEqual(parseIfMatch('abc'), tags('abc'));
  assert.deepEqual(parseIfMatch('W/"abc"'), tags('abc'));
  assert.deepEqual(parseIfMatch('"a", W/"b" ,c,  "d"'), tags('a', 'b', 'c', 'd'));
  assert.deepEqual(parseIfMatch('"a",, ,"b"'), tags('a', 'b'));
  assert.deepEqual(parseIfMatch(['"a"', '"b"']), tags('a', 'b'));
  assert.deepEqual(parseIfMatch('"*"'), tags('*'), 'a quoted star is a tag like any other');
});

test('empty or unreadable is a list of none: a condition nothing meets', () => {
  for (const h of ['', '   ', ',', '"abc', 'abc"', '"a""b"', '"a" "b"', 'a b', '"a", *', '*, "a"', 'W/*', '"a\u2603"'])
    assert.deepEqual(parseIfMatch(h), tags(), JSON.stringify(h));
});

test('a condition holds when one of its tags is a current version; `*` and none always hold', () => {
  assert.equal(ifMatchHolds(parseIfMatch('"x", "abc"'), 'abc'), true);
  assert.equal(ifMatchHolds(parseIfMatch('"x", "y"'), 'abc'), false);
  assert.equal(ifMatchHolds(parseIfMatch('"sv1"'), 'abc', 'sv1'), true, 'the structure version counts too');
  assert.equal(ifMatchHolds(parseIfMatch(''), 'abc'), false);
  assert.equal(ifMatchHolds(parseIfMatch('""'), null), false);
  assert.equal(ifMatchHolds(parseIfMatch('*'), 'abc'), true);
  assert.equal(ifMatchHolds(parseIfMatch(undefined), 'abc'), true);
  assert.equal(ifMatchHolds(null, 'abc'), true);
});
