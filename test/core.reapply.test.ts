// Whether a page undid a change (src/core/reapply.ts): the change as a line patch of the pages' text, applied to the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reapplied } from '../src/core/reapply.ts';

const lines = (...l: string[]) => `${l.join('\n')}\n`;
const before = lines(
  '<ul>',
  '<li>a</li>',
  '<li>b</li>',
  '</ul>',
  '<h1>Title</h1>',
  '<p>one</p>',
  '<p>two</p>',
  '<p>three</p>',
);
const changed = lines(
  '<ul>',
  '<li>a</li>',
  '<li>b</li>',
  '<li>agent</li>',
  '</ul>',
  '<h1>Title</h1>',
  '<p>one</p>',
  '<p>two</p>',
  '<p>three</p>',
);

test('a page that lacks the change, with its own change elsewhere: the change applies onto it', () => {
  const stale = before.replace('<p>three</p>', '<p>three, edited in the tab</p>');
  assert.equal(reapplied(before, changed, stale), '\na\nb\nagent\n\nTitle\none\ntwo\nthree, edited in the tab\n');
});

test('a page that has the change (an inserted line too): nothing to reapply', () => {
  const fresh = changed.replace('<p>three</p>', '<p>three, edited in the tab</p>');
  assert.equal(reapplied(before, changed, fresh), null);
  assert.equal(reapplied(before, changed, changed), null);
});

test('a page that changed the same lines itself, or no change at all: nothing is said', () => {
  const clash = before.replace('<li>b</li>\n</ul>', '<li>b, edited</li>\n</ul>');
  assert.equal(reapplied(before, changed, clash), null);
  assert.equal(reapplied(before, before, before.replace('one', 'uno')), null);
});

test('markup written another way (hyperclayjs’s first save quotes every attribute, adds its own) is not a difference', () => {
  const item = '  <li><input persist><span editmode:contenteditable>a</span></li>';
  const rest = ['<p>one</p>', '<p>two</p>', '<p>three</p>'];
  const before = lines('<ul class="todo">', item, '  </ul>', ...rest, '<h2>Notes</h2>');
  const changed = lines('<ul class="todo">', item, '  <li><span>agent</span></li></ul>', ...rest, '<h2>Notes</h2>');
  const rewritten =
    '  <li><input persist="" style=""><span editmode:contenteditable="" inert-contenteditable="true">a</span></li>';
  const stale = lines(
    '<ul class="todo" savestatus="saved">',
    rewritten,
    '  </ul>',
    ...rest,
    '<h2 style="">Notes, renamed</h2>',
  );
  assert.equal(reapplied(before, changed, stale), '\n  a\n  agent\none\ntwo\nthree\nNotes, renamed\n');
  const fresh = lines(
    '<ul class="todo">',
    rewritten,
    '  <li><span>agent</span></li></ul>',
    ...rest,
    '<h2>Notes, renamed</h2>',
  );
  assert.equal(reapplied(before, changed, fresh), null);
});
