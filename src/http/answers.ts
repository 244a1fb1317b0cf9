// How an answer is shaped: browsers (by Accept) get a page or a 302 carrying a signed
// msg/msgType/sig and return (src/http/messages.ts); AJAX and programs get JSON {msg, msgType, ...}.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { withMessage } from './messages.ts';

export function wantsHtml(req: FastifyRequest): boolean {
  if (req.routeOptions?.config?.answers === 'json') return false;
  if (req.headers['x-requested-with']) return false;
  const accept = req.headers.accept ?? '';
  return accept.includes('text/html');
}

/** A success answer: JSON for programs, a redirect for browsers. */
export function done(
  req: FastifyRequest,
  reply: FastifyReply,
  msg: string,
  opts: { redirect?: string; extra?: Record<string, unknown>; status?: number } = {},
) {
  if (opts.redirect && wantsHtml(req))
    return reply.redirect(withMessage(req.messageSecret, opts.redirect, msg, 'success'), 302);
  return reply.code(opts.status ?? 200).send({ msg, msgType: 'success', ...opts.extra });
}

/** Longest `return` target accepted. */
export const MAX_RETURN = 2048;

/** Why a `return` target is refused, or null when it is a same-origin path. Refused: anything that
 *  is not a path starting with one `/`, control characters (< 0x20, 0x7f: CR, LF, tab …), backslashes,
 *  characters outside ASCII, and the same once percent-decoded (`/%2f%2fx`, `/%5cx`, `/%0d%0a…`, `/%09/x`), or undecodable. */
export function returnProblem(value: string): string | null {
  if (value.length > MAX_RETURN) return 'is too long';
  const bad = (v: string) =>
    !v.startsWith('/') || v.startsWith('//') || v.includes('\\') || /[\u0000-\u001f\u007f]/.test(v);
  if (bad(value)) return 'must be a path on this site';
  // A Location header carries ASCII only: a path with other characters must come percent-encoded.
  if (/[^\u0020-\u007e]/.test(value)) return 'must be a percent-encoded path';
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return 'is not a valid address';
  }
  if (bad(decoded)) return 'must be a path on this site';
  return null;
}

/** Only local paths may be used as `return` targets (no open redirects, no header injection). */
export function safeReturn(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || returnProblem(value) !== null) return fallback;
  return value;
}

/** A `return` value that is a safe local path, or undefined. */
export function returnPathOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= 2048 ? safeReturn(value, '') || undefined : undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `'json'`: every answer of the route, errors included, is JSON whatever the client accepts
     *  (sync clients may send `Accept: text/html`). Set for a whole plugin with `jsonAnswers`. */
    answers?: 'json';
  }
}

/** Marks every route the plugin registers after this call as answering JSON only (see above). */
export function jsonAnswers(app: import('fastify').FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), answers: 'json' };
  });
}
