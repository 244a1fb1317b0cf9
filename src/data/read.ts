// The public data API's use case: a document read as JSON through rules, without a key.
//   GET {document_host}/_/api/<path>         rules from the document's `api` rules tag
//   GET {document_host}/<path>?data=<rules>  rules from the query
// No HTTP here: the routes (src/http/routes/data-api.ts) pass plain inputs and send the answer as given.
//
// Visibility: only documents a visitor of the host may view are read (the table, asked for an anonymous
// caller through its nodes), for everyone — the owner included. A
// private document answers exactly like a missing one (404, same body). The data API is the no-key face of a
// document; agents read private documents through the sync API only (spec: Authentication, Public data).
// This also keeps every answer independent of who asks, so one cache entry serves all callers.
//
// Caching (limits.dataCacheMs, 5 minutes):
// - An answer depends only on the document's bytes, the rules and the engine, so it is keyed by
//   (engine version, document checksum, rules kind, SHA-256 of the rules text). A save changes the checksum
//   read with the node on every request: the next request uses a new key at once, in every process.
// - Failures that depend only on those inputs (no tag, bad rules, too large) are cached like answers; a
//   `too-expensive` failure depends on the machine's load and is kept only briefly.
// - The ETag is derived from the same key, so a conditional GET answers 304 before anything is loaded.
// - Concurrent misses on one key share one extraction.
//
// Extraction never runs on the main thread: `?data=` rules are compiled here first (bad rules answer their
// 400 without the document being read or parsed), then parsing and extraction run in the extraction pool
// (src/data/pool.ts) under one budget, which keeps parsed documents in per-thread LRUs by checksum. A document
// whose parse alone ran out of the budget answers `too-expensive` for any rules for TOO_EXPENSIVE_TTL_MS
// without going to the pool again.
import type { ErrorCode } from '../errors.ts';
import type { Services } from '../services.ts';
import { limits } from '../limits.ts';
import { sha256 } from '../core/checksum.ts';
import { anonymous } from '../access/caller.ts';
import { nodesFor } from '../nodes/open.ts';
import { findByPath } from '../nodes/find.ts';
import type { NodeRow } from '../store/schema.ts';
import { documentContent, resolveDocumentPath, ROOT_DOCUMENT } from '../nodes/serve.ts';
import { ifNoneMatchHits } from '../core/conditional.ts';
import { compileRulesText, rulesLimits, type Extraction } from '../rules/index.ts';
import { withBytes, type CachedAnswer } from './cache.ts';
import { tooExpensive } from './pool.ts';

/** Changes whenever the engine could answer differently for the same bytes and rules (cache keys, ETags). */
const DATA_ENGINE_VERSION = 'r1';
/** How long a `too-expensive` failure is kept. It may come from load rather than from the rules (a full queue;
 *  a budget counted in wall-clock time where CPU time is unknown), so a legitimate document must recover soon;
 *  a couple of seconds still answers a burst of identical hostile requests without redoing the work
 *  (concurrent ones share one extraction anyway). */
export const TOO_EXPENSIVE_TTL_MS = 2_000;

export const DOCUMENT_NOT_FOUND = 'Document not found';
const MISSING_DATA = 'Missing data parameter';

export type DataRules = { kind: 'api' } | { kind: 'query'; text: string };

export interface DataRequest {
  /** The account whose document host was asked. */
  accountId: number;
  /** Decoded URL path relative to the host, e.g. `a/b/app.html` ('' for the root document). */
  path: string;
  /** `exact`: the path names a document (`/_/api/<path>`; '' is index.html). `page`: the path is a page
   *  URL, resolved as pages are served (`/` is index.html, `/a/app.html/spa/route` is `a/app.html`), but a
   *  path that names no document is not read from the root document's fallback. */
  resolve: 'exact' | 'page';
  rules: DataRules;
  /** The request's If-None-Match header. */
  ifNoneMatch?: string | string[];
}

export interface DataAnswer {
  /** 200, 304, or a failure: 400, 404, 413. */
  status: number;
  /** JSON (empty on 304), as text or its UTF-8 bytes. Failures are `{error, code}`. */
  body: string | Buffer;
  /** On 200 and 304: the quoted strong ETag. */
  etag?: string;
  /** Whether the answer came from the result cache, its age in whole seconds, and (injected clock, ms)
   *  when the cached answer was made and when it expires. */
  cache?: { hit: boolean; ageSeconds: number; createdAt: number; expiresAt: number };
}

const failureBody = (error: string, code: ErrorCode) => JSON.stringify({ error, code });

function notFoundAnswer(): DataAnswer {
  // One body for private and missing documents.
  return { status: 404, body: failureBody(DOCUMENT_NOT_FOUND, 'not-found') };
}

/** Checks on the rules text that need no document: a missing or too long `?data=` value. */
function rulesProblem(rules: DataRules): DataAnswer | null {
  if (rules.kind !== 'query') return null;
  if (rules.text.trim() === '') return { status: 400, body: failureBody(MISSING_DATA, 'rules-missing') };
  if (rules.text.length > rulesLimits.maxQueryChars) {
    return {
      status: 413,
      body: failureBody(`Rules too long (max ${rulesLimits.maxQueryChars} characters)`, 'too-large'),
    };
  }
  return null;
}

/** The document a data request reads, if a visitor of the host may view it (see the top of this file); null
 *  otherwise. */
async function publicDocumentAt(
  ctx: Services,
  accountId: number,
  path: string,
  resolve: 'exact' | 'page',
): Promise<NodeRow | null> {
  let node: NodeRow | undefined;
  if (resolve === 'exact') {
    node = await findByPath(ctx, accountId, path.replace(/^\/+/, '') || ROOT_DOCUMENT);
  } else {
    const found = await resolveDocumentPath(ctx, accountId, `/${path.replace(/^\/+/, '')}`);
    node = found?.kind === 'document' && !found.fallback ? found.node : undefined;
  }
  if (node?.type !== 'site' || !node.checksum) return null;
  // Asked as a visitor of the host, whoever asks (see the top of this file).
  return (await nodesFor(ctx.database.db, anonymous(accountId)).may(node, 'view')) ? node : null;
}

/** What identifies the rules in cache keys and ETags (engine version, kind, SHA-256 of the text). */
export function rulesId(rules: DataRules): string {
  return sha256(
    rules.kind === 'api' ? `${DATA_ENGINE_VERSION}\0api` : `${DATA_ENGINE_VERSION}\0query\0${rules.text}`,
  ).slice(0, 16);
}

/** The cache key of an answer: everything it depends on. */
export function dataCacheKey(checksum: string, rulesIdentity: string): string {
  return `${checksum}:${rulesIdentity}`;
}

/** The ETag of an answer (quoted, strong): the document checksum and the rules. */
function dataEtag(checksum: string, rulesIdentity: string): string {
  return `"${checksum}-${rulesIdentity}"`;
}

type Computed = { answer: CachedAnswer; etag: string } | null;
const inFlight = new Map<string, Promise<Computed>>();

/** The whole request: find, authorize, 304, cache, extract. Never throws for bad rules. */
export async function readData(s: Services, req: DataRequest): Promise<DataAnswer> {
  const early = rulesProblem(req.rules);
  if (early) return early;
  const node = await publicDocumentAt(s, req.accountId, req.path, req.resolve);
  if (!node) return notFoundAnswer();
  return answerFor(s, node, req.rules, req.ifNoneMatch);
}

/** The `api` data of a document its caller has already opened through the access table (an agent's read_data,
 *  src/mcp/tools/data.ts): the same answer, cache and extraction as the public API, without its visitors-only
 *  rule (the caller may see the document, private or not). */
export function documentData(s: Services, node: NodeRow): Promise<DataAnswer> {
  return answerFor(s, node, { kind: 'api' });
}

/** Cache, 304 and extraction of a document found and judged. */
async function answerFor(
  s: Services,
  node: NodeRow,
  rules: DataRules,
  ifNoneMatch?: string | string[],
): Promise<DataAnswer> {
  if (!node.checksum) return notFoundAnswer();
  const req = { rules, ifNoneMatch };
  const checksum = node.checksum;
  const id = rulesId(req.rules);
  const etag = dataEtag(checksum, id);
  if (ifNoneMatchHits(req.ifNoneMatch, etag.slice(1, -1))) return { status: 304, body: '', etag };

  const now = s.clock.now().getTime();
  const key = dataCacheKey(checksum, id);
  const cached = await s.dataCache.get(key, now);
  s.metrics.cacheLookup('data', cached !== null && cached !== undefined);
  if (cached) return answerOf(cached, etag, true, now);

  let pending = inFlight.get(key);
  if (!pending) {
    pending = compute(s, node, req.rules, id, now).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  const computed = await pending;
  if (!computed) return notFoundAnswer();
  return answerOf(computed.answer, computed.etag, false, now);
}

/** Documents (by checksum) whose parse alone ran out of the budget, until when (injected clock, ms). */
const slowDocuments = new Map<string, number>();
const MAX_SLOW_DOCUMENTS = 1_000;

function markSlow(checksum: string, until: number) {
  slowDocuments.delete(checksum);
  slowDocuments.set(checksum, until);
  if (slowDocuments.size > MAX_SLOW_DOCUMENTS) slowDocuments.delete(slowDocuments.keys().next().value!);
}

function knownSlow(checksum: string, now: number): boolean {
  const until = slowDocuments.get(checksum);
  if (until === undefined) return false;
  if (until > now) return true;
  slowDocuments.delete(checksum);
  return false;
}

/** Checks the rules, then parses and extracts in the pool; stores the answer in the result cache. */
async function compute(s: Services, node: NodeRow, rules: DataRules, id: string, now: number): Promise<Computed> {
  const { result, checksum } = await extraction(s, node, rules, now);
  if (!checksum) return null;
  const answer: CachedAnswer = result.ok
    ? withBytes({ status: 200, body: JSON.stringify(result.data), createdAt: now, ttlMs: limits.dataCacheMs })
    : withBytes({
        status: result.status,
        body: failureBody(result.error, result.code),
        createdAt: now,
        ttlMs: result.code === 'too-expensive' ? TOO_EXPENSIVE_TTL_MS : limits.dataCacheMs,
      });
  // Keyed by the checksum of the bytes actually parsed (newer than the node's if a save just landed).
  s.dataCache.set(dataCacheKey(checksum, id), answer).catch(() => {});
  return { answer, etag: dataEtag(checksum, id) };
}

/** The engine's answer and the checksum of the bytes it read (null: the document has no content). */
async function extraction(
  s: Services,
  node: NodeRow,
  rules: DataRules,
  now: number,
): Promise<{ result: Extraction; checksum: string | null }> {
  // The rules first: compiling needs no document (and is cached by text in this thread too).
  if (rules.kind === 'query') {
    const compiled = compileRulesText(rules.text);
    if (!compiled.ok) return { result: compiled, checksum: node.checksum! };
  }
  const slow = () => tooExpensive(`over ${rulesLimits.maxMs} ms`);
  if (knownSlow(node.checksum!, now)) return { result: slow(), checksum: node.checksum! };
  const content = await documentContent(s, node);
  if (!content) return { result: slow(), checksum: null };
  if (content.checksum !== node.checksum && knownSlow(content.checksum, now))
    return { result: slow(), checksum: content.checksum };
  const reply = await s.extractions.run({ checksum: content.checksum, bytes: content.bytes, rules });
  if (reply.phase === 'parse') markSlow(content.checksum, now + TOO_EXPENSIVE_TTL_MS);
  return { result: reply.result, checksum: content.checksum };
}

function answerOf(a: CachedAnswer, etag: string, hit: boolean, now: number): DataAnswer {
  const body = a.bytes ?? a.body;
  const cache = {
    hit,
    ageSeconds: hit ? Math.max(0, Math.floor((now - a.createdAt) / 1000)) : 0,
    createdAt: a.createdAt,
    expiresAt: a.createdAt + a.ttlMs,
  };
  return a.status === 200 ? { status: 200, body, etag, cache } : { status: a.status, body, cache };
}
