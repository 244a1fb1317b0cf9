// The data-clobber guard's judgement (src/guard/classify.ts), case by case: Hyperclay Local 1.22's own
// examples (tests/node/data-loss-guard.node-test.js) and the rules they rest on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPreview, classify, islandHash, lossUndone, shouldFire, type Provenance } from '../src/guard/classify.ts';

const island = (api: unknown) => ({ api });
const fires = (prov: Provenance, before: unknown, after: unknown, uiWorkPending = false) =>
  shouldFire(
    prov,
    uiWorkPending,
    island(before),
    after === null ? null : island(after),
    classify(island(before), after === null ? null : island(after)),
  );

test('islandHash is SHA-256 of the island with sorted keys: the value Hyperclay Local and hyperclay.com check', () => {
  assert.equal(
    islandHash({ api: { title: 'Hello', items: ['x', 'y'] } }),
    '3587d7ca312f4f4f921a818a58ea1b7b9a588c1b5550ed9bb19fff2498a1a9a2',
  );
  assert.equal(islandHash({ api: { b: 1, a: [2] } }), islandHash({ api: { a: [2], b: 1 } }));
});

test('islandHash orders integer-like keys as JavaScript objects do (Hyperclay Local 1.22 islandHash): ascending numbers first, then the rest sorted', () => {
  // Keys "9" and "10", an array index at the top of its range, one just past it (an ordinary key), a
  // number with a leading zero (an ordinary key), and the same inside a list's object. Golden from
  // Hyperclay Local's own islandHash over this island.
  const island = {
    api: {
      rows: {
        '10': 'ten',
        '9': 'nine',
        a: 1,
        '4294967295': 'big',
        '4294967294': 'idx',
        '01': 'z',
        Z: [{ '2': true, b: null, '1': 'one' }],
      },
    },
  };
  assert.equal(islandHash(island), 'd0797ceb55dffeb38616b938634a1ce3a952f736cf3b6acad3fc9bda28e84efc');
});

test('a person deleting one item is silent; a gestured wipe of most items fires', () => {
  assert.equal(fires('ui-gestured', { items: ['a', 'b', 'c'] }, { items: ['a', 'b'] }), false);
  assert.equal(fires('ui-gestured', { items: ['a', 'b', 'c', 'd', 'e'] }, { items: ['a'] }), true);
});

test('a sync write or a page script that destroys anything fires; the same edit by a person does not', () => {
  assert.equal(fires('external', { items: ['a', 'b', 'c'] }, { items: ['a'] }), true);
  assert.equal(
    fires('ui-background', { title: 'Hi', items: ['a', 'b', 'c'] }, { title: 'Hi', items: ['a', 'b'] }),
    true,
  );
  assert.equal(
    fires('ui-gestured', { title: 'Hi', items: ['a', 'b', 'c'] }, { title: 'Hi', items: ['a', 'b'] }),
    false,
  );
  assert.equal(fires('ui-unknown', { title: 'Hi', items: ['a', 'b', 'c'] }, { title: 'Hi', items: ['a', 'b'] }), false);
});

test('changes and additions are not losses; a sync write over a person’s unsynced edit is', () => {
  assert.equal(fires('external', { title: 'Hi' }, { title: 'Hello' }), false);
  assert.equal(fires('external', { title: 'Hi' }, { title: 'Hello' }, true), true);
  assert.equal(fires('ui-background', { items: ['a'] }, { items: ['a', 'b'] }), false);
});

test('a page whose api rules tag vanished fires; a page that never had data never does', () => {
  assert.equal(fires('ui-gestured', { title: 'Hi' }, null), true);
  assert.equal(shouldFire('external', false, null, island({ t: 'x' }), classify(null, island({ t: 'x' }))), false);
  assert.equal(fires('external', { title: '' }, { title: '' }), false);
});

test('lists of records are matched by id, then content: reordering destroys nothing, a removed record does', () => {
  const a = { id: '1', name: 'Ada Lovelace', note: 'first program' };
  const b = { id: '2', name: 'Grace Hopper', note: 'compiler' };
  const c = { id: '3', name: 'Alan Turing', note: 'machines' };
  const reordered = classify(island({ people: [a, b, c] }), island({ people: [c, a, b] }));
  assert.equal(reordered.removedItems + reordered.destroyedLeaves + reordered.itemWipes, 0);
  const removed = classify(island({ people: [a, b, c] }), island({ people: [a, c] }));
  assert.equal(removed.removedItems, 1);
  assert.deepEqual(removed.paths, ['api.people[1]']);
  const wiped = classify(island({ people: [a, b] }), island({ people: [a, { id: '2', name: '', note: '' }] }));
  assert.equal(wiped.itemWipes, 1);
});

test('placeholders put back over real text count as resets; text brought back undoes the loss', () => {
  const d = classify(island({ a: 'x1', b: 'x2', c: 'x3' }), island({ a: 'Untitled', b: 'New item', c: 'TODO' }));
  assert.equal(d.placeholderResets, 3);
  assert.equal(lossUndone(classify(island({ a: 'x', l: ['1', '2'] }), island({ a: 'x', l: ['2', '1'] }))), true);
  assert.equal(lossUndone(classify(island({ a: 'x' }), island({ a: 'y' }))), false);
});

test('the panel’s preview: short strings per changed key, and what a restore would drop', () => {
  assert.deepEqual(buildPreview({ title: 'Hi', items: ['a', 'b', 'c'] }, { title: 'Hi', items: [] }), {
    preview: [{ key: 'items', now: '— empty —', yours: 'a, b, c' }],
    droppedAdditions: 0,
  });
  assert.deepEqual(buildPreview({ items: ['a'] }, { items: ['x', 'y', 'z'] }).droppedAdditions, 2);
  const long = 'word '.repeat(40);
  assert.equal(buildPreview({ t: long }, { t: '' }).preview[0].yours.length, 80);
  assert.deepEqual(buildPreview([{ id: 1 }, { id: 2 }], []).preview, [
    { key: 'items', now: '— empty —', yours: '2 items' },
  ]);
});
