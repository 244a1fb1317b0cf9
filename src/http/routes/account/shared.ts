// What the account pages share: the gate every page passes, the page drawn again with a refusal, and
// closing the streams of ended sign-ins.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../../services.ts';
import type { Msg } from '../../../ui/pages.ts';
import { signedIn } from '../../../nodes/manage.ts';
import { grants, revokeGrants } from '../../../events/revocations.ts';
import { PLAN_NAMES } from '../../../billing/plans.ts';
import { accountPage } from '../../../ui/account.ts';
import { assertSameOrigin } from '../../origin.ts';

export const ACCOUNT = '/_/account';

/** A signed-in developer (app users and strangers are refused by the access table). */
export function developer(req: FastifyRequest, write: boolean) {
  if (write) assertSameOrigin(req);
  return signedIn(req.ctx, 'manage');
}

/** The route options of a developer's change: `developer` runs before the body's schema (who is asking
 *  answers first: 401, 403 cross-origin), and a refused field goes back to the form (formPost). */
export const developerForm = <B extends z.ZodType>(body: B) => ({
  schema: { body },
  attachValidation: true,
  preValidation: async (req: FastifyRequest) => {
    developer(req, true);
  },
});

/** The body a form route's schema parsed (formPost's handlers are untyped). */
export const formBody = <B extends z.ZodType>(_schema: B, req: FastifyRequest) => req.body as z.output<B>;

/** A row's id in the path: a malformed one is no such row (0: 404, as an unknown one). */
export const idParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number)
    .catch(0),
});

/** Streams opened with these (now ended) sessions close. */
export const ended = (s: Services, ids: number[]) => revokeGrants(s, ids.map(grants.session));

/** The page itself, with a refusal in words (a form post that failed). */
export function renderAccount(req: FastifyRequest, msg: Msg): string {
  const me = req.ctx.caller.actor;
  return accountPage({
    username: me?.username ?? '',
    email: me?.email ?? '',
    plan: me ? PLAN_NAMES[me.plan] : '',
    logins: [],
    msg,
  });
}
