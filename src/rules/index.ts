// The rules engine: documents read as JSON through rules (the `api` rules tag and `?data=`). Pure: no I/O.
//
// Every function answers `{ok: true, ...}` or a RulesFailure `{ok: false, status: 400 | 413, code, error}`;
// none throws. Typical use:
//   const doc = parseDocument(html)            // cache per document checksum
//   extractApi(doc)                            // GET /_/api/<path>
//   extractData(doc, rulesText)                // GET /<path>?data=<rulesText>
import { Parser } from 'htmlparser2';
import { DomHandler, type Document, type Element } from 'domhandler';
import { compileRulesText, type CompiledRules } from './compile.ts';
import { text } from './dom.ts';
import { failure, type RulesFailure } from './errors.ts';
import { runRules, type Json } from './extract.ts';
import { wallDeadline, type Deadline } from './budget.ts';
import { rulesLimits, type ExtractLimits } from './limits.ts';
import { findRulesTags } from './selectors.ts';
import { normalizeTree } from './tree.ts';
import { indexOf, type DocIndex } from './doc-index.ts';

export { compileRules, compileRulesText, clearRulesCaches, type CompiledRules } from './compile.ts';
export { parseRelaxed } from './relaxed.ts';
export { attrSplitIndex } from './syntax.ts';
export { rulesLimits, type ExtractLimits } from './limits.ts';
export { wallDeadline, type Deadline } from './budget.ts';
export type { RulesFailure, RulesErrorCode } from './errors.ts';
export type { Json } from './extract.ts';

const SUPPORTED_RULES_VERSION = '1';
export const NO_API_RULES_TAG = 'No api rules tag';

export type ParsedDocument = { readonly root: Document; readonly chars: number; readonly index: DocIndex };
export type Extraction = { ok: true; data: Json } | RulesFailure;

/** Parses HTML (never fails; htmlparser2 recovers from anything), with the implied html/head/body and tbody
 *  elements a browser would add. Cache the result per document checksum; it is never modified afterwards. */
export function parseDocument(html: string): ParsedDocument {
  return parseChunked(html, null)!;
}

/** Characters fed to the parser between two looks at the clock. htmlparser2 costs O(depth) per tag (its open-
 *  element stack is shifted at the front), so a deeply nested document is slow per character: at 100,000 open
 *  <div>s a chunk this size takes about 20 ms on the 2-core test machine. A caller that needs a hard bound runs
 *  the parse where it can be stopped (src/data/pool.ts). */
const PARSE_CHUNK_CHARS = 1024;

/** Parses like `parseDocument`, but gives up with `too-expensive` once `deadline` (a budget of `maxMs`) has
 *  passed, or `too-large` past `rulesLimits.maxDocumentChars`. An extraction that follows may share the deadline. */
export function parseDocumentWithin(
  html: string,
  maxMs: number,
  deadline: Deadline = wallDeadline(maxMs),
): ParsedDocument | RulesFailure {
  if (html.length > rulesLimits.maxDocumentChars) {
    return failure('too-large', `Document too large to extract from (max ${rulesLimits.maxDocumentChars} characters)`);
  }
  return parseChunked(html, deadline) ?? failure('too-expensive', `Extraction too expensive: over ${maxMs} ms`);
}

/** Null when the deadline passed (no deadline: one write). Feeding the parser in chunks builds the same tree as
 *  one write (the tokenizer and DomHandler are streaming: text split across chunks is joined into one node). */
function parseChunked(html: string, deadline: Deadline | null): ParsedDocument | null {
  const handler = new DomHandler();
  const parser = new Parser(handler);
  if (!deadline) parser.write(html);
  else {
    for (let i = 0; i < html.length; i += PARSE_CHUNK_CHARS) {
      parser.write(html.slice(i, i + PARSE_CHUNK_CHARS));
      if (deadline.passed()) return null;
    }
  }
  parser.end();
  const root = normalizeTree(handler.root);
  const index = indexOf(root);
  if (deadline?.passed()) return null;
  return { root, chars: html.length, index };
}

function documentOf(doc: ParsedDocument | string): ParsedDocument | RulesFailure {
  if (typeof doc !== 'string') return doc;
  if (doc.length > rulesLimits.maxDocumentChars) {
    return failure('too-large', `Document too large to extract from (max ${rulesLimits.maxDocumentChars} characters)`);
  }
  return parseDocument(doc);
}

type TagLookup = { ok: true; text: string; tag: Element } | RulesFailure;
const tagLookups = new WeakMap<Document, Map<string, TagLookup>>();

/** The body of the first rules tag named `token` (a `<script data-rules-name="...">` whose space-separated names
 *  include it), checked for `data-rules-version="1"` and size. Memoized per parsed document. */
export function findRulesTag(doc: ParsedDocument, token = 'api'): TagLookup {
  let byToken = tagLookups.get(doc.root);
  if (!byToken) tagLookups.set(doc.root, (byToken = new Map()));
  let found = byToken.get(token);
  if (!found) {
    found = lookUpTag(doc, token);
    byToken.set(token, found);
  }
  return found;
}

function lookUpTag(doc: ParsedDocument, token: string): TagLookup {
  const [tag] = findRulesTags(doc.index, token);
  if (!tag) return failure('no-rules-tag', token === 'api' ? NO_API_RULES_TAG : `No ${token} rules tag`);
  const version = Object.hasOwn(tag.attribs, 'data-rules-version') ? tag.attribs['data-rules-version'] : undefined;
  if (version !== SUPPORTED_RULES_VERSION) {
    return failure(
      'rules-version',
      version === undefined
        ? `Unknown rules version: the rules tag has no data-rules-version (supported: "${SUPPORTED_RULES_VERSION}")`
        : `Unknown rules version: ${JSON.stringify(version)} (supported: "${SUPPORTED_RULES_VERSION}")`,
    );
  }
  const body = text(tag);
  if (body.length > rulesLimits.maxTagChars) {
    return failure('too-large', `Rules tag too large (max ${rulesLimits.maxTagChars} characters)`);
  }
  return { ok: true, text: body, tag };
}

/** Runs compiled rules against a parsed document (`deadline`: see runRules). */
export function extract(
  doc: ParsedDocument,
  rules: CompiledRules,
  limits?: Partial<ExtractLimits>,
  deadline?: Deadline,
): Extraction {
  return runRules(doc.index, rules, limits, deadline);
}

/** GET /_/api: the JSON the document's `api` rules tag defines. */
export function extractApi(doc: ParsedDocument | string, limits?: Partial<ExtractLimits>): Extraction {
  const d = documentOf(doc);
  if ('ok' in d) return d;
  const tag = findRulesTag(d, 'api');
  if (!tag.ok) return tag;
  const compiled = compileRulesText(tag.text);
  if (!compiled.ok) return compiled;
  return runRules(d.index, compiled.rules, limits);
}

/** GET ?data=: the JSON the given rules text (lenient syntax) defines, with or without a rules tag. */
export function extractData(
  doc: ParsedDocument | string,
  rulesText: string,
  limits?: Partial<ExtractLimits>,
): Extraction {
  if (rulesText.length > rulesLimits.maxQueryChars) {
    return failure('too-large', `Rules too long (max ${rulesLimits.maxQueryChars} characters)`);
  }
  const compiled = compileRulesText(rulesText);
  if (!compiled.ok) return compiled;
  const d = documentOf(doc);
  if ('ok' in d) return d;
  return runRules(d.index, compiled.rules, limits);
}
