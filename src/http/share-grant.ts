// A request's share grant: the document's `share_<sitename>` cookie, or `?token=` on the request itself
// (the tokens' rules are in src/sharing/share.ts). The auth hook hands `isShareGuest` to the request's Caller
// (`caller.shareGrant`), which `ctx.nodes` judges per node.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { NodeRow } from '../store/schema.ts';
import { isValidShareToken, shareCookieName, TOKEN_PARAM } from '../sharing/share.ts';
import { limits } from '../limits.ts';

/** The `?token=` of this request, if any. */
export function tokenParamOf(req: FastifyRequest): string | undefined {
  const v = (req.query as Record<string, unknown> | undefined)?.[TOKEN_PARAM];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

/** True when this request holds a valid share grant for the document: its `share_<sitename>` cookie,
 *  or a `?token=` on the request itself. Sync: the node row (read fresh by the route) holds all it
 *  needs, so the hot document path costs nothing when no share cookie is sent. */
export function isShareGuest(req: FastifyRequest, node: NodeRow): boolean {
  if (node.type !== 'site' || node.share_enabled !== 1 || !node.share_token) return false;
  const cookie = req.cookies?.[shareCookieName(node)];
  if (cookie !== undefined && isValidShareToken(node, cookie)) return true;
  const param = tokenParamOf(req);
  return param !== undefined && isValidShareToken(node, param);
}

/** Sets `share_<sitename>` on this host (host-only: a custom domain or one document host). */
export function setShareCookie(reply: FastifyReply, config: Config, node: NodeRow, token: string) {
  reply.setCookie(shareCookieName(node), token, {
    path: '/',
    httpOnly: true,
    secure: config.secure,
    sameSite: 'lax',
    maxAge: Math.floor(limits.shareCookieMaxAgeMs / 1000),
  });
}
