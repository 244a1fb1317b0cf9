// The one bounded cache (src/core/lru.ts): recency, entry and byte bounds, freshness and stale reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lru } from '../src/core/lru.ts';

test('the least recently used entry goes first once the cache is over its entry bound', () => {
  const c = new Lru<number>({ maxEntries: 2 });
  c.set('a', 1);
  c.set('b', 2);
  assert.equal(c.get('a'), 1); // a is now the most recent
  c.set('c', 3);
  assert.equal(c.get('b'), undefined);
  assert.equal(c.get('a'), 1);
  assert.equal(c.get('c'), 3);
  assert.equal(c.size, 2);
});

test('a byte bound pushes out old entries; a value over an eighth of it is never kept', () => {
  const c = new Lru<Buffer>({ maxEntries: 100, maxBytes: 800, sizeOf: (b) => b.length });
  for (let i = 0; i < 10; i++) c.set(i, Buffer.alloc(100));
  assert.equal(c.size, 8);
  assert.equal(c.get(0), undefined);
  assert.ok(c.get(9));
  c.set('big', Buffer.alloc(101));
  assert.equal(c.get('big'), undefined);
  c.delete(9);
  c.set('x', Buffer.alloc(100));
  c.set('y', Buffer.alloc(100));
  assert.equal(c.size, 8, 'deleted bytes are given back');
});

test('with a TTL, get answers while fresh and stale answers after', () => {
  let now = 1000;
  const c = new Lru<string>({ maxEntries: 10, ttlMs: 50, now: () => now });
  c.set('h', 'host');
  assert.equal(c.get('h'), 'host');
  now += 50;
  assert.equal(c.get('h'), undefined);
  assert.equal(c.stale('h'), 'host');
  c.set('h', 'again');
  assert.equal(c.get('h'), 'again');
});
