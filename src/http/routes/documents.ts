// The catch-all, registered last. On a document host (`<username>.<root>` or a custom domain):
//   GET/HEAD /<path>  the stored bytes exactly, `text/html; charset=utf-8`, strong ETag (the checksum),
//                     If-None-Match → 304. `/` is `index.html`; `/a/app.html/spa/route` is `a/app.html`;
//                     folders and unknown paths render the root `index.html` with 200 (so page script can
//                     read location.pathname), or 404 when there is none. Private documents: 404 to all
//                     but their owner. Sets `isAdminOfCurrentResource=true` for whoever may save the
//                     document (else removes it) and `currentResource=<name without extension>`.
//                     `?token=<share token>` (valid, sharing on): sets `share_<sitename>` and 302s to the
//                     URL without it; that cookie makes its holder a share guest (src/sharing/share.ts).
//                     Loaded in a frame by another origin (a neighbour's page): answered as to a visitor
//                     whoever's cookies ride along (src/http/framing.ts): the visitor's bytes, the edit
//                     cookie removed, no other cookie, never a 304, `no-store`, and `?editmode=` (hyperclayjs's
//                     switch above the cookie) taken off by a 302; sandboxed (no origin) in an editor's
//                     browser or when no other site's page asked. Answers with the owner's markers carry
//                     `frame-ancestors 'self'`; so does every answer of a document that forbids framing.
//   Paths under `/_/` that no other route took: 404.
// On the main app: GET `/` is the home page (auth routes' `mainHome`); anything else 404.
//
// This path is the hot one (see `npm run bench`): one indexed query when the bytes are cached; a public
// document's answer to a cookie-less visitor is kept and served before the framework (src/http/hot-path.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import type { RoutePlugin } from './plugin.ts';
import type { Services } from '../../services.ts';
import { notFound } from '../../errors.ts';
import { allows, authorize, resourceOf } from '../../access/authorize.ts';
import {
  decodeRequestPath,
  documentContent,
  rememberServed,
  resolveDocumentPath,
  resourceNameOf,
  rootFallback,
  servedBefore,
} from '../../nodes/serve.ts';
import { isStorageUnavailable } from '../../store/errors.ts';
import { childPathOf } from '../../nodes/find.ts';
import type { NodeRow } from '../../store/schema.ts';
import { toolbarTag, withToolbar } from '../../ui/toolbar.ts';
import { ifNoneMatchHits } from '../../core/conditional.ts';
import { ADMIN_COOKIE, RESOURCE_COOKIE } from '../cookies.ts';
import { mainHome } from '../home.ts';
import { sendPage, sendPieces, wantsHtml } from '../io.ts';
import { nodeUrlPath } from '../../core/urls.ts';
import { noHomePage, nothingHere } from '../../ui/dashboard.ts';
import { bounceToMainApp, hintNamesThisHost } from '../sessions.ts';
import { serveUpload } from '../../uploads/serve.ts';
import { answerDataQuery, wantsData } from '../data-answers.ts';
import { isValidShareToken, TOKEN_PARAM } from '../../sharing/share.ts';
import { callerOf, setShareCookie, tokenParamOf } from '../share-grant.ts';
import type { Ticket } from '../hot-path.ts';
import {
  framedByAnotherOrigin,
  framedOnlyBySelf,
  isFrameLoad,
  referredByAnotherOrigin,
  servesAccountContent,
  withoutItsOrigin,
} from '../framing.ts';
import type { Standing } from '../../access/authorize.ts';

/** Request destinations that may get a document: page loads, frames, and scripts' fetches. */
const PAGE_DESTINATIONS = new Set(['document', 'iframe', 'frame', 'embed', 'object', 'empty']);

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this answer may be kept for the hot path (src/http/hot-path.ts). */
    hotKeep: { ticket: Ticket; node: NodeRow; checksum: string } | null;
  }
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  // A cookie-less visitor's answer is kept for the hot path once it is sent (its headers complete).
  app.decorateRequest('hotKeep', null);
  app.addHook('onSend', async (req, reply, payload) => {
    const k = req.hotKeep;
    if (k && reply.statusCode === 200 && Buffer.isBuffer(payload))
      s.hot.keep(k.ticket, k.node, req.url, reply.getHeaders() as OutgoingHttpHeaders, payload, k.checksum);
    return payload;
  });
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const site = req.site;
    if (site.kind === 'main') {
      if (req.url === '/' || req.url.startsWith('/?')) return mainHome(req, reply, s);
      throw notFound();
    }
    if (wantsData(req)) return answerDataQuery(req, reply, s); // `?data=<rules>`: the public data API
    const pathname = decodeRequestPath(req.url);
    if (pathname.startsWith('/_/')) throw notFound();
    // A neighbour's frame: whoever the cookies say, the caller is a visitor, and hyperclayjs's own
    // `?editmode=true` (which outranks the cookie) is not the neighbour's to set.
    const elsewhere = framedByAnotherOrigin(req.headers);
    if (elsewhere) {
      const unforced = withoutEditMode(req.url);
      if (unforced !== null) return reply.header('cache-control', 'no-store').redirect(unforced, 302);
    }
    const actor = elsewhere ? null : req.actor;
    const callerHere = (n: NodeRow): Standing =>
      elsewhere ? { actor: null, shareGuest: false, teamRole: null } : callerOf(req, n);
    // The owner, signed in on the main app, opening their host with no session here yet.
    const bounce = elsewhere ? null : bounceToMainApp(req, reply, s);
    if (bounce) return bounce;
    // Taken before storage is read: an event arriving meanwhile voids it.
    const ticket = s.hot.ticket(req, site.accountId);
    let found: Awaited<ReturnType<typeof resolveDocumentPath>>;
    try {
      found = await resolveDocumentPath(s, site.accountId, pathname);
    } catch (err) {
      const last = isStorageUnavailable(err) ? servedBefore(s, site.accountId, pathname) : null;
      if (!last) throw err;
      return serveLast(req, reply, last, elsewhere);
    }
    // `?token=<share token>` of the document: the share cookie, and the URL without the token.
    const shareVisit = () =>
      found?.kind === 'document' && !elsewhere && tokenParamOf(req) !== undefined
        ? shareLinkVisit(req, reply, s, found.node)
        : null;
    const shared = shareVisit();
    if (shared) return shared;
    // A name the caller may not see (private) answers exactly as a name nobody has: the fallback too.
    if (found && !(found.kind === 'document' && found.fallback)) {
      if (!allows(callerHere(found.node), resourceOf(found.node), 'view')) {
        found = await rootFallback(s, site.accountId);
        const sharedRoot = shareVisit();
        if (sharedRoot) return sharedRoot;
      }
    }
    // The root document answers unknown paths for page loads and scripts (single-page apps), never for
    // a browser's image, script or style request (a missing /favicon.ico is not the home page).
    if (found?.kind === 'document' && found.fallback && isSubresource(req)) throw notFound();
    // Whoever keeps this host's pages, opening an address in a browser: told what is (not) there, with one click
    // to the fix, never an editable fallback page whose save would fail.
    const keeper =
      actor &&
      (actor.accountId === site.accountId || req.teamRole === 'owner' || req.teamRole === 'editor') &&
      wantsHtml(req);
    if (!found) {
      if (keeper)
        return sendPage(reply, noHomePage({ base: s.config.baseUrl, username: actor.username, pathname }), 404);
      throw notFound();
    }
    if (found.kind === 'document' && found.fallback && keeper && isPageLoad(req))
      return sendPage(
        reply,
        nothingHere({ base: s.config.baseUrl, username: actor.username, pathname, own404: !!found.notFound }),
        404,
      );
    if (found.kind === 'redirect') {
      // A renamed or moved document: its old address leads to it (query kept), while it may be seen.
      const q = req.url.indexOf('?');
      const to = `${nodeUrlPath(found.node)}${found.rest ? `/${found.rest.split('/').map(encodeURIComponent).join('/')}` : ''}`;
      return reply.header('cache-control', 'no-cache').redirect(q === -1 ? to : to + req.url.slice(q), 302);
    }
    // A share guest (valid `share_<sitename>` cookie) may open the document even when it is private.
    const caller = callerHere(found.node);
    const resource = resourceOf(found.node);
    authorize(caller, resource, 'view');
    if (found.kind === 'upload') return serveUpload(req, reply, s, found.node);
    const node = found.node;

    // Cookies for the page's script: edit controls for whoever may save; never `false` (some editors
    // treat any value as "editable"), so a non-owner's stale cookie is removed instead. The browser's
    // cookies are one jar for every tab and frame of this host: only a top-level load sets the edit
    // cookie (a frame could be under a neighbour's page), and a neighbour's frame sets none of its own.
    const cookieOpts = { path: '/', httpOnly: false, sameSite: 'lax' as const, secure: s.config.secure };
    const saver = allows(caller, resource, 'save');
    if (saver && !isFrameLoad(req.headers)) reply.setCookie(ADMIN_COOKIE, 'true', cookieOpts);
    else if (!saver && req.cookies[ADMIN_COOKIE] !== undefined) reply.clearCookie(ADMIN_COOKIE, { path: '/' });
    const resourceName = resourceNameOf(node);
    if (!elsewhere && req.cookies[RESOURCE_COOKIE] !== resourceName)
      reply.setCookie(RESOURCE_COOKIE, resourceName, cookieOpts);

    // A neighbour's frame is never stored: a history navigation would show it again without asking,
    // reading whatever edit cookie the jar holds by then.
    reply.header(
      'cache-control',
      elsewhere ? 'no-store' : node.visibility === 'private' ? 'private, no-cache' : 'no-cache',
    );
    reply.header('x-content-type-options', 'nosniff');
    servesAccountContent(reply);
    // A neighbour's frame in the browser of someone who may edit the document (or of the host's owner,
    // signed in on the main app): the page runs without its origin, so it can never read an edit cookie
    // that the owner's other tabs set meanwhile, nor save as the owner. So does a frame that no other
    // site's page asked for (no Referer, or this host's own: a link followed inside such a sandbox comes
    // without cookies or Referer, under the same neighbour's page). An ordinary embed keeps its origin.
    if (
      elsewhere &&
      (!referredByAnotherOrigin(req.headers) ||
        allows(callerOf(req, node), resource, 'save') ||
        hintNamesThisHost(req, s))
    )
      withoutItsOrigin(reply);
    // The owner's markers render only under the owner's own pages; a document may forbid framing by others.
    if (saver || node.forbid_framing === 1) framedOnlyBySelf(reply);
    // A neighbour's frame gets the bytes in full: the browser's copy for this URL may be the owner's.
    if (
      !elsewhere &&
      !found.notFound &&
      node.checksum &&
      ifNoneMatchHits(req.headers['if-none-match'], node.checksum)
    ) {
      return reply.code(304).header('etag', `"${node.checksum}"`).send();
    }
    const content = await documentContent(s, node);
    if (!content) throw notFound();
    if (!caller.shareGuest && !elsewhere) rememberServed(s, site.accountId, pathname, node, content.checksum);
    // The owner's page load in a browser carries the toolbar; every other request (a script's fetch, a
    // sync tool, curl) gets the stored bytes exactly. The ETag stays the stored bytes' (saves send it
    // as If-Match).
    const owner =
      !caller.shareGuest && (actor?.accountId === node.owner_id || !!caller.teamRole) && isPageLoad(req) && saver;
    // An app user on their own copy before confirming their email cannot edit it yet: the page says why.
    const unconfirmed =
      !owner &&
      !caller.shareGuest &&
      actor?.accountId === node.owner_id &&
      actor.accountType === 'app_user' &&
      !actor.emailConfirmed &&
      isPageLoad(req);
    if (owner || unconfirmed) reply.header('cache-control', 'private, no-cache').header('vary', 'Cookie');
    else if (ticket && !elsewhere && !found.fallback && !caller.shareGuest && !req.actor)
      req.hotKeep = { ticket, node, checksum: content.checksum };
    // An account's own 404.html answers missing paths with status 404 (the root fallback with 200).
    reply
      .code(found.notFound ? 404 : 200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('etag', `"${content.checksum}"`);
    if (!(owner || unconfirmed)) return reply.send(content.bytes);
    const tag = toolbarTag(
      childPathOf(node),
      s.config.baseUrl,
      unconfirmed ? actor!.email : undefined,
      actor?.accountType === 'app_user',
    );
    return sendPieces(reply, withToolbar(content.bytes, tag));
  };
  function isSubresource(req: FastifyRequest): boolean {
    const dest = req.headers['sec-fetch-dest'];
    return typeof dest === 'string' && !PAGE_DESTINATIONS.has(dest);
  }
  /** A browser's top-level page load: `Sec-Fetch-Dest: document` (secure origins), or on plain HTTP,
   *  where browsers send no Sec-Fetch headers, the `Upgrade-Insecure-Requests: 1` of navigations. */
  function isPageLoad(req: FastifyRequest): boolean {
    const dest = req.headers['sec-fetch-dest'];
    return dest !== undefined ? dest === 'document' : req.headers['upgrade-insecure-requests'] === '1';
  }
  /** While the database is away: the public document this URL served last, as a visitor sees it. */
  function serveLast(
    req: FastifyRequest,
    reply: FastifyReply,
    last: { bytes: Buffer; checksum: string; forbidFraming: boolean },
    elsewhere: boolean,
  ) {
    servesAccountContent(reply).header('cache-control', elsewhere ? 'no-store' : 'no-cache');
    // Who the cookies name is not known while the database is away: any cookie counts.
    if (elsewhere && (req.headers.cookie !== undefined || !referredByAnotherOrigin(req.headers)))
      withoutItsOrigin(reply);
    if (last.forbidFraming) framedOnlyBySelf(reply);
    if (elsewhere && req.cookies[ADMIN_COOKIE] !== undefined) reply.clearCookie(ADMIN_COOKIE, { path: '/' });
    if (!elsewhere && ifNoneMatchHits(req.headers['if-none-match'], last.checksum))
      return reply.code(304).header('etag', `"${last.checksum}"`).send();
    return reply
      .code(200)
      .header('x-content-type-options', 'nosniff')
      .header('content-type', 'text/html; charset=utf-8')
      .header('etag', `"${last.checksum}"`)
      .send(last.bytes);
  }
  /** `?token=<share token>`: a valid token sets the share cookie and sends the browser to the same
   *  URL without the token (so it leaves the address bar and Referer); an invalid or disabled one is
   *  ignored (the document answers as it would without it). */
  function shareLinkVisit(req: FastifyRequest, reply: FastifyReply, s: Services, node: NodeRow) {
    const token = tokenParamOf(req)!;
    if (!isValidShareToken(node, token)) return null;
    setShareCookie(reply, s.config, node, token);
    const q = req.url.indexOf('?');
    // One leading slash: `//host/…` would leave this site.
    const path = (q === -1 ? req.url : req.url.slice(0, q)).replace(/^\/+/, '/');
    const params = new URLSearchParams(q === -1 ? '' : req.url.slice(q + 1));
    params.delete(TOKEN_PARAM);
    const rest = params.toString();
    return reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(rest ? `${path}?${rest}` : path, 302);
  }
  app.get('/', handler);
  app.get('/*', handler);
};
export default plugin;

/** The request URL without its `editmode` parameters (as hyperclayjs reads them: URLSearchParams), or
 *  null when it has none. */
export function withoutEditMode(url: string): string | null {
  const q = url.indexOf('?');
  if (q === -1) return null;
  const params = new URLSearchParams(url.slice(q + 1));
  if (!params.has('editmode')) return null;
  params.delete('editmode');
  const rest = params.toString();
  // One leading slash: `//host/…` would leave this site.
  const path = url.slice(0, q).replace(/^\/+/, '/');
  return rest ? `${path}?${rest}` : path;
}
