// Targeted edits of a stored page, for agents (the MCP tool `edit_document`): exact-text replacements and
// element edits by CSS selector, applied to the page's own text by character ranges. The page is parsed
// (htmlparser2, with the source position of every node) only to find where an element starts and ends; the
// edit splices the original text there, so everything outside the edited ranges stays byte for byte (a page
// is never re-serialized: its whitespace, attribute quoting and unclosed tags are its author's). Every edit
// must match exactly once, else it is refused naming the count, and nothing is changed. Pure: no I/O.
import { parseDocument } from 'htmlparser2';
import { selectAll } from 'css-select';
import type { AnyNode, Element } from 'domhandler';
import { structuredPatch } from 'diff';
import { KilnError } from '../errors.ts';

/** Where an element edit applies: a CSS selector, or the element's `data-edit-id`. */
export type Target = { selector: string } | { editId: string };

export type HtmlEdit =
  | { op: 'replaceText'; find: string; replace: string }
  | (Target & { op: 'replace' | 'replaceInner' | 'insertBefore' | 'insertAfter' | 'append'; html: string })
  | (Target & { op: 'setAttribute'; name: string; value: string })
  | (Target & { op: 'removeAttribute'; name: string })
  | (Target & { op: 'remove' });

export interface EditResult {
  text: string;
  /** A short unified diff of the whole change (cut at `DIFF_CHARS`, saying so). */
  diff: string;
}

/** How long the diff handed back may be. */
export const DIFF_CHARS = 4_000;

/** Elements that never have content (HTML's void elements). */
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

const ATTRIBUTE_NAME = /^[^\s"'>/=\u0000-\u001f]+$/;

function matchError(what: string, count: number, index: number): KilnError {
  const hint =
    count === 0
      ? 'Read the document again and copy the text or selector exactly.'
      : 'Make it match only one: add surrounding text, or a more specific selector (an id, or data-edit-id).';
  return new KilnError(400, `Edit ${index + 1}: ${what} matches ${count} times, not once. ${hint}`, 'edit-match', {
    edit: index,
    matches: count,
  });
}

const invalid = (index: number, msg: string) =>
  new KilnError(400, `Edit ${index + 1}: ${msg}`, 'edit-invalid', { edit: index });

/** How many times `find` occurs in `text` (not overlapping), and where the first is. */
function occurrences(text: string, find: string): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + find.length)) {
    if (count === 0) first = at;
    count++;
  }
  return { count, first };
}

/** The selector a target names (`[data-edit-id="…"]` for an edit id). */
function selectorOf(t: Target): string {
  if ('selector' in t) return t.selector;
  return `[data-edit-id="${t.editId.replace(/["\\]/g, (c) => `\\${c}`).replace(/\n/g, '\\a ')}"]`;
}

/** The one element the target matches in `text`, or the refusal naming the count. */
function theElement(text: string, t: Target, index: number): Element {
  const dom = parseDocument(text, { withStartIndices: true, withEndIndices: true });
  const selector = selectorOf(t);
  let found: Element[];
  try {
    found = selectAll<AnyNode, Element>(selector, dom.children);
  } catch (err) {
    throw invalid(index, `the selector ${JSON.stringify(selector)} does not parse (${(err as Error).message}).`);
  }
  if (found.length !== 1) throw matchError(`the selector ${JSON.stringify(selector)}`, found.length, index);
  return found[0];
}

/** The index just past the `>` that ends the start tag at `start` (quotes respected). */
function startTagEnd(text: string, start: number): number {
  let quote: string | null = null;
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      // A quote opens a value only after `=` (possibly with spaces): elsewhere it is part of a name.
      if (/=\s*$/.test(text.slice(Math.max(start, i - 32), i))) quote = c;
    } else if (c === '>') return i + 1;
  }
  return text.length;
}

/** Where an element's source is: its start tag, its content and its end (`end` is exclusive). An element
 *  closed implicitly (`<li>` before the next `<li>`, `<p>` before a block) has no end tag: it ends where
 *  its last child does. */
interface Span {
  start: number;
  tagEnd: number;
  innerEnd: number;
  end: number;
}

function endOf(node: AnyNode, text: string): number {
  if (node.type !== 'tag' && node.type !== 'script' && node.type !== 'style') return node.endIndex! + 1;
  return spanOf(node as Element, text).end;
}

function spanOf(el: Element, text: string): Span {
  const start = el.startIndex!;
  const tagEnd = startTagEnd(text, start);
  const last = el.children.at(-1);
  const lastEnd = last ? endOf(last, text) : tagEnd;
  const own = text.slice(start, el.endIndex! + 1);
  const close = new RegExp(`</${el.name}\\s*>$`, 'i').exec(own);
  if (close && !VOID.has(el.name)) {
    const closeAt = start + close.index;
    if (closeAt >= lastEnd && closeAt >= tagEnd) return { start, tagEnd, innerEnd: closeAt, end: el.endIndex! + 1 };
  }
  const end = Math.max(tagEnd, lastEnd);
  return { start, tagEnd, innerEnd: end, end };
}

/** The attributes written in a start tag: each one's name and source range (with its leading spaces). */
function attributesOf(text: string, span: Span): Array<{ name: string; from: number; to: number }> {
  const out: Array<{ name: string; from: number; to: number }> = [];
  const tag = text.slice(span.start, span.tagEnd);
  const re = /(\s+)([^\s"'>/=]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?/y;
  const nameLength = /^<[^\s/>]+/.exec(tag)?.[0].length ?? 1;
  for (let at = nameLength; at < tag.length; ) {
    re.lastIndex = at;
    const m = re.exec(tag);
    if (!m) {
      at++;
      continue;
    }
    out.push({ name: m[2].toLowerCase(), from: span.start + at, to: span.start + at + m[0].length });
    at += m[0].length;
  }
  return out;
}

const escapeAttribute = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

const splice = (text: string, from: number, to: number, put: string) => text.slice(0, from) + put + text.slice(to);

function attributeEdit(text: string, el: Element, edit: HtmlEdit & { name: string }, index: number): string {
  if (!ATTRIBUTE_NAME.test(edit.name)) throw invalid(index, `${JSON.stringify(edit.name)} is not an attribute name.`);
  const span = spanOf(el, text);
  const name = edit.name.toLowerCase();
  const written = attributesOf(text, span).filter((a) => a.name === name);
  if (edit.op === 'removeAttribute') {
    // Every copy goes (a browser reads the first one only; none may be left to come back).
    for (const a of [...written].reverse()) text = splice(text, a.from, a.to, '');
    return text;
  }
  const put = ` ${edit.name}="${escapeAttribute((edit as { value: string }).value)}"`;
  if (written.length > 0) return splice(text, written[0].from, written[0].to, put);
  // Before the `>` (or the `/>` of a self-closing tag).
  const close = text[span.tagEnd - 2] === '/' ? span.tagEnd - 2 : span.tagEnd - 1;
  return splice(text, close, close, put);
}

function elementEdit(text: string, edit: Exclude<HtmlEdit, { op: 'replaceText' }>, index: number): string {
  const el = theElement(text, edit, index);
  if (edit.op === 'setAttribute' || edit.op === 'removeAttribute') return attributeEdit(text, el, edit, index);
  const span = spanOf(el, text);
  switch (edit.op) {
    case 'remove':
      return splice(text, span.start, span.end, '');
    case 'replace':
      return splice(text, span.start, span.end, edit.html);
    case 'insertBefore':
      return splice(text, span.start, span.start, edit.html);
    case 'insertAfter':
      return splice(text, span.end, span.end, edit.html);
    case 'replaceInner':
    case 'append':
      if (VOID.has(el.name) || text[span.tagEnd - 2] === '/')
        throw invalid(index, `<${el.name}> has no content to ${edit.op === 'append' ? 'append to' : 'replace'}.`);
      return edit.op === 'append'
        ? splice(text, span.innerEnd, span.innerEnd, edit.html)
        : splice(text, span.tagEnd, span.innerEnd, edit.html);
  }
}

/** Applies the edits in order, each to the text the one before left; the first that does not match exactly
 *  once refuses them all (400 `edit-match`, with `edit` and `matches`). */
export function applyEdits(text: string, edits: HtmlEdit[]): EditResult {
  let out = text;
  edits.forEach((edit, index) => {
    if (edit.op !== 'replaceText') {
      out = elementEdit(out, edit, index);
      return;
    }
    if (edit.find === '') throw invalid(index, 'the text to find is empty.');
    const { count, first } = occurrences(out, edit.find);
    if (count !== 1) throw matchError(`the text ${JSON.stringify(clip(edit.find, 80))}`, count, index);
    out = splice(out, first, first + edit.find.length, edit.replace);
  });
  return { text: out, diff: shortDiff(text, out) };
}

/** The source of every element a selector matches (read_document's `selector`), in document order. */
export function elementSources(text: string, selector: string): string[] {
  const dom = parseDocument(text, { withStartIndices: true, withEndIndices: true });
  let found: Element[];
  try {
    found = selectAll<AnyNode, Element>(selector, dom.children);
  } catch (err) {
    throw new KilnError(
      400,
      `The selector ${JSON.stringify(selector)} does not parse (${(err as Error).message}).`,
      'edit-invalid',
    );
  }
  return found.map((el) => {
    const span = spanOf(el, text);
    return text.slice(span.start, span.end);
  });
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** A unified diff of the change with 2 lines of context, cut at DIFF_CHARS. */
export function shortDiff(before: string, after: string, name = 'document'): string {
  if (before === after) return '';
  const patch = structuredPatch(name, name, before, after, '', '', { context: 2 });
  const lines: string[] = [];
  for (const h of patch.hunks) {
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) lines.push(l.length > 400 ? `${l.slice(0, 400)}… (line cut)` : l);
  }
  const all = lines.join('\n');
  return all.length > DIFF_CHARS ? `${all.slice(0, DIFF_CHARS)}\n… (diff cut at ${DIFF_CHARS} characters)` : all;
}
