// What the keys and teams pages share: the gate every page passes, and how a form post is answered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../../services.ts';
import type { Actor } from '../../../access/actor.ts';
import { KilnError } from '../../../errors.ts';
import { authorizeActor } from '../../../access/authorize.ts';
import { assertSameOrigin } from '../../origin.ts';
import { withMessage } from '../../messages.ts';
import { wantsHtml } from '../../io.ts';

export const KEYS = '/_/dashboard/keys';
export const TEAMS = '/_/dashboard/teams';

/** A signed-in developer on the main app (strangers go to the login page, app users get 403). */
export function developer(req: FastifyRequest, write: boolean): Actor {
  if (write) assertSameOrigin(req);
  return authorizeActor({ actor: req.actor }, null, 'manage');
}

export interface Outcome {
  msg: string;
  extra?: Record<string, unknown>;
}

/** Runs a POST: browsers are sent back to `back` with the outcome (a refusal too), programs get JSON. */
export async function operate(
  s: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  back: string,
  op: (actor: Actor) => Promise<Outcome>,
) {
  let result: Outcome;
  try {
    result = await op(developer(req, true));
  } catch (err) {
    if (wantsHtml(req) && err instanceof KilnError && err.status !== 401 && req.site.kind === 'main') {
      return reply.redirect(withMessage(s.secret, back, err.message, 'error'), 302);
    }
    throw err;
  }
  if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, back, result.msg, 'success'), 302);
  return reply.send({ msg: result.msg, msgType: 'success', ...result.extra });
}
