// What the account pages read. A refused field answers 400 `too-long` past its bound, else `invalid`
// (parse, src/http/io.ts); the use cases judge what the text says (src/accounts/account.ts).
import { z } from 'zod';
import { flag } from '../../io.ts';
import { limits } from '../../../limits.ts';

const password = z.string().max(limits.password.maxLength);

export const bodies = {
  password: z.object({ current: password, password }),
  username: z.object({ username: z.string().max(limits.usernameLength.max * 2), password }),
  email: z.object({ email: z.string().max(limits.emailLength), password }),
  delete: z.object({
    confirm: z.string().max(limits.usernameLength.max * 2),
    password,
    exportFirst: flag.default(false),
  }),
  reset: z.object({ email: z.string().max(limits.emailLength) }),
  newPassword: z.object({ password }),
};

export const queries = {
  /** `versions=1` once: with every version (anything else, or given twice: without). */
  export: z.object({ versions: z.literal('1').optional().catch(undefined) }),
};
