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
// Schema (any query) → `viewDocument` (src/documents/view.ts: the path, its fallback, redirects, share links
// and every access decision, through ctx.nodes; a neighbour's frame asks as a visitor) → the presenter below
// (cookies, caching and framing headers, the bytes, exactly as the answer needs).
//
// This path is the hot one (see `npm run bench`): one indexed query when the bytes are cached; a public
// document's answer to a cookie-less visitor, and a signed-in person's answer to the same request again (their
// session, their role, the document unchanged), are kept and served before the framework (src/http/hot-path.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { notFound } from '../../errors.ts';
import { decodeRequestPath, documentContent, rememberServed, resourceNameOf } from '../../nodes/serve.ts';
import { asVisitor, viewDocument, type DocumentView, type View } from '../../documents/view.ts';
import { childPathOf } from '../../nodes/find.ts';
import type { NodeRow } from '../../nodes/find.ts';
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
import { TOKEN_PARAM } from '../../sharing/share.ts';
import { setShareCookie, tokenParamOf } from '../share-grant.ts';
import type { Ticket } from '../hot-path.ts';
import {
  framedByAnotherOrigin,
  framedOnlyBySelf,
  isFrameLoad,
  referredByAnotherOrigin,
  servesAccountContent,
  withoutItsOrigin,
} from '../framing.ts';

/** Request destinations that may get a document: page loads, frames, and scripts' fetches. */
const PAGE_DESTINATIONS = new Set(['document', 'iframe', 'frame', 'embed', 'object', 'empty']);

/** Any query: the page's own script reads it. Kiln reads `data` (the data API: once, checked there, in its
 *  JSON refusal), `token` (a share link: the first) and `editmode` (hyperclayjs's switch). */
const QUERY = z.record(z.string(), z.union([z.string(), z.array(z.string())]));
type Req = FastifyRequest<{ Querystring: z.infer<typeof QUERY> }>;

/** How this request was asked, for the presenter. */
interface Asked {
  /** Loaded in a frame by another origin: answered as to a visitor. */
  framed: boolean;
  ticket: Ticket | null;
  host: number;
  path: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this answer may be kept for the hot path (src/http/hot-path.ts); `pieces`: a body sent as pieces. */
    hotKeep: { ticket: Ticket; node: NodeRow; checksum: string; pieces?: Buffer[] } | null;
  }
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  // An answer the hot path may keep is kept once it is sent (its headers complete): a cookie-less visitor's 200,
  // a signed-in person's 200 or 304.
  app.decorateRequest('hotKeep', null);
  app.addHook('onSend', async (req, reply, payload) => {
    const k = req.hotKeep;
    if (!k) return payload;
    const headers = reply.getHeaders() as OutgoingHttpHeaders;
    if (k.ticket.person) {
      const body = k.pieces ?? (Buffer.isBuffer(payload) ? [payload] : reply.statusCode === 304 ? [] : null);
      if (body) s.hot.keepPersonal(k.ticket, k.node, req.url, reply.statusCode, headers, body);
    } else if (reply.statusCode === 200 && Buffer.isBuffer(payload))
      s.hot.keep(k.ticket, k.node, req.url, headers, payload, k.checksum);
    return payload;
  });
  const handler = async (req: Req, reply: FastifyReply) => {
    const site = req.site;
    if (site.kind === 'main') {
      if (req.url === '/' || req.url.startsWith('/?')) return mainHome(req, reply, s);
      throw notFound();
    }
    if (wantsData(req)) return answerDataQuery(req, reply, s); // `?data=<rules>`: the public data API
    const path = decodeRequestPath(req.url);
    if (path.startsWith('/_/')) throw notFound();
    // A neighbour's frame: whoever the cookies say, the caller is a visitor, and hyperclayjs's own
    // `?editmode=true` (which outranks the cookie) is not the neighbour's to set.
    const framed = framedByAnotherOrigin(req.headers);
    const unforced = framed ? withoutEditMode(req.url) : null;
    if (unforced !== null) return reply.header('cache-control', 'no-store').redirect(unforced, 302);
    // The owner, signed in on the main app, opening their host with no session here yet.
    const bounce = framed ? null : bounceToMainApp(req, reply, s);
    if (bounce) return bounce;
    // Taken before storage is read: an event arriving meanwhile voids it.
    const ticket = framed
      ? null
      : req.caller.actor
        ? s.hot.personalTicket(req, site.accountId, req.caller)
        : s.hot.ticket(req, site.accountId);
    const asked: Asked = { framed, ticket, host: site.accountId, path };
    const view = await viewDocument(framed ? asVisitor(req.ctx) : req.ctx, {
      host: site.accountId,
      path,
      shareToken: framed ? undefined : tokenParamOf(req),
      asks: { pageLoad: isPageLoad(req), wantsHtml: wantsHtml(req), subresource: isSubresource(req) },
    });
    return present(req, reply, view, asked);
  };

  function present(req: Req, reply: FastifyReply, view: View, asked: Asked) {
    const base = s.config.baseUrl;
    switch (view.kind) {
      case 'last':
        return serveLast(req, reply, view.last, asked.framed);
      case 'share-link':
        return shareLinkVisit(req, reply, view.node, view.token);
      case 'no-home':
        return sendPage(reply, noHomePage({ base, username: view.username, pathname: asked.path }), 404);
      case 'nothing-here': {
        const page = { base, username: view.username, pathname: asked.path, own404: view.own404 };
        return sendPage(reply, nothingHere(page), 404);
      }
      case 'redirect': {
        // A renamed or moved document: its old address leads to it (query kept).
        const q = req.url.indexOf('?');
        const rest = view.rest ? `/${view.rest.split('/').map(encodeURIComponent).join('/')}` : '';
        const to = `${nodeUrlPath(view.node)}${rest}`;
        return reply.header('cache-control', 'no-cache').redirect(q === -1 ? to : to + req.url.slice(q), 302);
      }
      case 'upload':
        return serveUpload(req, reply, s, view.node);
      case 'document':
        return presentDocument(req, reply, view, asked);
    }
  }

  async function presentDocument(req: Req, reply: FastifyReply, view: DocumentView, asked: Asked) {
    const { node } = view;
    const { framed } = asked;
    pageCookies(req, reply, view, framed);
    // A neighbour's frame is never stored: a history navigation would show it again without asking,
    // reading whatever edit cookie the jar holds by then. The owner's page (the toolbar's tag) is theirs
    // alone, and so is its 304, which refreshes what the browser stored.
    reply.header(
      'cache-control',
      framed ? 'no-store' : view.toolbar || node.visibility === 'private' ? 'private, no-cache' : 'no-cache',
    );
    if (view.toolbar) reply.header('vary', 'Cookie');
    reply.header('x-content-type-options', 'nosniff');
    servesAccountContent(reply);
    if (framed && (await sandboxed(req, node))) withoutItsOrigin(reply);
    // The owner's markers render only under the owner's own pages; a document may forbid framing by others.
    if (view.saver || node.forbid_framing === 1) framedOnlyBySelf(reply);
    // What the hot path may keep: a visitor's 200 (no toolbar, no cookie), or this signed-in person's answer.
    const ticket = asked.ticket;
    const keep = ticket && (ticket.person ? view.personsAnswer : view.visitorsAnswer) ? ticket : null;
    // A neighbour's frame gets the bytes in full: the browser's copy for this URL may be the owner's.
    if (!framed && !view.notFound && node.checksum && ifNoneMatchHits(req.headers['if-none-match'], node.checksum)) {
      if (keep?.person) req.hotKeep = { ticket: keep, node, checksum: node.checksum };
      return reply.code(304).header('etag', `"${node.checksum}"`).send();
    }
    const content = await documentContent(s, node);
    if (!content) throw notFound();
    if (!view.shareGuest && !framed)
      rememberServed(s, { accountId: asked.host, pathname: asked.path }, node, content.checksum, view.forAll);
    if (keep) req.hotKeep = { ticket: keep, node, checksum: content.checksum };
    // An account's own 404.html answers missing paths with status 404 (the root fallback with 200). The
    // ETag stays the stored bytes' (saves send it as If-Match), the toolbar or not.
    reply
      .code(view.notFound ? 404 : 200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('etag', `"${content.checksum}"`);
    if (!view.toolbar) return reply.send(content.bytes);
    const { unconfirmedEmail, appUser } = view.toolbar;
    const pieces = withToolbar(
      content.bytes,
      toolbarTag(childPathOf(node), s.config.baseUrl, {
        etag: content.checksum,
        confirm: unconfirmedEmail,
        appUser,
      }),
    );
    if (req.hotKeep) req.hotKeep.pieces = pieces;
    return sendPieces(reply, pieces);
  }

  /** Cookies for the page's script: edit controls for whoever may save; never `false` (some editors treat
   *  any value as "editable"), so a non-owner's stale cookie is removed instead. The browser's cookies are
   *  one jar for every tab and frame of this host: only a top-level load sets the edit cookie (a frame could
   *  be under a neighbour's page), and a neighbour's frame sets none of its own. */
  function pageCookies(req: Req, reply: FastifyReply, view: DocumentView, framed: boolean) {
    const cookieOpts = { path: '/', httpOnly: false, sameSite: 'lax' as const, secure: s.config.secure };
    if (view.saver && !isFrameLoad(req.headers)) reply.setCookie(ADMIN_COOKIE, 'true', cookieOpts);
    else if (!view.saver && req.cookies[ADMIN_COOKIE] !== undefined) reply.clearCookie(ADMIN_COOKIE, { path: '/' });
    const resourceName = resourceNameOf(view.node);
    if (!framed && req.cookies[RESOURCE_COOKIE] !== resourceName)
      reply.setCookie(RESOURCE_COOKIE, resourceName, cookieOpts);
  }

  /** A neighbour's frame in the browser of someone who may edit the document (or of the host's owner,
   *  signed in on the main app) runs without its origin, so it can never read an edit cookie that the
   *  owner's other tabs set meanwhile, nor save as the owner. So does a frame that no other site's page asked
   *  for (no Referer, or this host's own: a link followed inside such a sandbox comes without cookies or
   *  Referer, under the same neighbour's page). An ordinary embed keeps its origin. The browser's own
   *  caller (not the visitor the page is answered as) is asked whether they may save. */
  async function sandboxed(req: Req, node: NodeRow): Promise<boolean> {
    return (
      !referredByAnotherOrigin(req.headers) || (await req.ctx.nodes.may(node, 'save')) || hintNamesThisHost(req, s)
    );
  }

  /** While the database is away: the public document this URL served last, as a visitor sees it. */
  function serveLast(
    req: Req,
    reply: FastifyReply,
    last: { bytes: Buffer; checksum: string; forbidFraming: boolean },
    framed: boolean,
  ) {
    servesAccountContent(reply).header('cache-control', framed ? 'no-store' : 'no-cache');
    // Who the cookies name is not known while the database is away: any cookie counts.
    if (framed && (req.headers.cookie !== undefined || !referredByAnotherOrigin(req.headers))) withoutItsOrigin(reply);
    if (last.forbidFraming) framedOnlyBySelf(reply);
    if (framed && req.cookies[ADMIN_COOKIE] !== undefined) reply.clearCookie(ADMIN_COOKIE, { path: '/' });
    if (!framed && ifNoneMatchHits(req.headers['if-none-match'], last.checksum))
      return reply.code(304).header('etag', `"${last.checksum}"`).send();
    return reply
      .code(200)
      .header('x-content-type-options', 'nosniff')
      .header('content-type', 'text/html; charset=utf-8')
      .header('etag', `"${last.checksum}"`)
      .send(last.bytes);
  }

  /** `?token=<share token>` (valid: the use case checked it): sets the share cookie and sends the browser to
   *  the same URL without the token (so it leaves the address bar and Referer). */
  function shareLinkVisit(req: Req, reply: FastifyReply, node: NodeRow, token: string) {
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
  const route = { schema: { querystring: QUERY } };
  app.get('/', route, handler);
  app.get('/*', route, handler);
};
export default plugin;

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
