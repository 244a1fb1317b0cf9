// The edit engine of `edit_document` (src/core/html-edit.ts): each edit matches exactly once or is refused naming
// the count; element edits land on the element's own source range (implicitly closed elements, void elements,
// attributes with odd quoting); everything outside the edited range is left byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyEdits, shortDiff, type HtmlEdit } from '../src/core/html-edit.ts';
import { KilnError } from '../src/errors.ts';

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Todo</title>
  <style>  li { color : red } </style>
</head>
<body>
  <h1   class='big'  data-edit-id="title">Todo   list</h1>
  <ul id="items">
    <li>milk
    <li>bread
  </ul>
  <p class="note">one<p class="note">two</p>
  <img src="a.png" alt="x > y">
  <div data-x="a'b" hidden></div>
  <svg><circle r="1"/></svg>
</body>
</html>
`;

const edit = (...edits: HtmlEdit[]) => applyEdits(PAGE, edits).text;

function refusal(fn: () => unknown): { code?: string; matches?: unknown; edit?: unknown; msg: string } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof KilnError, String(err));
    return { code: err.code, matches: err.extra?.matches, edit: err.extra?.edit, msg: err.message };
  }
  assert.fail('expected a refusal');
}

test('an exact text replacement changes that text only; no match and two matches are refused with the count', () => {
  const out = edit({ op: 'replaceText', find: 'Todo   list', replace: 'Shopping' });
  assert.equal(out, PAGE.replace('Todo   list', 'Shopping'));
  const none = refusal(() => edit({ op: 'replaceText', find: 'nothing like this', replace: '' }));
  assert.deepEqual([none.code, none.matches, none.edit], ['edit-match', 0, 0]);
  assert.match(none.msg, /matches 0 times/);
  const two = refusal(() => edit({ op: 'replaceText', find: 'class="note"', replace: '' }));
  assert.deepEqual([two.code, two.matches], ['edit-match', 2]);
  assert.match(two.msg, /matches 2 times/);
  assert.equal(refusal(() => edit({ op: 'replaceText', find: '', replace: 'x' })).code, 'edit-invalid');
});

test('edits apply in order, each to what the one before left; one refusal refuses them all', () => {
  const out = edit(
    { op: 'replaceText', find: '<li>milk', replace: '<li>oat milk' },
    { op: 'replaceText', find: 'oat milk', replace: 'soy milk' },
  );
  assert.ok(out.includes('<li>soy milk\n'));
  const second = refusal(() =>
    edit({ op: 'replaceText', find: 'milk', replace: 'x' }, { selector: 'p', op: 'remove' } as HtmlEdit),
  );
  assert.deepEqual([second.code, second.edit, second.matches], ['edit-match', 1, 2]);
});

test('element edits by selector and data-edit-id land on the element’s own source', () => {
  assert.equal(
    edit({ op: 'replaceInner', editId: 'title', html: 'Groceries' }),
    PAGE.replace('Todo   list</h1>', 'Groceries</h1>'),
  );
  assert.equal(
    edit({ op: 'replace', selector: 'h1', html: '<h2>x</h2>' }),
    PAGE.replace(`<h1   class='big'  data-edit-id="title">Todo   list</h1>`, '<h2>x</h2>'),
  );
  assert.equal(
    edit({ op: 'append', selector: '#items', html: '<li>eggs\n  ' }),
    PAGE.replace('<li>bread\n  </ul>', '<li>bread\n  <li>eggs\n  </ul>'),
  );
  assert.equal(
    edit({ op: 'insertBefore', selector: '#items', html: '<p>before</p>' }),
    PAGE.replace('<ul id="items">', '<p>before</p><ul id="items">'),
  );
  assert.equal(
    edit({ op: 'insertAfter', selector: 'img', html: '<br>' }),
    PAGE.replace('<img src="a.png" alt="x > y">', '<img src="a.png" alt="x > y"><br>'),
  );
  assert.equal(edit({ op: 'remove', selector: 'svg' }), PAGE.replace('<svg><circle r="1"/></svg>', ''));
});

test('implicitly closed elements end where their content does, not at the next tag', () => {
  // `<li>milk` is closed by the next `<li>`: removing it leaves that one whole.
  assert.equal(edit({ op: 'remove', selector: 'li:first-child' }), PAGE.replace('<li>milk\n    ', ''));
  // The last `<li>` is closed by `</ul>`, which stays.
  assert.equal(
    edit({ op: 'replaceInner', selector: 'li:last-child', html: 'rye\n  ' }),
    PAGE.replace('<li>bread\n  </ul>', '<li>rye\n  </ul>'),
  );
  // `<p class="note">one` is closed by the next `<p>`.
  assert.equal(
    edit({ op: 'replace', selector: 'p.note:first-of-type', html: '<p>1</p>' }),
    PAGE.replace('<p class="note">one<p', '<p>1</p><p'),
  );
});

test('attributes: set replaces the first written one (any quoting) or adds one; remove takes every copy', () => {
  assert.equal(
    edit({ op: 'setAttribute', selector: 'h1', name: 'class', value: 'huge "x" & y' }),
    PAGE.replace(`<h1   class='big'`, '<h1 class="huge &quot;x&quot; &amp; y"'),
  );
  assert.equal(
    edit({ op: 'setAttribute', selector: 'img', name: 'width', value: '10' }),
    PAGE.replace('alt="x > y">', 'alt="x > y" width="10">'),
  );
  assert.equal(
    edit({ op: 'setAttribute', selector: 'circle', name: 'cx', value: '2' }),
    PAGE.replace('<circle r="1"/>', '<circle r="1" cx="2"/>'),
  );
  assert.equal(
    edit({ op: 'removeAttribute', selector: 'div', name: 'hidden' }),
    PAGE.replace(`<div data-x="a'b" hidden>`, `<div data-x="a'b">`),
  );
  assert.equal(
    edit({ op: 'removeAttribute', selector: 'h1', name: 'CLASS' }),
    PAGE.replace(`<h1   class='big'  data-edit-id`, '<h1  data-edit-id'),
  );
  assert.equal(
    refusal(() => edit({ op: 'setAttribute', selector: 'h1', name: 'a b', value: '' })).code,
    'edit-invalid',
  );
});

test('a selector matching nothing or several is refused with the count; a bad selector and content of a void element too', () => {
  const none = refusal(() => edit({ op: 'remove', selector: '.missing' }));
  assert.deepEqual([none.code, none.matches], ['edit-match', 0]);
  const many = refusal(() => edit({ op: 'remove', selector: 'li' }));
  assert.deepEqual([many.code, many.matches], ['edit-match', 2]);
  assert.equal(refusal(() => edit({ op: 'remove', selector: 'p[' })).code, 'edit-invalid');
  assert.equal(refusal(() => edit({ op: 'replaceInner', selector: 'img', html: 'x' })).code, 'edit-invalid');
  assert.equal(refusal(() => edit({ op: 'append', selector: 'meta', html: 'x' })).code, 'edit-invalid');
  const unknownId = refusal(() => edit({ op: 'remove', editId: 'no"such' }));
  assert.deepEqual([unknownId.code, unknownId.matches], ['edit-match', 0]);
});

test('the answer carries a short unified diff of the change', () => {
  const { diff } = applyEdits(PAGE, [{ op: 'replaceText', find: '<li>milk', replace: '<li>oat milk' }]);
  assert.match(diff, /^@@ -\d+,\d+ \+\d+,\d+ @@/);
  assert.match(diff, /^- {4}<li>milk$/m);
  assert.match(diff, /^\+ {4}<li>oat milk$/m);
  assert.equal(shortDiff('a', 'a'), '');
  const long = shortDiff('x\n'.repeat(10), 'y\n'.repeat(5000));
  assert.match(long, /diff cut at 4000 characters/);
});

test('whatever is edited, the text before and after the edited element is unchanged', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.constantFrom('replace', 'replaceInner', 'remove'), (html, op) => {
      const e = (op === 'remove' ? { op, selector: '#items' } : { op, selector: '#items', html }) as HtmlEdit;
      const out = edit(e);
      const start = PAGE.indexOf('<ul id="items">');
      const end = PAGE.indexOf('</ul>') + 5;
      assert.equal(out.slice(0, start), PAGE.slice(0, start));
      assert.equal(out.slice(out.length - (PAGE.length - end)), PAGE.slice(end));
    }),
  );
});
