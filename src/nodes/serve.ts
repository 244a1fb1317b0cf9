// What a document host serves for a URL path, and the stored bytes of a document — kept fast:
// one indexed query per request when the bytes are cached, two when they are not.
import type { Database } from '../store/db.ts';
import type { Clock } from '../clock.ts';
import type { DocumentCache } from '../core/document-cache.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { badRequest } from '../errors.ts';
import { isDocumentName } from '../core/names.ts';
import { findByPath } from './find.ts';
import type { NodeRow } from '../store/schema.ts';
import { redirectTarget, storedContent } from '../store/nodes.ts';

/** What serving documents uses of the services, part by part (the AI edit handler reads documents here, so this
 *  does not import src/services.ts). */
export interface ServePorts {
  database: Database;
  clock: Clock;
  documents: DocumentCache;
  metrics: Metrics;
}

export const ROOT_DOCUMENT = 'index.html';
/** An account's own page for missing paths (Neocities' convention): having one opts out of the root fallback. */
export const NOT_FOUND_DOCUMENT = '404.html';

export type Resolved =
  /** A document. `fallback`: the URL named no document, so the account's root document answers (with 200, so
   *  page script can route), or its `404.html` when it has one (`notFound`: with status 404). */
  | { kind: 'document'; node: NodeRow; fallback: boolean; notFound?: boolean }
  /** An upload at exactly this path (served by the upload seam, not here). */
  | { kind: 'upload'; node: NodeRow }
  /** The old address of a document renamed or moved in the last 30 days: where it is now. */
  | { kind: 'redirect'; node: NodeRow; rest: string }
  | null;

/** 400 when a raw URL path carries an encoded percent (`%25`): no node name contains `%`
 *  (src/core/names.ts), and a path decoded twice somewhere would name another node. */
export function refuseEncodedPercent(rawPath: string): void {
  if (/%25/i.test(rawPath))
    throw badRequest('The URL path may not contain an encoded percent sign (%25).', 'invalid-path');
}

/** The decoded path of a request URL (query dropped), refusing traversal of any kind: `..`/`.`
 *  segments (also percent-encoded), backslashes, NUL, malformed escapes and `%25` answer 400. */
export function decodeRequestPath(url: string): string {
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  refuseEncodedPercent(rawPath);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    throw badRequest('The URL path is malformed.', 'invalid-path');
  }
  if (path.includes('\\') || path.includes('\u0000') || /(^|\/)\.\.?(\/|$)/.test(path)) {
    throw badRequest('The URL path may not contain "..", "." segments, backslashes or NUL characters.', 'invalid-path');
  }
  return path;
}

/** What GET `pathname` (decoded, starting with `/`) serves on an account's document host:
 *  - `/` → `index.html`;
 *  - a path through a document name (`/app.html`, `/a/app.html/spa/route`) → that document;
 *  - an upload at exactly the path → the upload;
 *  - anything else (folders, unknown paths) → the account's `404.html` (status 404) when it has one, else the
 *    root `index.html` as a fallback, or null. */
export async function resolveDocumentPath(s: ServePorts, accountId: number, pathname: string): Promise<Resolved> {
  const segments = pathname.split('/').filter((p) => p !== '');
  const docEnd = segments.findIndex(isDocumentName);
  if (segments.length === 0) {
    const root = await findByPath(s, accountId, ROOT_DOCUMENT);
    return root?.type === 'site' ? { kind: 'document', node: root, fallback: false } : null;
  }
  const rel = (docEnd === -1 ? segments : segments.slice(0, docEnd + 1)).join('/');
  const node = await findByPath(s, accountId, rel);
  if (node?.type === 'site') return { kind: 'document', node, fallback: false };
  if (node?.type === 'upload' && (docEnd === -1 || docEnd === segments.length - 1)) return { kind: 'upload', node };
  if (!node && docEnd !== -1) {
    const moved = await redirectTarget(s.database.db, accountId, rel, s.clock.now().toISOString());
    if (moved) return { kind: 'redirect', node: moved, rest: segments.slice(docEnd + 1).join('/') };
  }
  return rootFallback(s, accountId);
}

/** What a path that names nothing serves: the account's `404.html` when it has one, else the root
 *  `index.html` as a fallback, or null. Also what a private name serves to whoever may not see it, so the
 *  two answer alike. */
export async function rootFallback(s: ServePorts, accountId: number): Promise<Resolved> {
  const own404 = await findByPath(s, accountId, NOT_FOUND_DOCUMENT);
  if (own404?.type === 'site') return { kind: 'document', node: own404, fallback: true, notFound: true };
  const root = await findByPath(s, accountId, ROOT_DOCUMENT);
  return root?.type === 'site' ? { kind: 'document', node: root, fallback: true } : null;
}

// ------------------------------------------------------------------ content cache

/** The stored bytes of a document and their checksum (re-read together when the cache is stale;
 *  the checksum returned belongs to the bytes returned). Null when the document has no content. */
export async function documentContent(
  s: Pick<ServePorts, 'documents' | 'metrics' | 'database'>,
  node: Pick<NodeRow, 'id' | 'checksum'>,
): Promise<{ bytes: Buffer; checksum: string } | null> {
  const hit = s.documents.content.get(node.id);
  const fresh = hit !== undefined && hit.checksum === node.checksum;
  s.metrics.cacheLookup('document', fresh);
  if (fresh) return hit;
  const row = await storedContent(s.database.db, node.id);
  if (!row?.checksum) return null;
  const bytes = Buffer.isBuffer(row.html) ? row.html : Buffer.from(row.html);
  s.documents.content.set(node.id, { checksum: row.checksum, bytes });
  return { bytes, checksum: row.checksum };
}

/** The name `currentResource` carries: the document's file name without its extension (`index` for `/`). */
export function resourceNameOf(node: Pick<NodeRow, 'name'>): string {
  return node.name.replace(/\.(html|htmlclay)$/i, '');
}

// ------------------------------------------------------------------ while the database is away

const servedKey = (accountId: number, pathname: string) => `${accountId} ${pathname}`;

/** Remembers what a URL served, when any visitor may see it (`forAll`: a visitor's `ctx.nodes`, src/documents/
 *  view.ts; served to all while the database is away); a document only some may see (private) forgets the URL. */
export function rememberServed(
  s: ServePorts,
  at: { accountId: number; pathname: string },
  node: NodeRow,
  checksum: string,
  forAll: boolean,
): void {
  const key = servedKey(at.accountId, at.pathname);
  if (forAll)
    s.documents.served.set(key, { id: node.id, checksum, name: node.name, forbidFraming: node.forbid_framing === 1 });
  else s.documents.served.delete(key);
}

/** The public document this URL last served and its bytes, if both are still at hand. */
export function servedBefore(
  s: ServePorts,
  accountId: number,
  pathname: string,
): { name: string; bytes: Buffer; checksum: string; forbidFraming: boolean } | null {
  const last = s.documents.served.stale(servedKey(accountId, pathname));
  const hit = last ? s.documents.content.stale(last.id) : undefined;
  return last && hit && hit.checksum === last.checksum
    ? { name: last.name, bytes: hit.bytes, checksum: hit.checksum, forbidFraming: last.forbidFraming }
    : null;
}
