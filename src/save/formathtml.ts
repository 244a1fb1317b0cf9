/**
 * formathtml: the opt-in re-indenting of a saved document.
 *
 * It applies only when the document's first start tag is `<html>` and that tag's `formathtml`
 * attribute is exactly `true` (value compared after entity decoding, case-sensitive; the attribute
 * name is case-insensitive, as in HTML). Otherwise `formatHtml` returns its input unchanged (the
 * same string), and the save stores the bytes exactly as sent.
 *
 * What formatting does (and nothing else):
 * - **Re-indents.** Whitespace-only text between two tags (or comments, doctype) that contains a
 *   line break becomes one line break (two when it held a blank line, never more) followed by
 *   2 spaces per nesting level of the next tag. Whitespace at the very start of the document is
 *   dropped; whitespace at the very end becomes one line break.
 * - **Breaks lines between block tags.** Where two tags touch (or are separated only by spaces,
 *   no line break) and whitespace there cannot change the rendering in normal CSS flow (one side
 *   is a block-level element such as `div`, `p`, `li`, `tr`, `meta`, `br`, or the spot is inside
 *   `html`, `head`, a table structure or a `select`), a line break plus indentation is inserted.
 *   Inline neighbours (`<b>a</b><i>b</i>`, `<img><img>`) are never separated.
 * - **Expands multiline attributes.** A start tag whose attribute list already spans several lines
 *   (a line break between the tag name and an attribute, between two attributes, or before the
 *   closing `>`; line breaks inside an attribute value do not count) is written with one attribute
 *   per line, indented one level deeper than the tag, `>` right after the last attribute (` />`
 *   when the tag was self-closing). Single-line tags are never touched, however long.
 * - **Keeps everything else byte-exact:** text that contains anything besides whitespace (including
 *   its leading and trailing whitespace), comments, the doctype, attribute slices (name, `=`,
 *   quotes, value, entities as written), void elements as written, and the whole of every
 *   `svg`, `math`, `script`, `style`, `pre`, `textarea`, `title`, `noscript`, `iframe`, `xmp`,
 *   `listing`, `plaintext`, `noembed` and `noframes` element (start tag, content, end tag).
 *   Output is built from slices of the input, never by re-serializing a tree.
 * - Line breaks it writes follow the document: `\r\n` if the first line break of the input is
 *   `\r\n`, else `\n`.
 *
 * Guarantees (tested): idempotent (`formatHtml(formatHtml(x)) === formatHtml(x)`), and the
 * document tree is unchanged except for whitespace-only text nodes (see `sameTree`). Pathological
 * input — nesting deeper than 256 elements, or output longer than 3× the input — is returned
 * unchanged. It never throws: any internal failure returns the input.
 *
 * Known limit: whitespace is treated as insignificant outside the preserved elements, as the
 * default CSS of those elements says; an author who styles a `div` with `white-space: pre` or
 * `display: inline-block` should not opt in to formathtml.
 */
import { Parser, parseDocument } from 'htmlparser2';
import type { Handler, QuoteType } from 'htmlparser2';
import type { ChildNode } from 'domhandler';

/** Nesting deeper than this returns the input unchanged. */
const FORMAT_MAX_DEPTH = 256;
/** Output longer than this many times the input returns the input unchanged. */
const FORMAT_MAX_GROWTH = 3;
const INDENT = '  ';

/** Elements copied byte-exact, start tag to end tag, content included. */
const PRESERVED_ELEMENTS: ReadonlySet<string> = new Set([
  'svg',
  'math',
  'script',
  'style',
  'pre',
  'textarea',
  'title',
  'noscript',
  'iframe',
  'xmp',
  'listing',
  'plaintext',
  'noembed',
  'noframes',
]);

/** Elements whose start or end tag may get a line break next to it (block-level or not rendered). */
const BLOCK = new Set([
  'html',
  'head',
  'body',
  'base',
  'link',
  'meta',
  'title',
  'br',
  'hr',
  'address',
  'article',
  'aside',
  'blockquote',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'dd',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'legend',
  'li',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'ul',
  'table',
  'caption',
  'colgroup',
  'col',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'td',
  'th',
]);

/** Parents inside which whitespace-only text is never rendered. '' is the document itself. */
const WS_INSENSITIVE_PARENT = new Set([
  '',
  'html',
  'head',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'colgroup',
  'select',
  'optgroup',
  'datalist',
]);

type TokenKind = 'start' | 'end' | 'comment' | 'doctype' | 'region';

interface Token {
  kind: TokenKind;
  /** Source range [start, end). */
  start: number;
  end: number;
  /** Element name ('' for comment/doctype). */
  name: string;
  /** Nesting level used for the indentation in front of the token. */
  depth: number;
  /** Name of the innermost open element right after this token ('' = document). */
  contextAfter: string;
  /** Start tags: end of the tag name, and the [start, end) of each attribute. */
  nameEnd: number;
  attrs: { start: number; end: number }[];
  /** Regions only: the preserved element was closed implicitly (by the next token or the end). */
  openEnded: boolean;
}

interface OpenElement {
  name: string;
  /** The region token when this element is a preserved element that started a region. */
  region: Token | null;
}

class Abort extends Error {}

function isAsciiWhitespace(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 9 && c !== 12 && c !== 13) return false;
  }
  return true;
}

/**
 * A Parser that records the source range of every token it sees. It relies on htmlparser2's
 * tokenizer callbacks (the `(start, endIndex)` pairs) rather than `startIndex`/`endIndex`, which
 * are imprecise for end tags such as `</div >`.
 */
class Scanner extends Parser {
  readonly src: string;
  readonly tokens: Token[] = [];
  /** Mirror of the parser's element stack, maintained through the handler callbacks. */
  readonly openEls: OpenElement[] = [];
  /** End of the last thing the tokenizer reported. */
  boundary = 0;
  /** The token being processed (null at the end of the document). */
  cur: Token | null = null;
  /** Handler events seen while processing `cur` (to detect tokens that make no node). */
  events = 0;
  /** The preserved element whose region we are in, if any. */
  region: Token | null = null;
  firstTagSeen = false;
  applies = false;

  constructor(src: string) {
    const handler: Partial<Handler> = {
      onopentagname: (name) => this.push(name),
      onopentag: (name, attribs) => this.checkRoot(name, attribs),
      onclosetag: () => this.pop(),
    };
    super(handler);
    this.src = src;
  }

  private checkRoot(name: string, attribs: Record<string, string>): void {
    if (this.firstTagSeen) return;
    this.firstTagSeen = true;
    if (name !== 'html' || attribs.formathtml !== 'true') throw new Abort('not opted in');
    this.applies = true;
  }

  private push(name: string): void {
    this.events++;
    const tok = this.cur;
    let region: Token | null = null;
    if (!this.region && tok && tok.kind === 'start' && PRESERVED_ELEMENTS.has(name)) {
      region = { ...tok, kind: 'region', name, openEnded: false };
      this.region = region;
    }
    this.openEls.push({ name, region });
    if (this.openEls.length > FORMAT_MAX_DEPTH) throw new Abort('too deep');
  }

  private pop(): void {
    this.events++;
    const el = this.openEls.pop();
    if (!el?.region) return;
    const region = el.region;
    const tok = this.cur;
    if (tok && tok.start === region.start) {
      region.end = tok.end; // self-closing `<svg/>`: popped while reading its own start tag
    } else if (tok && tok.kind === 'end' && tok.name === el.name) {
      region.end = tok.end; // its explicit end tag
    } else {
      region.end = tok ? tok.start : this.src.length; // closed implicitly by `tok`, or by the end
      region.openEnded = true;
    }
    region.contextAfter = this.top();
    this.region = null;
    this.tokens.push(region);
  }

  private top(): string {
    return this.openEls.length ? this.openEls[this.openEls.length - 1]!.name : '';
  }

  private begin(kind: TokenKind, start: number, end: number, name: string): Token {
    const tok: Token = {
      kind,
      start,
      end,
      name,
      depth: this.openEls.length,
      contextAfter: '',
      nameEnd: end,
      attrs: [],
      openEnded: false,
    };
    this.cur = tok;
    this.events = 0;
    return tok;
  }

  /** After the parser handled `tok`: keep it unless it is inside a region, or made no node. */
  private finish(tok: Token, makesNode: boolean): void {
    this.boundary = Math.max(this.boundary, tok.end);
    if (this.region || !makesNode) return;
    // A region that ended while reading this token already took this token's place (or precedes it).
    const last = this.tokens[this.tokens.length - 1];
    if (last && last.kind === 'region' && last.end === tok.end) return;
    tok.contextAfter = this.top();
    this.tokens.push(tok);
  }

  // --- tokenizer callbacks -------------------------------------------------

  override ontext(start: number, endIndex: number): void {
    this.boundary = Math.max(this.boundary, endIndex);
    super.ontext(start, endIndex);
  }

  override ontextentity(cp: number, endIndex: number): void {
    this.boundary = Math.max(this.boundary, endIndex);
    super.ontextentity(cp, endIndex);
  }

  override onopentagname(start: number, endIndex: number): void {
    const tok = this.begin('start', start - 1, this.src.length, '');
    tok.nameEnd = endIndex;
    const depthBefore = this.openEls.length;
    super.onopentagname(start, endIndex);
    // The parser pushed the element (after any implied closes), or ignored the tag (nested <form>).
    if (this.events > 0 && this.openEls.length > 0) {
      const el = this.openEls[this.openEls.length - 1]!;
      tok.name = el.name;
      tok.depth = this.openEls.length - 1;
      if (el.region) el.region.depth = tok.depth;
    } else {
      tok.depth = depthBefore;
      tok.name = '';
    }
  }

  override onattribname(start: number, endIndex: number): void {
    this.cur?.attrs.push({ start, end: endIndex });
    super.onattribname(start, endIndex);
  }

  override onattribend(quote: QuoteType, endIndex: number): void {
    const attrs = this.cur?.attrs;
    if (attrs?.length) attrs[attrs.length - 1]!.end = endIndex;
    super.onattribend(quote, endIndex);
  }

  private endStartTag(endIndex: number): Token | null {
    const tok = this.cur;
    if (tok?.kind !== 'start') return null;
    tok.end = endIndex + 1;
    return tok;
  }

  override onopentagend(endIndex: number): void {
    const tok = this.endStartTag(endIndex);
    const named = tok !== null && tok.name !== '';
    super.onopentagend(endIndex);
    if (tok) this.finish(tok, named);
    this.cur = null;
  }

  override onselfclosingtag(endIndex: number): void {
    const tok = this.endStartTag(endIndex);
    const named = tok !== null && tok.name !== '';
    super.onselfclosingtag(endIndex); // outside foreign content this calls our onopentagend
    if (tok && this.cur === tok) this.finish(tok, named);
    this.cur = null;
  }

  override onclosetag(start: number, endIndex: number): void {
    const gt = this.src.indexOf('>', endIndex);
    const tok = this.begin('end', start - 2, gt === -1 ? this.src.length : gt + 1, '');
    tok.name = this.src.slice(start, endIndex).toLowerCase();
    super.onclosetag(start, endIndex);
    tok.depth = this.openEls.length;
    this.finish(tok, this.events > 0);
    this.cur = null;
  }

  override ondeclaration(start: number, endIndex: number): void {
    const tok = this.begin('doctype', this.boundary, Math.min(endIndex + 1, this.src.length), '');
    super.ondeclaration(start, endIndex);
    this.finish(tok, true);
    this.cur = null;
  }

  override onprocessinginstruction(start: number, endIndex: number): void {
    const tok = this.begin('comment', this.boundary, Math.min(endIndex + 2, this.src.length), '');
    super.onprocessinginstruction(start, endIndex);
    this.finish(tok, true);
    this.cur = null;
  }

  override oncomment(start: number, endIndex: number, offset: number): void {
    const tok = this.begin('comment', this.boundary, Math.min(endIndex + 1, this.src.length), '');
    super.oncomment(start, endIndex, offset);
    this.finish(tok, true);
    this.cur = null;
  }

  override oncdata(start: number, endIndex: number, offset: number): void {
    const tok = this.begin('comment', this.boundary, Math.min(endIndex + 1, this.src.length), '');
    super.oncdata(start, endIndex, offset);
    this.finish(tok, true);
    this.cur = null;
  }

  override onend(): void {
    // A start tag cut off by the end of the input makes no node: leave it to the verbatim tail.
    this.cur = null;
    super.onend();
  }
}

function isBlockSide(tok: Token): boolean {
  return tok.kind === 'doctype' || (tok.kind !== 'comment' && BLOCK.has(tok.name));
}

/** May whitespace be inserted between `left` and `right` (adjacent tokens) without a visible change? */
function breakable(left: Token, right: Token): boolean {
  if (left.kind === 'region' && left.openEnded) return false; // it would land inside the region
  if (WS_INSENSITIVE_PARENT.has(left.contextAfter)) return true;
  return isBlockSide(left) || isBlockSide(right);
}

/**
 * Format `input` if its root `<html>` tag has `formathtml="true"`; otherwise return `input` itself.
 * Never throws. See the module comment for the exact rules.
 */
export function formatHtml(input: string): string {
  if (typeof input !== 'string' || !/formathtml/i.test(input)) return input;
  try {
    const out = format(input);
    if (out === null || out.length > FORMAT_MAX_GROWTH * input.length) return input;
    return out === input ? input : out;
  } catch {
    return input;
  }
}

function format(src: string): string | null {
  const scanner = new Scanner(src);
  try {
    scanner.end(src);
  } catch (err) {
    if (err instanceof Abort) return null;
    throw err;
  }
  if (!scanner.applies) return null;

  const firstNl = src.indexOf('\n');
  const eol = firstNl > 0 && src.charCodeAt(firstNl - 1) === 13 ? '\r\n' : '\n';
  const pads: string[] = [];
  const indent = (depth: number): string => (pads[depth] ??= INDENT.repeat(depth));
  const tokens = scanner.tokens;
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i]!.start < tokens[i - 1]!.start) {
      tokens.sort((a, b) => a.start - b.start);
      break;
    }
  }

  const out: string[] = [];
  let cursor = 0;
  let prev: Token | null = null;
  for (const tok of tokens) {
    if (tok.start < cursor) return null; // overlapping ranges: something we do not understand
    const blank = isBlank(src, cursor, tok.start);
    if (blank < 0) {
      out.push(src.slice(cursor, tok.start)); // text with content (or markup that makes no node)
    } else if (prev !== null) {
      if (blank > 0) out.push((blank > 1 ? eol + eol : eol) + indent(tok.depth));
      else if (breakable(prev, tok)) out.push(eol + indent(tok.depth));
      else if (tok.start > cursor) out.push(src.slice(cursor, tok.start));
    } // whitespace before the first token is dropped
    out.push(renderToken(src, tok, eol, indent));
    cursor = tok.end;
    prev = tok;
  }
  const tailBlank = isBlank(src, cursor, src.length);
  out.push(prev !== null && tailBlank > 0 ? eol : src.slice(cursor));
  return out.join('');
}

/** -1 if src[from, to) has a character other than ASCII whitespace, else its number of '\n'. */
function isBlank(src: string, from: number, to: number): number {
  let newlines = 0;
  for (let i = from; i < to; i++) {
    const c = src.charCodeAt(i);
    if (c === 10) newlines++;
    else if (c !== 32 && c !== 9 && c !== 12 && c !== 13) return -1;
  }
  return newlines;
}

function renderToken(src: string, tok: Token, eol: string, indent: (d: number) => string): string {
  const verbatim = src.slice(tok.start, tok.end);
  if (tok.kind !== 'start' || tok.attrs.length === 0 || src.charCodeAt(tok.end - 1) !== 62 /* > */) {
    return verbatim;
  }
  const attrs = tok.attrs;
  const last = attrs[attrs.length - 1]!;
  let multiline = src.slice(tok.nameEnd, attrs[0]!.start).includes('\n');
  for (let i = 1; i < attrs.length && !multiline; i++) {
    multiline = src.slice(attrs[i - 1]!.end, attrs[i]!.start).includes('\n');
  }
  const tail = src.slice(last.end, tok.end - 1);
  multiline ||= tail.includes('\n');
  if (!multiline) return verbatim;
  const pad = eol + indent(tok.depth + 1);
  let s = src.slice(tok.start, tok.nameEnd);
  for (const a of attrs) s += pad + src.slice(a.start, a.end);
  return s + (tail.trimEnd().endsWith('/') ? ' />' : '>');
}

// --- tree equivalence ------------------------------------------------------

/**
 * Are `a` and `b` the same document tree, ignoring whitespace-only text nodes outside the
 * preserved elements? Both are parsed with htmlparser2 (the parser formatting relies on); element
 * names, attributes (names, values and order), text, comments and directives must match exactly.
 * Used by the tests; cheap enough (a few ms per 100 KB) for a caller that wants a runtime check.
 */
export function sameTree(a: string, b: string): boolean {
  return sameNodes(parseDocument(a).children, parseDocument(b).children, false);
}

function significant(nodes: ChildNode[], preserved: boolean): ChildNode[] {
  if (preserved) return nodes;
  return nodes.filter((n) => !(n.type === 'text' && isAsciiWhitespace(n.data)));
}

function sameNodes(xs: ChildNode[], ys: ChildNode[], preserved: boolean): boolean {
  const a = significant(xs, preserved);
  const b = significant(ys, preserved);
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.type !== y.type) return false;
    if ('data' in x && 'data' in y) {
      if (x.data !== y.data) return false;
    } else if ('attribs' in x && 'attribs' in y) {
      if (x.name !== y.name) return false;
      const ax = Object.entries(x.attribs);
      const ay = Object.entries(y.attribs);
      if (ax.length !== ay.length) return false;
      for (let j = 0; j < ax.length; j++) {
        if (ax[j]![0] !== ay[j]![0] || ax[j]![1] !== ay[j]![1]) return false;
      }
      if (!sameNodes(x.children, y.children, preserved || PRESERVED_ELEMENTS.has(x.name))) return false;
    } else if ('children' in x && 'children' in y) {
      if (!sameNodes(x.children, y.children, preserved)) return false;
    } else {
      return false;
    }
  }
  return true;
}
