// The conformance cases shipped in the hyper-html-api dev-dependency (conformance/MANIFEST.json + cases/),
// run against Kiln's rules engine. Each case is HTML, rules (a `.rules` file for the `?data=` face, the
// document's `api` tag for the tag face) and either expected JSON or an expected error with its HTTP status.
// Where Kiln deliberately differs, DIFFERENCES names the case, the reason, and what Kiln answers instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { extractApi, extractData, parseRelaxed } from '../src/rules/index.ts';

/** The installed package's folder: up from its entry point to its package.json (the package exports no ./package.json). */
function packageRoot(name: string): string {
  let d = dirname(createRequire(import.meta.url).resolve(name));
  while (!existsSync(join(d, 'package.json'))) d = dirname(d);
  return d;
}
const root = packageRoot('hyper-html-api');
const dir = join(root, 'conformance', 'cases');
const manifest = JSON.parse(readFileSync(join(root, 'conformance', 'MANIFEST.json'), 'utf8')) as { cases: number };

type Expectation = { ok: true; data: unknown } | { ok: false; status: number; message?: string };

/** Cases where Kiln answers differently on purpose; every other case must match the reference exactly. */
const DIFFERENCES: Record<string, { reason: string; kiln: Expectation }> = {
  'depth-exceeded': {
    reason:
      'The reference host answers 500 because the message lacks "JSON"/"selector"; the spec says bad rules never answer 500, so too-deep rules are a 400 (as in depth-exceeded-path-contains-selector).',
    kiln: { ok: false, status: 400, message: 'max depth 20' },
  },
  'selector-unknown-pseudo-is-500': {
    reason:
      'An unknown pseudo-class is a bad selector: the spec says an invalid selector answers 400 and bad rules never 500.',
    kiln: { ok: false, status: 400, message: 'Unknown pseudo-class :nth-childx' },
  },
  'props-readonly-always-false': {
    reason:
      'The spec says @ reads DOM properties; the DOM readOnly of <input readonly> is true. The reference can never see the lowercased attribute (a cheerio wart its own notes flag; htmlclay fixes it the same way).',
    kiln: { ok: true, data: { set: 'true', unset: 'false' } },
  },
  'props-type-is-node-type': {
    reason:
      'The spec says @ reads DOM properties; the reference returns the parser\'s node kind ("tag", "script", "style"), which no DOM has. Kiln returns the type attribute (null when absent), as htmlclay does.',
    kiln: { ok: true, data: { input: 'text', script: null, style: null } },
  },
  'template-simple-vs-combinator': {
    reason:
      'Template content is inert in a browser and never matched by selectors; cheerio matches it only through simple selectors (it disagrees with itself). Kiln matches the browser, as htmlclay does: the row inside the template matches neither rule.',
    kiln: { ok: true, data: { simple: ['one'], viaCombinator: [] } },
  },
};

function read(name: string, ext: string): string | null {
  try {
    return readFileSync(join(dir, `${name}.${ext}`), 'utf8');
  } catch {
    return null;
  }
}

/** The reference's error, with the part of its message Kiln's error must carry too. */
function referenceError(e: { type: string; message: string; status: number }): Expectation {
  const message =
    e.type === 'NoRulesTag'
      ? 'No api rules tag' // the spec's fixed text
      : e.type === 'RulesParseError' // JSON.parse's words (newer V8 versions add the line and column)
        ? e.message.replace(/^Invalid extraction rules syntax: /, '').replace(/ \(line \d+ column \d+\)$/, '')
        : e.type === 'UnknownRulesVersion'
          ? 'Unknown rules version: "2"'
          : e.type === 'MaxRuleDepthExceeded'
            ? 'max depth 20'
            : e.message; // selector errors: css-what's words
  return { ok: false, status: e.status, message };
}

const names = [...new Set(readdirSync(dir).map((f) => f.replace(/\..*$/, '')))].sort();

test('the manifest and the shipped cases agree', () => {
  assert.equal(names.length, manifest.cases);
});

for (const name of names) {
  const html = read(name, 'html')!;
  const meta = read(name, 'meta')!;
  const face = /^face: (\w+)/m.exec(meta)?.[1];
  const rulesText = read(name, 'rules');
  const expectedJson = read(name, 'expected.json');
  const errorJson = read(name, 'error.json');
  const parsedJson = read(name, 'parsed.json');
  const reference: Expectation = expectedJson
    ? { ok: true, data: JSON.parse(expectedJson) }
    : referenceError(JSON.parse(errorJson!));
  const difference = DIFFERENCES[name];

  test(`${name} (${face} face)${difference ? ` — Kiln differs: ${difference.reason}` : ''}`, () => {
    assert.ok(face === 'query' || face === 'tag', `unknown face in ${name}.meta`);
    const got = face === 'tag' ? extractApi(html) : extractData(html, rulesText!);
    const want = difference ? difference.kiln : reference;
    if (want.ok) {
      assert.ok(got.ok, `expected data, got ${JSON.stringify(got)}`);
      assert.deepEqual(got.data, want.data);
    } else {
      assert.ok(!got.ok, `expected an error, got ${JSON.stringify(got)}`);
      assert.equal(got.status, want.status);
      if (want.message) assert.ok(got.error.includes(want.message), got.error);
    }
    if (difference) assert.notDeepEqual(want, reference, 'a listed difference that no longer differs');
  });

  if (parsedJson && rulesText !== null) {
    test(`${name}: the rules text parses to the same tree`, () => {
      const parsed = parseRelaxed(rulesText);
      assert.ok(parsed.ok);
      assert.equal(JSON.stringify(parsed.value), JSON.stringify(JSON.parse(parsedJson)));
    });
  }
}

test('every listed difference is a shipped case', () => {
  for (const name of Object.keys(DIFFERENCES)) assert.ok(names.includes(name), name);
});
