// Every form of the rule grammar, the lenient `?data=` syntax, the rules tag, and every error, against the pure
// engine (src/rules). The HTTP routes are tested with the routes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compileRules,
  compileRulesText,
  extract,
  extractApi,
  extractData,
  findRulesTag,
  parseDocument,
  parseRelaxed,
  rulesLimits,
  NO_API_RULES_TAG,
  type Extraction,
  type ParsedDocument,
} from '../src/rules/index.ts';

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <title>  The Page  </title>
  <meta name="description" content="About things">
  <script type="application/json" data-rules-name="other" data-rules-version="1">{"other": "h1"}</script>
</head>
<body class="home">
  <h1 id="top">  Hello   <b>World</b>
  </h1>
  <p class="intro" data-empty="" hidden>First</p>
  <p class="intro">Second</p>
  <a id="mail" href="mailto:me@example.org">Mail me</a>
  <ul class="items">
    <li class="item" data-id="1"><span class="name">One</span> <span class="price">1.00</span> <a href="/1">go</a></li>
    <li class="item" data-id="2"><span class="name">Two</span> <span class="price">2.00</span></li>
    <li class="item" data-id="3"><span class="name">Three</span><ul><li class="item">Nested</li></ul></li>
  </ul>
  <form>
    <input id="text" type="text" value="typed" readonly>
    <input id="box" type="checkbox" checked>
    <input id="radio" type="radio" value="r1">
    <textarea id="ta">area text</textarea>
    <select id="sel"><option value="a">A</option><option selected>Bee</option></select>
    <button id="btn" disabled>Go</button>
  </form>
  <div id="amp" title="a &amp; b &quot;q&quot;">x &lt; y &amp; z&nbsp;</div>
  <h2>One</h2><p>after one</p><p>second after one</p>
  <h2>Two</h2><p>after two</p>
  <script>var app = 1;</script>
  <script type="application/json" data-rules-name="api cms" data-rules-version="1">
    {title: 'title', heading: h1, intros: '.intro[]',}
  </script>
  <ul class="cms"><li>real</li><li cms-template>seed</li></ul>
  <template><p class="intro">inert</p></template>
</body>
</html>`;

const doc = parseDocument(PAGE);

function ok(r: Extraction): unknown {
  assert.ok(r.ok, `expected data, got ${JSON.stringify(r)}`);
  return r.data;
}
const data = (rules: string, d: ParsedDocument | string = doc) => ok(extractData(d, rules));
const fails = (r: Extraction, status: number, code: string, includes?: string) => {
  assert.ok(!r.ok, `expected an error, got ${JSON.stringify(r)}`);
  assert.equal(r.status, status);
  assert.equal(r.code, code);
  if (includes) assert.ok(r.error.includes(includes), r.error);
};

test('"<selector>": trimmed text of the first match; no match is null, and the key is kept', () => {
  assert.deepEqual(data('{"t": "title", "h": "h1", "p": "p.intro", "none": ".missing"}'), {
    t: 'The Page',
    h: 'Hello   World',
    p: 'First',
    none: null,
  });
});

test('"<selector>@<attr>": attribute of the first match; missing element, missing or empty attribute: null', () => {
  assert.deepEqual(
    data(
      '{"d": "meta[name=description]@content", "id": "li.item@data-id", "noEl": ".missing@href", "noAttr": "h1@title", "empty": "p.intro@data-empty"}',
    ),
    { d: 'About things', id: '1', noEl: null, noAttr: null, empty: null },
  );
});

test('"@<attr>": attribute of the current root (null on the document itself)', () => {
  assert.deepEqual(data('{"ids": [".items > li", "@data-id"], "top": "@lang"}'), { ids: ['1', '2', '3'], top: null });
});

test('"<selector>[]": texts of all matches ([] for none)', () => {
  assert.deepEqual(data('{"names": ".name[]", "none": ".missing[]"}'), { names: ['One', 'Two', 'Three'], none: [] });
});

test('["<selector>", shape]: one object per match, every rule scoped to that match', () => {
  assert.deepEqual(
    data(
      '{"items": [".items > li", {"name": ".name", "price": ".price", "link": "a@href", "id": "@data-id", "nested": "ul li[]", "self": "."}]}',
    ),
    {
      items: [
        { name: 'One', price: '1.00', link: '/1', id: '1', nested: [], self: 'One 1.00 go' },
        { name: 'Two', price: '2.00', link: null, id: '2', nested: [], self: 'Two 2.00' },
        { name: 'Three', price: null, link: null, id: '3', nested: ['Nested'], self: 'ThreeNested' },
      ],
    },
  );
  // Scoped: the whole selector must match inside the item (a `ul` above the item does not count).
  assert.deepEqual(data('["li.item", {"viaUl": "ul li"}]'), [
    { viaUl: null },
    { viaUl: null },
    { viaUl: 'Nested' },
    { viaUl: null },
  ]);
  assert.deepEqual(data('{"none": [".missing", {"a": "h1"}]}'), { none: [] });
});

test('{key: rule}: nested objects', () => {
  assert.deepEqual(data('{"page": {"title": "title", "meta": {"description": "meta[name=description]@content"}}}'), {
    page: { title: 'The Page', meta: { description: 'About things' } },
  });
});

test('any rule can be the whole rules value', () => {
  assert.equal(data('"h1"'), 'Hello   World');
  assert.deepEqual(data('".name[]"'), ['One', 'Two', 'Three']);
  assert.deepEqual(data('[".items > li", "@data-id"]'), ['1', '2', '3']);
});

test('relative selectors inside a list item: > child, + next, ~ following, :scope', () => {
  assert.deepEqual(data('["h2", {"next": "+ p", "following": "~ p[]"}]'), [
    { next: 'after one', following: ['after one', 'second after one', 'after two'] },
    { next: 'after two', following: ['after two'] },
  ]);
  assert.deepEqual(data('[".items > li", {"first": "> span", "scope": ":scope > span.price"}]'), [
    { first: 'One', scope: '1.00' },
    { first: 'Two', scope: '2.00' },
    { first: 'Three', scope: null },
  ]);
});

test('positional pseudo-classes (jQuery): :first :last :eq :gt :lt :even :odd, also mid-selector', () => {
  assert.deepEqual(
    data(
      '{"first": ".name:first", "last": ".name:last", "eq": ".name:eq(1)", "neg": ".name:eq(-1)", "gt": ".name:gt(0)[]", "lt": ".name:lt(2)[]", "even": ".name:even[]", "odd": ".name:odd[]", "mid": ".items > li:first span[]"}',
    ),
    {
      first: 'One',
      last: 'Three',
      eq: 'Two',
      neg: 'Three',
      gt: ['Two', 'Three'],
      lt: ['One', 'Two'],
      even: ['One', 'Three'],
      odd: ['Two'],
      mid: ['One', '1.00'],
    },
  );
});

test('standard pseudo-classes: :nth-of-type, :first-child, :not, :has, :contains', () => {
  assert.deepEqual(
    data(
      '{"nth": "p:nth-of-type(2)", "firstChild": ".items > li:first-child .name", "not": ".name:not(:first-child)[]", "has": "li:has(a) .name", "contains": "li:contains(Two) .price"}',
    ),
    { nth: 'Second', firstChild: 'One', not: [], has: 'One', contains: '2.00' },
  );
});

test('DOM properties through @: text, HTML, form state, names, ids and classes', () => {
  assert.deepEqual(
    data(`{
      "textContent": "h1@textContent", "innerText": "h1@innerText", "innerHTML": "h1@innerHTML",
      "outerHTML": "li.item@outerHTML", "escaped": "#amp@outerHTML",
      "inputValue": "#text@value", "checkboxValue": "#box@value", "radioValue": "#radio@value",
      "optionValue": "#sel option:nth-of-type(2)@value", "textareaValue": "#ta@value", "selectValue": "#sel@value",
      "checked": "#box@checked", "notChecked": "#text@checked", "selected": "#sel option:nth-of-type(2)@selected",
      "disabled": "#btn@disabled", "readOnly": "#text@readOnly", "type": "#text@type",
      "tagName": "h1@tagName", "nodeName": "h1@nodeName", "nodeType": "h1@nodeType",
      "id": "h1@id", "className": "body@className", "title": "#amp@title", "dataset": "li@dataset",
      "hiddenAttr": "p.intro@hidden", "rootText": "title@textContent"
    }`),
    {
      textContent: '  Hello   World\n  ',
      innerText: '  Hello   World\n  ',
      innerHTML: '  Hello   <b>World</b>\n  ',
      outerHTML:
        '<li class="item" data-id="1"><span class="name">One</span> <span class="price">1.00</span> <a href="/1">go</a></li>',
      escaped: '<div id="amp" title="a &amp; b &quot;q&quot;">x &lt; y &amp; z&nbsp;</div>',
      inputValue: 'typed',
      checkboxValue: 'on',
      radioValue: 'r1',
      optionValue: 'Bee',
      textareaValue: null,
      selectValue: null,
      checked: 'true',
      notChecked: 'false',
      selected: 'true',
      disabled: 'true',
      readOnly: 'true',
      type: 'text',
      tagName: 'H1',
      nodeName: 'H1',
      nodeType: '1',
      id: 'top',
      className: 'home',
      title: 'a & b "q"',
      dataset: null,
      hiddenAttr: 'hidden',
      rootText: '  The Page  ',
    },
  );
});

test('the selector/attribute split is the last @ outside brackets and quotes', () => {
  assert.deepEqual(
    data(`{"href": "a[href='mailto:me@example.org']@href", "text": "a[href*='@']", "last": "#mail@id"}`),
    { href: 'mailto:me@example.org', text: 'Mail me', last: 'mail' },
  );
});

test('"." is the text of the current root', () => {
  assert.deepEqual(data('[".items > li", "."]'), ['One 1.00 go', 'Two 2.00', 'ThreeNested']);
});

test('rules tags, [cms-template] rows and <template> content never match', () => {
  assert.deepEqual(data('{"scripts": "script[]", "cms": ".cms li[]", "intros": ".intro[]"}'), {
    scripts: ['var app = 1;'],
    cms: ['real'],
    intros: ['First', 'Second'],
  });
});

test('numbers, booleans and null as rules answer null; __proto__ keys are left out; the last duplicate key wins', () => {
  assert.deepEqual(data('{"n": 1, "b": true, "z": null, "__proto__": {"x": "h1"}, "ok": "title"}'), {
    n: null,
    b: null,
    z: null,
    ok: 'The Page',
  });
  assert.deepEqual(data('{a: h1, a: title}'), { a: 'The Page' });
});

test('lenient syntax: unquoted keys and selectors, single quotes, trailing commas, colons and brackets in selectors', () => {
  assert.deepEqual(data('{title: title, items: ul.items > li .name[]}'), {
    title: 'The Page',
    items: ['One', 'Two', 'Three'],
  });
  assert.deepEqual(data("{'t': 'title', h: \"h1\",}"), { t: 'The Page', h: 'Hello   World' });
  assert.deepEqual(
    data(
      "{first: li:first-child .name, second: p:nth-of-type(2), link: a[href]@href, ids: [.items > li, '@data-id'],}",
    ),
    {
      first: 'One',
      second: 'Second',
      link: 'mailto:me@example.org',
      ids: ['1', '2', '3'],
    },
  );
  // A bare word runs to the next , { or }, and is not trimmed at its end (as in the reference): so a bare word
  // swallows a following ] (quote the last element of a list), and `{ y : .i }` has the key "y ".
  assert.ok(!parseRelaxed('[.items > li, @data-id]').ok);
  assert.deepEqual(parseRelaxed('{ y : .i }'), { ok: true, value: { 'y ': '.i ' } });
  assert.deepEqual(parseRelaxed(`{a: 'it\\'s "x"'}`), { ok: true, value: { a: `it's "x"` } });
});

test('implied elements: html, head, body and tbody exist as in a browser', () => {
  const bare = parseDocument('<title>T</title><h1>Hi</h1><table><tr><td>cell</td></tr></table>');
  assert.deepEqual(
    data('{"t": "html > head > title", "h": "html > body > h1", "td": "table > tbody > tr > td"}', bare),
    { t: 'T', h: 'Hi', td: 'cell' },
  );
});

test('the api rules tag: the first <script data-rules-name> whose names include api, relaxed JSON body', () => {
  assert.deepEqual(ok(extractApi(doc)), { title: 'The Page', heading: 'Hello   World', intros: ['First', 'Second'] });
  assert.deepEqual(ok(extractApi(PAGE)), ok(extractApi(doc)), 'HTML text or a parsed document');
  const two =
    '<h1>A</h1><script type="application/json" data-rules-name="api" data-rules-version="1">{"first": "h1"}</script><script type="application/json" data-rules-name="api" data-rules-version="1">{"second": "h1"}</script>';
  assert.deepEqual(ok(extractApi(two)), { first: 'A' });
  const seeded =
    '<h1>A</h1><div cms-template><script type="application/json" data-rules-name="api" data-rules-version="1">{"x": "h1"}</script></div>';
  fails(extractApi(seeded), 400, 'no-rules-tag');
  const found = findRulesTag(doc);
  assert.ok(found.ok && found.text.startsWith('{title:'));
});

test('tag errors: no tag, unknown or missing version, bad JSON, bad selector (400, the error says which)', () => {
  const tag = (attrs: string, body: string) => `<h1>A</h1><script type="application/json" ${attrs}>${body}</script>`;
  const none = extractApi(
    '<h1>A</h1><script type="application/json" data-rules-name="other" data-rules-version="1">{}</script>',
  );
  fails(none, 400, 'no-rules-tag');
  assert.ok(!none.ok && none.error === NO_API_RULES_TAG && NO_API_RULES_TAG === 'No api rules tag');
  fails(extractApi(tag('data-rules-name="api" data-rules-version="2"', '{"a": "h1"}')), 400, 'rules-version', '"2"');
  fails(extractApi(tag('data-rules-name="api"', '{"a": "h1"}')), 400, 'rules-version', 'no data-rules-version');
  fails(
    extractApi(tag('data-rules-name="api" data-rules-version="1"', '{"a": "h1"')),
    400,
    'rules-syntax',
    'Invalid rules syntax',
  );
  fails(
    extractApi(tag('data-rules-name="api" data-rules-version="1"', '{"a": "h1:bogus"}')),
    400,
    'selector',
    'Unknown pseudo-class :bogus',
  );
});

test('rule errors: bad syntax, bad selectors (with where), too deep (20 is fine, 21 is not)', () => {
  fails(extractData(doc, '{a: "h1"'), 400, 'rules-syntax');
  fails(extractData(doc, ''), 400, 'rules-syntax');
  fails(extractData(doc, '{"a": {"b": "h1[unclosed"}}'), 400, 'selector', '(at a.b)');
  fails(extractData(doc, '{"a": [".x", {"b": "p::before"}]}'), 400, 'selector', '(at a[].b)');
  fails(extractData(doc, '{"a": "li:has(:first)"}'), 400, 'selector', ':first is only supported outside');
  fails(extractData(doc, '{"a": "a,"}'), 400, 'selector');
  const nest = (n: number) => `${'{"a":'.repeat(n)}"h1"${'}'.repeat(n)}`;
  assert.ok(extractData(doc, nest(20)).ok);
  fails(extractData(doc, nest(21)), 400, 'rules-depth', 'max depth 20');
  fails(extractData(doc, `${'[".x", '.repeat(21)}"h1"${']'.repeat(21)}`), 400, 'rules-depth');
});

test('size bounds answer 413: query text, selector length, rule count, rules tag, result size', () => {
  fails(extractData(doc, `{"a": "${'b'.repeat(rulesLimits.maxQueryChars)}"}`), 413, 'too-large', 'Rules too long');
  fails(
    ok413(compileRules({ a: 'b'.repeat(rulesLimits.maxSelectorChars + 1) })),
    413,
    'too-large',
    'Selector too long',
  );
  const many = Object.fromEntries(Array.from({ length: rulesLimits.maxRuleNodes }, (_, i) => [`k${i}`, 'h1']));
  fails(ok413(compileRules(many)), 413, 'too-large', 'Too many rules');
  const bigTag = `<script type="application/json" data-rules-name="api" data-rules-version="1">{"a": "${'h1,'.repeat(rulesLimits.maxTagChars / 3)}h1"}</script>`;
  fails(extractApi(bigTag), 413, 'too-large', 'Rules tag too large');
  fails(extractData(doc, '{"a": "@outerHTML"}', { maxOutputChars: 1000 }), 413, 'too-large', 'result too large');
});

test('work bounds answer 400: steps, nesting of a selector', () => {
  fails(extractData(doc, '{"a": "*[]", "b": "*:has(*) *:has(*)[]"}', { maxSteps: 50 }), 400, 'too-expensive');
  fails(extractData(doc, `{"a": "${':not('.repeat(17)}a${')'.repeat(17)}"}`), 400, 'selector', 'nested deeper than 16');
  assert.ok(extractData(doc, `{"a": "${':not('.repeat(8)}a${')'.repeat(8)}"}`).ok);
});

test('compiled rules are cached by text and run against any document', () => {
  const a = compileRulesText('{t: title}');
  const b = compileRulesText('{t: title}');
  assert.ok(a.ok && b.ok && a.rules === b.rules);
  assert.deepEqual(ok(extract(parseDocument('<title>X</title>'), a.rules)), { t: 'X' });
  assert.deepEqual(ok(extract(doc, a.rules)), { t: 'The Page' });
});

/** compileRules answers `{ok: true, rules}` or a failure; as an Extraction-shaped value for `fails`. */
function ok413(r: ReturnType<typeof compileRules>): Extraction {
  return r.ok ? { ok: true, data: null } : r;
}
