// Cross-origin write protection. Cookies are shared by every document host under the root domain,
// so a script on bob.<root> could otherwise post into alice.<root> with alice's cookie.
import type { FastifyRequest } from 'fastify';
import { forbidden } from '../errors.ts';

/** Throws 403 unless the request comes from a page of the same origin (or from a non-browser client). */
export function assertSameOrigin(req: FastifyRequest): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw forbidden('Cross-origin writes are not allowed.', 'cross-origin');
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      throw forbidden('Cross-origin writes are not allowed.', 'cross-origin');
    }
    if (host.toLowerCase() !== (req.headers.host ?? '').toLowerCase()) {
      throw forbidden('Cross-origin writes are not allowed.', 'cross-origin');
    }
  }
}
