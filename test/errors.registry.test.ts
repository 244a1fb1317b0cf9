// The error codes live in one registry (src/errors.ts). This test reads the sources the way a reviewer
// would: every code a refusal is thrown or answered with (KilnError, fail, the status helpers, the
// rules engine's and the data API's failures, answers built by hand, codes compared) must be
// registered, with the status written beside it; every registered code must be used; the README's
// table lists them all with their statuses; the codes clients depend on stay as they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import path from 'node:path';
import { ERRORS, KilnError, PINNED_CODES, type ErrorCode } from '../src/errors.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
// Kiln's answers only: browser scripts (client/) and `kiln sync` (sync-cli/, a client that reads the codes of any
// host speaking the protocol and names its own events) are not sources of Kiln's codes.
const CLIENTS = [`${path.sep}client`, `${path.sep}sync-cli`];
const sources = readdirSync(path.join(ROOT, 'src'), { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.ts') && !CLIENTS.some((c) => e.parentPath.includes(c)))
  .map((e) => ({
    file: path.relative(ROOT, path.join(e.parentPath, e.name)),
    text: readFileSync(path.join(e.parentPath, e.name), 'utf8'),
  }));
const codes = Object.keys(ERRORS) as ErrorCode[];
const registered = (code: string): code is ErrorCode => Object.hasOwn(ERRORS, code);
const statusesOf = (code: ErrorCode): readonly number[] => {
  const spec: { status: number; also?: readonly number[] } = ERRORS[code];
  return [spec.status, ...(spec.also ?? [])];
};

/** The calls that refuse with a code, and the status each implies (`null`: the first argument says). */
const THROWERS: Record<string, number | null> = {
  'new KilnError': null,
  fail: null,
  badRequest: 400,
  unauthorized: 401,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  tooLarge: 413,
  tooMany: 429,
  failure: null, // the rules engine's failure(code, error) and the data API's failure(reply, status, error, code)
  failureBody: null,
};
const THROWER_CODES: Record<string, ErrorCode> = {
  notFound: 'not-found',
  tooLarge: 'too-large',
  tooMany: 'rate-limited',
};
// A code argument: a kebab-case literal (a cast after it does not hide it).
const CODE_SHAPE = /^'([a-z]+(?:-[a-z]+)*)'(?:\s+(?:as|satisfies)\s+[^,]+)?$/;

/** The top-level arguments of the call whose `(` is at `open`, as source text. Skips strings, template
 *  literals (with their `${}`), comments and nested brackets. */
function argumentsAt(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === '\\') i++;
    } else if (ch === '`') {
      i = endOfTemplate(text, i);
    } else if (ch === '/' && text[i + 1] === '/') {
      i = text.indexOf('\n', i);
    } else if (ch === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i) + 1;
    } else if (ch === '(' || ch === '[' || ch === '{') {
      depth++;
    } else if (ch === ')' || ch === ']' || ch === '}') {
      depth--;
      if (depth === 0) {
        args.push(text.slice(start, i).trim());
        return args.filter((a) => a !== '');
      }
    } else if (ch === ',' && depth === 1) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new Error(`unclosed call at ${open}`);
}

function endOfTemplate(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '`') return i;
    else if (text[i] === '$' && text[i + 1] === '{') {
      let depth = 0;
      for (i++; i < text.length; i++) {
        if (text[i] === '`') i = endOfTemplate(text, i);
        else if (text[i] === '{') depth++;
        else if (text[i] === '}' && --depth === 0) break;
      }
    }
  }
  throw new Error(`unclosed template literal at ${at}`);
}

interface Use {
  file: string;
  code: string;
  /** The status written beside the code (or implied by the helper), when there is one. */
  status?: number;
}

/** Every code the sources refuse with, answer with or compare against. */
function codesInSources(): Use[] {
  const uses: Use[] = [];
  const calls = new RegExp(`(?<![\\w.])(${Object.keys(THROWERS).join('|')})\\(`, 'g');
  for (const { file, text } of sources) {
    if (file === path.join('src', 'errors.ts')) continue; // the registry and the helpers' definitions
    for (const m of text.matchAll(calls)) {
      const name = m[1];
      const args = argumentsAt(text, m.index + m[0].length - 1);
      const fixed = THROWERS[name];
      const written = /^\d{3}$/.test(args[0] ?? '')
        ? Number(args[0])
        : /^\d{3}$/.test(args[1] ?? '')
          ? Number(args[1])
          : undefined;
      const status = fixed ?? (name === 'fail' ? undefined : written);
      if (THROWER_CODES[name]) uses.push({ file, code: THROWER_CODES[name], status: fixed ?? undefined });
      for (const arg of args) {
        const code = CODE_SHAPE.exec(arg)?.[1] ?? /\?\?\s*'([a-z]+(?:-[a-z]+)*)'$/.exec(arg)?.[1];
        if (code) uses.push({ file, code, status });
      }
    }
    // Answers built by hand ({code: '…'}, code = '…') and codes compared (err.code === '…').
    for (const m of text.matchAll(/\bcode(?::|\s*=|\s*[!=]==)\s*'([a-z]+(?:-[a-z]+)*)'/g))
      uses.push({ file, code: m[1] });
  }
  return uses;
}
const uses = codesInSources();

test('every code thrown, answered or compared in src/ is registered', () => {
  const unknown = uses.filter((u) => !registered(u.code)).map((u) => `${u.file}: ${u.code}`);
  assert.deepEqual([...new Set(unknown)], []);
});

test('every status written beside a code is a status registered for that code', () => {
  const wrong = uses
    .filter((u) => registered(u.code) && u.status !== undefined && !statusesOf(u.code as ErrorCode).includes(u.status))
    .map((u) => `${u.file}: ${u.code} with ${u.status}`);
  assert.deepEqual(wrong, []);
  // The scan sees statuses: most uses carry one.
  assert.ok(uses.filter((u) => u.status !== undefined).length > 100, 'the scan found the statuses');
});

test('every registered code is used in src/', () => {
  const used = new Set(uses.map((u) => u.code));
  assert.deepEqual(
    codes.filter((c) => !used.has(c)),
    [],
  );
});

test('every registered status is a 4xx or 5xx HTTP status', () => {
  for (const code of codes) {
    for (const status of statusesOf(code)) {
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
      assert.ok(STATUS_CODES[status], `${code}: ${status} is not an HTTP status`);
    }
  }
});

test('the README’s Errors table lists every code with its status, and no other', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Errors\n');
  assert.ok(start >= 0, 'README has an "## Errors" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const rows = [...section.matchAll(/^\| `([a-z-]+)` \| (\d{3})(?: \((\d{3}(?:, \d{3})*)\))? \| (.+) \|$/gm)];
  assert.deepEqual(rows.map((r) => r[1]).sort(), [...codes].sort());
  for (const [, code, status, also, when] of rows) {
    const listed = [Number(status), ...(also ? also.split(', ').map(Number) : [])];
    assert.deepEqual(listed, statusesOf(code as ErrorCode), code);
    assert.ok(when.trim().length > 0, `${code}: says when`);
  }
  for (const code of Object.keys(PINNED_CODES)) assert.ok(section.includes(`\`${code}\``), code);
});

test('the codes clients and the spec depend on keep their names and statuses', () => {
  for (const [code, status] of Object.entries(PINNED_CODES)) {
    assert.ok(registered(code), `${code} is registered`);
    assert.ok(statusesOf(code).includes(status), `${code} is answered with ${status}`);
  }
});

test('a code cannot be thrown with another status', () => {
  // @ts-expect-error: the type system refuses it too
  assert.throws(() => new KilnError(400, 'x', 'conflict'), /conflict is answered with 412/);
  const status: number = 400;
  assert.throws(() => new KilnError(status as 412, 'x', 'conflict'), /conflict is answered with 412/);
  assert.doesNotThrow(() => new KilnError(413, 'x', 'quota-exceeded'));
});
