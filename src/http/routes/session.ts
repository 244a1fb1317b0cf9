// The handshake that carries a login from the main app to one document host (src/http/sessions.ts):
//   GET /_/session/start?host=<document host>&return=<path>[&auto=1]   main app
//   GET /_/session?grant=<single-use grant>&return=<path>               document hosts
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import { redeemGrant } from '../../accounts/sessions.ts';
import { clearHintCookie, setSessionCookie } from '../cookies.ts';
import { hostnameOf } from '../hosts.ts';
import { documentHostNamed, grantUrl } from '../sessions.ts';
import { hostOrigin } from '../../core/urls.ts';
import { MAX_RETURN, returnPathOf, sendPage } from '../io.ts';
import { errorPage } from '../../ui/pages.ts';

const GRANT_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A query field given once, as text of this shape; anything else is left out. */
const lenient = <T extends z.ZodType<string>>(shape: T) => shape.optional().catch(undefined);

/** The handshake never refuses a query: a field of the wrong shape is left out (no `return`: the home
 *  page; no `host`: 404; no `grant`: no session). */
const queries = {
  start: z.object({
    host: lenient(z.string().max(300)),
    return: lenient(z.string().max(MAX_RETURN)),
    auto: lenient(z.literal('1')),
  }),
  session: z.object({
    grant: lenient(z.string().regex(GRANT_SHAPE)),
    return: lenient(z.string().max(MAX_RETURN)),
  }),
};

const plugin: RoutePlugin = async (app, { services: s }) => {
  const start = { config: { host: 'main' as const }, schema: { querystring: queries.start } };
  app.get('/_/session/start', start, async (req, reply) => {
    const q = req.query;
    const returnPath = returnPathOf(q.return) ?? '/';
    const site = await documentHostNamed(s, q.host);
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    const page = hostOrigin(s.config, site) + returnPath;
    const actor = req.caller.actor;
    if (!actor) {
      // An automatic bounce with a stale hint: forget the hint and show the page as it is.
      if (q.auto) {
        clearHintCookie(reply, s.config);
        return reply.redirect(page, 302);
      }
      const again = `/_/session/start?host=${encodeURIComponent(q.host ?? '')}&return=${encodeURIComponent(returnPath)}`;
      return reply.redirect(`/_/login?return=${encodeURIComponent(again)}`, 302);
    }
    // Who holds a session on the host is the table's `session` row: its own account, and a team's members on the
    // team's host (they act in their role: src/http/auth.ts). Anyone else visits it: a page comes as a visitor
    // sees it; Kiln's own pages there (`/_/…`: the code editor, versions), which would send them here again, say
    // why instead.
    if (await req.ctx.nodes.mayOnHost(site.accountId, 'session'))
      return reply.redirect(await grantUrl(s, actor.loginId!, site, returnPath), 302);
    if (!returnPath.startsWith('/_/')) return reply.redirect(page, 302);
    const why = `You are signed in as ${actor.username}, and ${site.username}’s documents are not yours to change. You can still open their public pages.`;
    return sendPage(reply, errorPage(403, why, { username: actor.username, base: s.config.baseUrl }), 403);
  });

  const onHost = { config: { host: 'document' as const }, schema: { querystring: queries.session } };
  app.get('/_/session', onHost, async (req, reply) => {
    const q = req.query;
    const returnPath = returnPathOf(q.return) ?? '/';
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    const now = s.clock.now();
    const session = q.grant ? await redeemGrant(s.database.db, q.grant, hostnameOf(req), now) : null;
    // A used or expired grant just leaves the visitor unsigned-in on the page.
    if (session) setSessionCookie(req, reply, s.config, session.token, session.expiresAt, now);
    return reply.redirect(returnPath, 302);
  });
};

export default plugin;
