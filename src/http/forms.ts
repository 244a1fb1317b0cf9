// Server-rendered forms: reading their fields, showing the msg/msgType a redirect carries (only when
// Kiln signed it: src/http/messages.ts), and answering a form POST's refusals by sending the browser
// back to its form.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { KilnError, badRequest } from '../errors.ts';
import { wantsHtml } from './answers.ts';
import { verifiedMessage, withMessage } from './messages.ts';
import type { Msg } from '../ui/pages.ts';

export type Fields = Record<string, unknown>;

export function bodyOf(req: FastifyRequest): Fields {
  const b = req.body;
  return b && typeof b === 'object' && !Array.isArray(b) && !Buffer.isBuffer(b) ? (b as Fields) : {};
}

export function queryOf(req: FastifyRequest): Fields {
  return (req.query ?? {}) as Fields;
}

/** A bounded text field, or undefined when absent or empty. Non-text values and oversized ones are 400. */
export function field(fields: Fields, name: string, label: string, max: number): string | undefined {
  const v = fields[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`${label} must be text.`, 'invalid');
  if (v.length > max) throw badRequest(`${label} must be at most ${max} characters.`, 'too-long');
  return v;
}

/** The message a redirect carried in `msg`/`msgType`, only when Kiln issued it for this page (its
 *  `sig` verifies); bounded. The one reader of `?msg=` for every page. */
export function queryMsg(req: FastifyRequest): Msg | undefined {
  return verifiedMessage(req.messageSecret, req);
}

export function sendPage(reply: FastifyReply, body: string, status = 200) {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
}

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Wraps a form POST: a browser's 400/401/409 goes back to its form (`back`) with the message, a 429
 *  gets the form page with Retry-After; everything else reaches the app's error handler (JSON for AJAX). */
export function formPost(
  back: (req: FastifyRequest, status: number) => string,
  render: (req: FastifyRequest, msg: Msg) => string,
  handler: Handler,
  opts: { sendPage?: typeof sendPage; returnTo?: (req: FastifyRequest) => string | undefined } = {},
): Handler {
  const send = opts.sendPage ?? sendPage;
  return async (req, reply) => {
    try {
      return await handler(req, reply);
    } catch (err) {
      if (!(err instanceof KilnError) || !wantsHtml(req)) throw err;
      if (err.status === 429) {
        reply.header('Retry-After', String(err.extra?.retryAfter ?? 60));
        return send(reply, render(req, { text: err.message, type: 'error' }), 429);
      }
      if (err.status === 400 || err.status === 401 || err.status === 409) {
        return reply.redirect(
          withMessage(req.messageSecret, back(req, err.status), err.message, 'error', opts.returnTo?.(req)),
          302,
        );
      }
      throw err;
    }
  };
}

/** A main-app form POST refused: the browser goes back to `page` with the refusal in words (sign-in
 *  pages and 429s keep their own answers; programs get the error handler's JSON). Null when `err` is
 *  not answered this way: rethrow it. */
export function backWithRefusal(
  req: FastifyRequest,
  reply: FastifyReply,
  err: unknown,
  page: string,
): FastifyReply | null {
  if (!(err instanceof KilnError) || !wantsHtml(req) || err.status === 401 || err.status === 429) return null;
  if (req.site.kind !== 'main') return null;
  return reply.redirect(withMessage(req.messageSecret, page, err.message, 'error'), 302);
}
