// What the keys and teams pages share: the gate every page passes, and how a form post is answered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../../../context.ts';
import { KilnError } from '../../../errors.ts';
import { signedIn } from '../../../nodes/manage.ts';
import { assertSameOrigin } from '../../origin.ts';
import { withMessage } from '../../messages.ts';
import { wantsHtml } from '../../io.ts';

export const KEYS = '/_/dashboard/keys';
export const TEAMS = '/_/dashboard/teams';

/** A signed-in developer on the main app (strangers go to the login page, app users get 403); a change comes
 *  from the main app's own pages. Then the route's schema: a refused field after who is asking. */
export function developer(req: FastifyRequest, write: boolean) {
  if (write) assertSameOrigin(req);
  const me = signedIn(req.ctx, 'manage');
  if (req.validationError) throw req.validationError;
  return me;
}

export interface Outcome {
  msg: string;
  extra?: Record<string, unknown>;
}

/** Runs a POST: browsers are sent back to `back` with the outcome (a refusal too), programs get JSON. */
export async function operate(
  req: FastifyRequest,
  reply: FastifyReply,
  back: string,
  op: (ctx: Ctx, me: ReturnType<typeof developer>) => Promise<Outcome>,
) {
  let result: Outcome;
  try {
    result = await op(req.ctx, developer(req, true));
  } catch (err) {
    if (wantsHtml(req) && err instanceof KilnError && err.status !== 401 && req.site.kind === 'main') {
      return reply.redirect(withMessage(req.ctx.secret, back, err.message, 'error'), 302);
    }
    throw err;
  }
  if (wantsHtml(req)) return reply.redirect(withMessage(req.ctx.secret, back, result.msg, 'success'), 302);
  return reply.send({ msg: result.msg, msgType: 'success', ...result.extra });
}
