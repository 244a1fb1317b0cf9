// Framing. No page Kiln renders itself may be framed, on any host: the main app, and on document hosts
// and custom domains the editor, versions, restore, error and sign-up pages. Sibling hosts are
// same-site, so an owner's host session rides along into a frame on a neighbour's page, and one click
// there would act as the owner (restore a version, save in the upload editor). The account's own
// content (its documents and uploads, as stored) keeps its owner's choice: their pages may embed
// each other, or be embedded elsewhere, as the owner writes them.
//
// But a frame on a neighbour's page is where the owner's edit mode must never come up (issue #43): a
// document loaded in a frame by another origin is answered as to a visitor (src/http/routes/documents.ts),
// in an editor's browser without its origin (a CSP sandbox: the edit cookie is one per host for every tab
// and frame, and the owner's other tabs set it again at any moment), and every answer that carries the
// owner's markers renders only under the owner's own pages
// (`frame-ancestors 'self'`, which the browser checks against every ancestor, so a same-origin
// navigation inside a neighbour's frame is refused too). The owner may also forbid framing of a document
// by other sites altogether (its `forbid_framing` setting): the same header on every answer of it.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';

const accountContent = new WeakSet<FastifyReply>();

/** This answer is the account's own document or upload: framing is its owner's choice. */
export function servesAccountContent(reply: FastifyReply): FastifyReply {
  accountContent.add(reply);
  return reply;
}

/** Request destinations of a page load into a frame (Fetch Metadata's Sec-Fetch-Dest). */
const FRAME_DESTINATIONS = new Set(['iframe', 'frame', 'embed', 'object', 'fencedframe']);

/** A page load into a frame (any parent). */
export function isFrameLoad(headers: IncomingHttpHeaders): boolean {
  const dest = headers['sec-fetch-dest'];
  return typeof dest === 'string' && FRAME_DESTINATIONS.has(dest);
}

/** A page load into a frame that another origin started: a neighbour's page (same site, other host) or
 *  any other site. Its answer is a visitor's, whoever's cookies ride along. (A frame that the document's
 *  own origin navigates says `same-origin`; whether its ancestors are the owner's is the browser's to
 *  check, through `frame-ancestors 'self'` on the owner's answers.) */
export function framedByAnotherOrigin(headers: IncomingHttpHeaders): boolean {
  return isFrameLoad(headers) && headers['sec-fetch-site'] !== 'same-origin';
}

/** Adds a directive to the answer's Content-Security-Policy. */
function addPolicy(reply: FastifyReply, directive: string) {
  const csp = reply.getHeader('content-security-policy');
  reply.header('Content-Security-Policy', csp ? `${String(csp)}; ${directive}` : directive);
}

/** The request names, as its Referer, a page of another origin than its own: an ordinary embed by another
 *  site's page. Absent (suppressed, or a sandboxed page of this host following a link: an opaque origin
 *  sends none) or this host's own, it is not one. */
export function referredByAnotherOrigin(headers: IncomingHttpHeaders): boolean {
  const referer = headers.referer;
  if (typeof referer !== 'string' || referer === '') return false;
  try {
    return new URL(referer).host.toLowerCase() !== String(headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/** This answer may be framed only by pages of its own origin. */
export function framedOnlyBySelf(reply: FastifyReply): FastifyReply {
  if (!String(reply.getHeader('content-security-policy') ?? '').includes('frame-ancestors'))
    addPolicy(reply, "frame-ancestors 'self'");
  return reply.header('X-Frame-Options', 'SAMEORIGIN');
}

/** The page runs without its origin (a sandbox without `allow-same-origin`): its scripts read none of the
 *  host's cookies, whatever another tab sets meanwhile, and whatever it sends is not the host's own (a
 *  save from it is cross-origin, without the host's Lax session). For a neighbour's frame in the browser
 *  of someone who may edit the document: the edit cookie is one per host for every tab and frame, so
 *  removing it once is not enough while the owner keeps working in another tab. */
export function withoutItsOrigin(reply: FastifyReply): FastifyReply {
  addPolicy(
    reply,
    'sandbox allow-scripts allow-forms allow-modals allow-popups allow-popups-to-escape-sandbox allow-downloads',
  );
  return reply;
}

export function registerFraming(app: FastifyInstance): void {
  app.addHook('onSend', async (_req, reply) => {
    if (accountContent.has(reply)) return;
    const csp = reply.getHeader('content-security-policy');
    reply.header('Content-Security-Policy', csp ? `${String(csp)}; frame-ancestors 'none'` : "frame-ancestors 'none'");
    reply.header('X-Frame-Options', 'DENY');
  });
}
