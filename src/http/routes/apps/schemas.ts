// What the app pages read: the app's path (body or query) and each form's body. A refused field answers
// 400 `too-long` past its bound, else `invalid` (parse, src/http/io.ts); a required one left out is the
// handler's 400 `missing-field`, in the form's own words.
// The schemas are declared on the routes; a form's refusal goes back to it (attachValidation + formPost).
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { limits } from '../../../limits.ts';
import { optionalText } from '../../io.ts';

/** Which app a page is for: `app` in the body of a POST, else in the query. */
export const appRef = z.object({ app: optionalText(limits.pathLength) });

/** A page's query: the app, with the page's own signed message (`msg`) riding along. */
export const pageQuery = z.looseObject({ app: optionalText(limits.pathLength) });

/** A mailed link's token (its shape is judged by the page: src/http/routes/apps/shared.ts tokenOf). */
export const tokenParams = z.object({ token: z.string() });

/** Each form's body; `app` stays in it (which app the form is for). */
export const bodies = {
  signup: z.looseObject({
    email: optionalText(limits.emailLength),
    password: optionalText(limits.password.maxLength),
    /** Empty: one is generated. */
    username: optionalText(limits.usernameLength.max).transform((v) => v?.trim() || undefined),
  }),
  /** `email` or, without one, `username`. */
  login: z.looseObject({
    email: optionalText(limits.emailLength),
    username: optionalText(limits.usernameLength.max),
    password: optionalText(limits.password.maxLength),
  }),
  resetRequest: z.looseObject({ email: optionalText(limits.emailLength) }),
  newPassword: z.looseObject({ password: optionalText(limits.password.maxLength) }),
  confirm: z.looseObject({}),
};

/** The body as the route's schema parsed it (Fastify ran it before the handler; a refusal reached the form
 *  through formPost, so here it passed). */
export const bodyOf = <T extends z.ZodType>(_schema: T, req: FastifyRequest) => req.body as z.output<T>;
