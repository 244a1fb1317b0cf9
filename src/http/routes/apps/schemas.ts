// What the app pages read: the app's path (body or query) and each form's body. A refused field answers
// 400 `too-long` past its bound, else `invalid` (parse, src/http/io.ts); a required one left out is the
// handler's 400 `missing-field`, in the form's own words.
import { z } from 'zod';
import { limits } from '../../../limits.ts';
import { optionalText } from '../../io.ts';

/** Which app a page is for: `app` in the body of a POST, else in the query. */
export const appRef = z.object({ app: optionalText(limits.pathLength) });

export const bodies = {
  signup: z.object({
    email: optionalText(limits.emailLength),
    password: optionalText(limits.password.maxLength),
    /** Empty: one is generated. */
    username: optionalText(limits.usernameLength.max).transform((v) => v?.trim() || undefined),
  }),
  /** `email` or, without one, `username`. */
  login: z.object({
    email: optionalText(limits.emailLength),
    username: optionalText(limits.usernameLength.max),
    password: optionalText(limits.password.maxLength),
  }),
  resetRequest: z.object({ email: optionalText(limits.emailLength) }),
  newPassword: z.object({ password: optionalText(limits.password.maxLength) }),
};
