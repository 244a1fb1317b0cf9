// How an answer is shaped: browsers (by Accept) get a page or a 302 carrying msg/msgType/return;
// AJAX and programs get JSON {msg, msgType, ...}.
import type { FastifyReply, FastifyRequest } from 'fastify';

export function wantsHtml(req: FastifyRequest): boolean {
  if (req.headers['x-requested-with']) return false;
  const accept = req.headers.accept ?? '';
  return accept.includes('text/html');
}

/** Adds msg/msgType (and return) to a local URL as query parameters. */
export function withMessage(url: string, msg: string, msgType: 'success' | 'error', returnTo?: string): string {
  const u = new URL(url, 'http://x');
  u.searchParams.set('msg', msg);
  u.searchParams.set('msgType', msgType);
  if (returnTo) u.searchParams.set('return', returnTo);
  return u.pathname + u.search;
}

/** A success answer: JSON for programs, a redirect for browsers. */
export function done(
  req: FastifyRequest,
  reply: FastifyReply,
  msg: string,
  opts: { redirect?: string; extra?: Record<string, unknown>; status?: number } = {},
) {
  if (opts.redirect && wantsHtml(req)) return reply.redirect(withMessage(opts.redirect, msg, 'success'), 302);
  return reply.code(opts.status ?? 200).send({ msg, msgType: 'success', ...opts.extra });
}

/** Only local paths may be used as `return` targets (no open redirects). */
export function safeReturn(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return fallback;
  return value;
}
