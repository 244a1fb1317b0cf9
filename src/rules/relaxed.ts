// Lenient rules text, as the `?data=` parameter and rules tag bodies are written: strict JSON when it is JSON,
// otherwise unquoted keys and selectors, single quotes and trailing commas are accepted. The text is rewritten
// into JSON and handed to JSON.parse, so what is accepted (and every quirk of what is not) is exactly what the
// reference engine (hyper-html-api's relaxed parser) accepts; the conformance and differential tests pin that.
//
// How a bare word is read: it runs to the next `{`, `}` or `,`. A `:` ends it (it is the key/value colon) unless
// a known pseudo-class name follows, so `li:first-child` and `p:nth-of-type(2)` stay one word. A `[` inside a
// word starts an attribute selector that runs to its `]`, across commas, braces and quoted values. A `[` at the
// start of a token is a list bracket unless a letter or `_` follows it (then it is an attribute selector word).
// Words are not trimmed at the end, so `{ y : .i }` reads key "y " and value ".i ". A word that is a number,
// `true`, `false` or `null` stays that literal; every other word becomes a string, written without escaping.

type Token =
  | { kind: 'punct'; text: '{' | '}' | '[' | ']' | ':' | ',' }
  | { kind: 'string'; raw: string; quote: '"' | "'" }
  | { kind: 'word'; text: string };

/** Names a `:` may introduce inside a bare word (matched as a prefix of what follows the colon). */
const PSEUDO_NAMES = [
  'first',
  'last',
  'nth-child',
  'nth-of-type',
  'first-child',
  'last-child',
  'first-of-type',
  'last-of-type',
  'only-child',
  'only-of-type',
  'hover',
  'focus',
  'active',
  'visited',
  'disabled',
  'enabled',
  'checked',
  'empty',
  'root',
  'target',
  'not',
  'before',
  'after',
  'nth-last-child',
  'nth-last-of-type',
];

const WHITESPACE = /\s/;
const ATTR_START = /[a-zA-Z_]/;
const LITERAL = /^(?:-?\d+(?:\.\d+)?|true|false|null)$/;

/** Index just past a quoted run that opens at `start` (the quote itself); a backslash skips the next character. */
function skipQuoted(input: string, start: number): number {
  const quote = input[start];
  let j = start + 1;
  while (j < input.length && input[j] !== quote) j += input[j] === '\\' ? 2 : 1;
  return j; // at the closing quote, or at/after the end when unterminated
}

function pseudoFollows(input: string, colon: number): boolean {
  for (const name of PSEUDO_NAMES) if (input.startsWith(name, colon + 1)) return true;
  return false;
}

/** End (exclusive) of a bare word starting at `start`. */
function wordEnd(input: string, start: number): number {
  let j = start;
  while (j < input.length) {
    const c = input[j];
    if (c === '{' || c === '}' || c === ',') break;
    if (c === ':') {
      if (!pseudoFollows(input, j)) break;
      j++;
    } else if (c === '[') {
      j++;
      while (j < input.length && input[j] !== ']') {
        if (input[j] === '"' || input[j] === "'") j = skipQuoted(input, j);
        j++;
      }
      if (j < input.length) j++; // the closing ]
    } else {
      j++;
    }
  }
  return j;
}

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (WHITESPACE.test(c)) {
      i++;
    } else if (c === '{' || c === '}' || c === ']' || c === ':' || c === ',') {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else if (c === '[' && !attributeSelectorFollows(input, i)) {
      tokens.push({ kind: 'punct', text: '[' });
      i++;
    } else if (c === '"' || c === "'") {
      const end = skipQuoted(input, i);
      tokens.push({ kind: 'string', raw: input.slice(i + 1, end), quote: c });
      i = end + 1;
    } else {
      const end = wordEnd(input, i);
      tokens.push({ kind: 'word', text: input.slice(i, end) });
      i = end;
    }
  }
  return tokens;
}

function attributeSelectorFollows(input: string, bracket: number): boolean {
  let j = bracket + 1;
  while (j < input.length && WHITESPACE.test(input[j])) j++;
  return j < input.length && ATTR_START.test(input[j]);
}

/** A single-quoted body as a double-quoted JSON string body: `\'` loses its backslash, a bare `"` gains one. */
function requoteSingle(raw: string): string {
  return raw
    .replace(/\\'/g, "'")
    .replace(/(\\*)"/g, (m, slashes: string) => (slashes.length % 2 === 0 ? `${slashes}\\"` : m));
}

/** The JSON text the relaxed input stands for (it may still be invalid JSON). */
function relaxedToJson(input: string): string {
  const tokens = tokenize(input);
  let out = '';
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind === 'punct') {
      if (t.text === ',') {
        const next = tokens[k + 1];
        if (next && next.kind === 'punct' && (next.text === '}' || next.text === ']')) continue; // trailing comma
      }
      out += t.text;
    } else if (t.kind === 'string') {
      out += `"${t.quote === "'" ? requoteSingle(t.raw) : t.raw}"`;
    } else {
      out += LITERAL.test(t.text) ? t.text : `"${t.text}"`;
    }
  }
  return out;
}

export type RelaxedResult = { ok: true; value: unknown } | { ok: false; message: string };

/** Strict JSON first; otherwise the relaxed rewrite. Never throws. */
export function parseRelaxed(input: string): RelaxedResult {
  try {
    return { ok: true, value: JSON.parse(input) };
  } catch {
    /* not strict JSON: read it leniently */
  }
  try {
    return { ok: true, value: JSON.parse(relaxedToJson(input)) };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}
