// Messages a redirect carries to the next page (`?msg=…&msgType=…&sig=…`): only Kiln can issue them.
// Anyone can craft a link to a Kiln page with `?msg=Your account is locked, call …`; so the banner is
// shown only when `sig` verifies: HMAC-SHA256 with the instance secret (`s.secret`, the same in every
// process) over the path the message was issued for, its type and its text, truncated to 128 bits,
// base64url. A signed message moved to another page, or with another type or text, shows nothing.
//
// Every request carries the secret as `req.messageSecret` (set up once by `registerMessages`), so the
// form helpers (`queryMsg`, `formPost`) and `done` need nothing more than the request.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Msg } from '../ui/pages.ts';

export type MsgType = 'success' | 'error';

/** Bytes of the HMAC kept in `sig`. */
const SIG_BYTES = 16;
/** Longest message shown (longer ones are cut when shown; the signature covers the whole text). */
const MAX_SHOWN = 500;

declare module 'fastify' {
  interface FastifyRequest {
    /** The instance secret that signs and verifies `?msg=` banners. */
    messageSecret: Buffer;
  }
}

/** Makes the instance secret reachable from every request of the app as `req.messageSecret`. */
export function registerMessages(app: FastifyInstance, secret: Buffer): void {
  app.decorateRequest('messageSecret', {
    getter() {
      return secret;
    },
  });
}

/** The signature of a message issued for `path` (a URL path, no query). */
function signMessage(secret: Buffer, path: string, msgType: MsgType, msg: string): string {
  return createHmac('sha256', secret)
    .update(`kiln-msg\n${path}\n${msgType}\n${msg}`)
    .digest()
    .subarray(0, SIG_BYTES)
    .toString('base64url');
}

/** Adds a signed msg/msgType/sig (and return) to a local URL as query parameters. */
export function withMessage(secret: Buffer, url: string, msg: string, msgType: MsgType, returnTo?: string): string {
  const u = new URL(url, 'http://x');
  u.searchParams.set('msg', msg);
  u.searchParams.set('msgType', msgType);
  u.searchParams.set('sig', signMessage(secret, u.pathname, msgType, msg));
  if (returnTo) u.searchParams.set('return', returnTo);
  return u.pathname + u.search;
}

/** The message this request's query carries, only when Kiln issued it for this page; else undefined. */
export function verifiedMessage(secret: Buffer, req: FastifyRequest): Msg | undefined {
  const q = (req.query ?? {}) as Record<string, unknown>;
  const { msg, msgType, sig } = q;
  if (typeof msg !== 'string' || msg === '' || typeof sig !== 'string') return undefined;
  if (msgType !== 'success' && msgType !== 'error') return undefined;
  let path: string;
  try {
    path = new URL(req.url, 'http://x').pathname;
  } catch {
    return undefined;
  }
  const expected = Buffer.from(signMessage(secret, path, msgType, msg), 'base64url');
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return { text: msg.slice(0, MAX_SHOWN), type: msgType };
}
