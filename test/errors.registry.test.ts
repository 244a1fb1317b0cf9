// The error codes live in one registry (src/errors.ts): every code the sources answer with is
// registered (the type system checks KilnError; this test checks the status written beside each code
// and the answers built by hand), every registered code is used and listed in the README's table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ERRORS, KilnError, type ErrorCode } from '../src/errors.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const sources = readdirSync(path.join(ROOT, 'src'), { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.parentPath.includes(`${path.sep}client`))
  .map((e) => ({
    file: path.relative(ROOT, path.join(e.parentPath, e.name)),
    text: readFileSync(path.join(e.parentPath, e.name), 'utf8'),
  }))
  .filter((f) => f.file !== path.join('src', 'errors.ts'));
const codes = Object.keys(ERRORS) as ErrorCode[];
const HELPERS: Record<string, number> = { badRequest: 400, unauthorized: 401, forbidden: 403, conflict: 409 };

test('every status written beside a code is that code’s status', () => {
  const wrong: string[] = [];
  for (const { file, text } of sources) {
    // new KilnError(<status>, <message>, '<code>' …): the message may span lines and hold commas.
    for (const m of text.matchAll(
      /new KilnError\(\s*(\d{3}),(?:(?!new KilnError)[\s\S]){0,400}?,\s*'([a-z-]+)'\s*[,)]/g,
    )) {
      const spec = ERRORS[m[2] as ErrorCode] as { status: number; also?: readonly number[] } | undefined;
      if (spec && spec.status !== Number(m[1]) && !spec.also?.includes(Number(m[1])))
        wrong.push(`${file}: ${m[2]} with ${m[1]}`);
    }
    for (const m of text.matchAll(/\b(badRequest|unauthorized|forbidden|conflict)\(([^;]*?),\s*'([a-z-]+)'\s*[,)]/g)) {
      const spec = ERRORS[m[3] as ErrorCode] as { status: number; also?: readonly number[] } | undefined;
      const status = HELPERS[m[1]];
      if (spec && spec.status !== status && !spec.also?.includes(status))
        wrong.push(`${file}: ${m[3]} with ${status} (${m[1]})`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('codes in answers built by hand are registered', () => {
  const unknown: string[] = [];
  for (const { file, text } of sources) {
    for (const m of text.matchAll(/\bcode(?: =|:) '([a-z-]+)'/g))
      if (!(m[1] in ERRORS)) unknown.push(`${file}: ${m[1]}`);
  }
  assert.deepEqual(unknown, []);
});

test('every registered code is answered somewhere, with a 4xx or 5xx status', () => {
  const own = readFileSync(path.join(ROOT, 'src', 'errors.ts'), 'utf8');
  // The helpers at the end of errors.ts answer with some codes (too-large, rate-limited, not-found).
  const all = [...sources.map((f) => f.text), own.slice(own.indexOf('export type ErrorCode'))].join('\n');
  for (const code of codes) {
    assert.ok(all.includes(`'${code}'`), `${code} is registered but never used`);
    const { status } = ERRORS[code];
    assert.ok(status >= 400 && status < 600, `${code}: ${status}`);
  }
});

test('the README lists every code with its status, and no other', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Errors'));
  const rows = [...section.matchAll(/^\| `([a-z-]+)` \| (\d{3})/gm)].map((m) => [m[1], Number(m[2])] as const);
  assert.deepEqual(rows.map(([c]) => c).sort(), [...codes].sort());
  for (const [code, status] of rows) assert.equal(status, ERRORS[code as ErrorCode].status, code);
});

test('a code cannot be answered with another status', () => {
  // @ts-expect-error: the type system refuses it too
  assert.throws(() => new KilnError(400, 'x', 'conflict'), /conflict is answered with 412/);
  const status: number = 400;
  assert.throws(() => new KilnError(status as 412, 'x', 'conflict'), /conflict is answered with 412/);
  assert.doesNotThrow(() => new KilnError(413, 'x', 'quota-exceeded'));
});
