import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatHtml, sameTree } from '../src/save/formathtml.ts';

const H = '<!DOCTYPE html>\n<html formathtml="true">';

function golden(input: string, expected: string): void {
  const out = formatHtml(input);
  assert.equal(out, expected);
  assert.ok(sameTree(input, out), 'same tree');
  assert.equal(formatHtml(out), out, 'idempotent');
}

test('re-indents with 2 spaces per level and expands multiline attributes one per line', () => {
  golden(
    H +
      '<body><div class="a"\n     id=b data-x=\'1\'   hidden><p title="x &amp; y">t</p></div>\n' +
      '<span class="one line" id="long">s</span></body></html>',
    '<!DOCTYPE html>\n<html formathtml="true">\n  <body>\n    <div\n      class="a"\n      id=b\n' +
      '      data-x=\'1\'\n      hidden>\n      <p title="x &amp; y">t</p>\n    </div>\n' +
      '    <span class="one line" id="long">s</span>\n  </body>\n</html>',
  );
});

test('a self-closing multiline tag keeps its slash; an unquoted value keeps a trailing slash', () => {
  golden(
    `${H}<body><input type="text"\n name=q/>\n<input\n  type="checkbox" checked />\n</body></html>`,
    '<!DOCTYPE html>\n<html formathtml="true">\n  <body>\n    <input\n      type="text"\n      name=q/>\n' +
      '    <input\n      type="checkbox"\n      checked />\n  </body>\n</html>',
  );
});

test('void elements stay as written', () => {
  golden(
    H +
      '<head><meta charset=utf-8><link rel="stylesheet" href="/a.css"></head>' +
      '<body><img src="a.png"><br><hr/><input value=x></body></html>',
    '<!DOCTYPE html>\n<html formathtml="true">\n  <head>\n    <meta charset=utf-8>\n' +
      '    <link rel="stylesheet" href="/a.css">\n  </head>\n  <body>\n    <img src="a.png">\n    <br>\n' +
      '    <hr/>\n    <input value=x>\n  </body>\n</html>',
  );
});

test('comments are kept and indented like elements', () => {
  golden(
    `${H}<head>\n<!-- head comment --></head><body><!-- a --><div><!--b--></div></body></html>`,
    '<!DOCTYPE html>\n<html formathtml="true">\n  <head>\n    <!-- head comment -->\n  </head>\n' +
      '  <body>\n    <!-- a -->\n    <div>\n      <!--b-->\n    </div>\n  </body>\n</html>',
  );
});

test('pre is byte-exact, inner markup included', () => {
  golden(
    `${H}<body><div>\n<pre>\n  keep   this\n    <b>as is</b>\n</pre></div></body></html>`,
    '<!DOCTYPE html>\n<html formathtml="true">\n  <body>\n    <div>\n      <pre>\n  keep   this\n' +
      '    <b>as is</b>\n</pre>\n    </div>\n  </body>\n</html>',
  );
});

test('inline svg is byte-exact, even its multiline start tag', () => {
  golden(
    `${H}<body><div><svg width="10"\n  height="10"><g>\n      <path d="M0 0"/>\n</g></svg></div></body></html>`,
    '<!DOCTYPE html>\n<html formathtml="true">\n  <body>\n    <div>\n      <svg width="10"\n  height="10"><g>\n' +
      '      <path d="M0 0"/>\n</g></svg>\n    </div>\n  </body>\n</html>',
  );
});

test('script with < inside and style are byte-exact', () => {
  golden(
    H +
      '<head><script>\n  if (a < b && c > d) { document.write("</div>") }\n</script>' +
      '<style>\n  p > a { color: red }\n</style></head></html>',
    '<!DOCTYPE html>\n<html formathtml="true">\n  <head>\n    <script>\n' +
      '  if (a < b && c > d) { document.write("</div>") }\n</script>\n    <style>\n  p > a { color: red }\n' +
      '</style>\n  </head>\n</html>',
  );
});

test('textarea is byte-exact', () => {
  golden(
    `${H}<body><form><textarea name="t">\n  a\n\n   b </textarea></form></body></html>`,
    '<!DOCTYPE html>\n<html formathtml="true">\n  <body>\n    <form>\n      <textarea name="t">\n  a\n\n   b </textarea>\n' +
      '    </form>\n  </body>\n</html>',
  );
});

test('the doctype is kept as written; whitespace before it is dropped', () => {
  golden(
    '\n\n<!doctype HTML>\n<html formathtml="true"><body></body></html>',
    '<!doctype HTML>\n<html formathtml="true">\n  <body>\n  </body>\n</html>',
  );
});

test('inline neighbours are never separated; text with content is never touched', () => {
  golden(
    `${H}<body><p><b>a</b><i>b</i> <em>c</em></p><div>\n      hello &amp; bye\n   </div></body></html>`,
    '<!DOCTYPE html>\n<html formathtml="true">\n  <body>\n    <p>\n      <b>a</b><i>b</i> <em>c</em>\n    </p>\n' +
      '    <div>\n      hello &amp; bye\n   </div>\n  </body>\n</html>',
  );
});

test('CRLF documents get CRLF line breaks; one blank line survives, more collapse', () => {
  golden(
    '<!DOCTYPE html>\r\n<html formathtml="true">\r\n<body>\r\n<div>\r\n<p>x</p>\r\n\r\n\r\n<p>y</p></div>\r\n</body>\r\n</html>\r\n',
    '<!DOCTYPE html>\r\n<html formathtml="true">\r\n  <body>\r\n    <div>\r\n      <p>x</p>\r\n\r\n      <p>y</p>\r\n' +
      '    </div>\r\n  </body>\r\n</html>\r\n',
  );
});

test('implied end tags are indented by the tree the parser builds', () => {
  golden(
    `${H}<body><ul><li>one<li>two</ul>\n<p>a<p>b</body></html>`,
    '<!DOCTYPE html>\n<html formathtml="true">\n  <body>\n    <ul>\n      <li>one<li>two</ul>\n    <p>a<p>b</body>\n</html>',
  );
});

test('without formathtml="true" on the root <html> the input comes back unchanged', () => {
  const messy = '<html><body><div>\n<p>x</p>   </div></body></html>';
  for (const doc of [
    messy,
    messy.replace('<html>', '<html formathtml="false">'),
    messy.replace('<html>', '<html formathtml="TRUE">'),
    messy.replace('<html>', '<html formathtml="true ">'),
    messy.replace('<html>', '<html formathtml>'),
    messy.replace('<div>', '<div formathtml="true">'),
    `<div formathtml="true"></div>${messy.replace('<html>', '<html formathtml="true">')}`,
    '',
    'formathtml',
  ]) {
    assert.equal(formatHtml(doc), doc, doc);
  }
});

test('the attribute may be unquoted, single-quoted or in capitals; its value must be exactly true', () => {
  for (const attr of ['formathtml=true', "formathtml='true'", 'FormatHTML="true"', 'formathtml="&#116;rue"']) {
    const doc = `<html ${attr}><body><div><p>x</p></div></body></html>`;
    assert.equal(
      formatHtml(doc),
      `<html ${attr}>\n  <body>\n    <div>\n      <p>x</p>\n    </div>\n  </body>\n</html>`,
      attr,
    );
  }
});

test('nesting deeper than 256 comes back unchanged; 256 levels are formatted', () => {
  // html + body + n inline spans: nothing to break between the spans, only the line before <body>.
  const nested = (levels: number) =>
    '<html formathtml="true">\n<body>' +
    '<span>'.repeat(levels - 2) +
    'x' +
    '</span>'.repeat(levels - 2) +
    '</body></html>';
  const tooDeep = nested(257);
  assert.equal(formatHtml(tooDeep), tooDeep);
  const ok = nested(256);
  const expected = ok
    .replace('\n<body><span>', '\n  <body>\n    <span>')
    .replace('</span></body></html>', '</span>\n  </body>\n</html>');
  assert.equal(formatHtml(ok), expected);
});

test('output longer than 3x the input comes back unchanged', () => {
  // 200 nested divs with nothing between them: formatting would add ~40 KB of indentation.
  const doc = `<html formathtml="true"><body>${'<div>'.repeat(200)}${'</div>'.repeat(200)}</body></html>`;
  assert.equal(formatHtml(doc), doc);
  const small = `<html formathtml="true"><body>${'<div>'.repeat(5)}${'</div>'.repeat(5)}</body></html>`;
  assert.ok(formatHtml(small).length > small.length);
});

test('sameTree sees real changes', () => {
  assert.ok(sameTree('<p>a</p>\n<p>b</p>', '<p>a</p><p>b</p>'));
  assert.ok(!sameTree('<p>a </p>', '<p>a</p>'));
  assert.ok(!sameTree('<p class="x">a</p>', '<p class="y">a</p>'));
  assert.ok(!sameTree('<pre>\n</pre>', '<pre></pre>'));
  assert.ok(!sameTree('<!-- a -->', '<!--a-->'));
});

// ---------------------------------------------------------------------------
// Property tests over generated documents.

const attrValue = fc.constantFrom('x', '"a b"', "'q\"'", 'a&amp;b', '"line\n two"', '""', '"&lt;&#x41;"', 'x/');
const attrName = fc.constantFrom('class', 'id', 'data-x', 'hidden', 'onclick', 'style', 'formathtml', 'ID');
const attrSep = fc.constantFrom(' ', '  ', '\n  ', '\n', '\t', '\r\n    ', '/');
const attribute = fc
  .tuple(attrSep, attrName, fc.option(attrValue, { nil: undefined }))
  .map(([sep, name, value]) => sep + name + (value === undefined ? '' : `=${value}`));
const tagName = fc.constantFrom(
  'div',
  'p',
  'span',
  'b',
  'ul',
  'li',
  'table',
  'tr',
  'td',
  'pre',
  'textarea',
  'script',
  'style',
  'svg',
  'path',
  'g',
  'title',
  'form',
  'select',
  'option',
  'img',
  'br',
  'input',
  'meta',
  'a',
  'h1',
  'section',
  'button',
  'code',
  'template',
  'math',
  'noscript',
  'head',
  'body',
  'x-widget',
  'hr',
  'DIV',
);
const openTag = fc
  .tuple(tagName, fc.array(attribute, { maxLength: 3 }), fc.constantFrom('>', ' >', '/>', ' />', '\n>', '\n/>'))
  .map(([name, attrs, end]) => `<${name}${attrs.join('')}${end}`);
const closeTag = fc.tuple(tagName, fc.constantFrom('>', ' >', '\n>')).map(([name, end]) => `</${name}${end}`);
const text = fc.constantFrom(
  'hello',
  ' ',
  '  ',
  '\n',
  '\n\n    ',
  '\r\n',
  '\t',
  'a < b',
  '&amp;',
  '&#32;',
  '&nbsp;',
  '\u00a0',
  'é漢😀',
  '  x  ',
  '>',
  '</>',
  '<',
  '&',
  'if (a<b) x();',
  '\n  text\n',
  '\f',
);
const other = fc.constantFrom(
  '<!-- c -->',
  '<!---->',
  '<!-->',
  '<!x>',
  '<?pi?>',
  '<![CDATA[x]]>',
  '<!DOCTYPE html>',
  '</ x>',
  '</1>',
);
const piece = fc.oneof(
  { arbitrary: openTag, weight: 4 },
  { arbitrary: closeTag, weight: 3 },
  { arbitrary: text, weight: 4 },
  { arbitrary: other, weight: 1 },
);
const prefix = fc.constantFrom(
  '<!DOCTYPE html>\n<html formathtml="true">',
  '<html formathtml="true">\n',
  '\n<html lang="en"\n   formathtml="true">',
  '<!DOCTYPE html>\r\n<html formathtml=true>\r\n',
);
const messyDoc = fc
  .tuple(prefix, fc.array(piece, { maxLength: 60 }), fc.constantFrom('', '</html>', '</html>\n', '\n'))
  .map(([p, pieces, end]) => p + pieces.join('') + end);

// A well-formed tree, the shape real saved documents have.
const { node } = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    other,
    fc
      .tuple(
        fc.constantFrom('div', 'p', 'span', 'ul', 'li', 'section', 'b', 'pre', 'svg', 'button', 'td', 'tr', 'table'),
        fc.array(attribute, { maxLength: 3 }),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.constantFrom('', '\n', '\n    ', ' '),
      )
      .map(([name, attrs, kids, ws]) => `<${name}${attrs.join('')}>${ws}${kids.join(ws)}${ws}</${name}>`),
    fc.constantFrom('<img src="a.png">', '<br>', '<script>if (a < b) {}</script>', '<style>a > b {}</style>'),
  ),
}));
const treeDoc = fc
  .tuple(prefix, fc.array(node, { maxLength: 6 }))
  .map(([p, kids]) => `${p}<head><title>t</title></head><body>${kids.join('\n')}</body></html>`);

let changed = 0;
function checkFormatting(doc: string): void {
  const once = formatHtml(doc);
  if (once !== doc) changed++;
  assert.equal(typeof once, 'string');
  assert.ok(sameTree(doc, once), `tree changed:\n${JSON.stringify(doc)}\n${JSON.stringify(once)}`);
  assert.equal(formatHtml(once), once, `not idempotent:\n${JSON.stringify(doc)}`);
}

test('property: messy generated documents keep their tree and format idempotently', () => {
  changed = 0;
  fc.assert(fc.property(messyDoc, checkFormatting), { numRuns: 400, seed: 20240101 });
  assert.ok(changed > 200, `only ${changed} of 400 documents were reformatted`);
});

test('property: well-formed generated documents keep their tree and format idempotently', () => {
  changed = 0;
  fc.assert(fc.property(treeDoc, checkFormatting), { numRuns: 300, seed: 7 });
  assert.ok(changed > 150, `only ${changed} of 300 documents were reformatted`);
});

test('property: formatHtml never throws and leaves documents without the opt-in alone', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.array(piece, { maxLength: 30 }), (junk, pieces) => {
      const doc = junk + pieces.join('');
      const out = formatHtml(doc);
      if (!/formathtml/i.test(doc)) assert.equal(out, doc);
      assert.equal(
        formatHtml(`<html formathtml="true">${doc}`),
        formatHtml(formatHtml(`<html formathtml="true">${doc}`)),
      );
    }),
    { numRuns: 300, seed: 42 },
  );
});
