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
  /** "Connect an agent": the key's name, read or write, the account it reaches (its id), a folder of it or
   *  none, and how many days it lasts (the use case judges each: src/agents/keys.ts). */
  agentKey: z.object({
    name: z.string().max(limits.agentKeys.nameLength * 2),
    access: z.enum(['read', 'write']),
    account: z.coerce.number().int().positive(),
    folder: z.string().max(limits.pathLength).optional(),
    days: z.coerce.number().int().default(limits.agentKeys.defaultDays),
  }),
};

export const queries = {
  /** `versions=1` once: with every version (anything else, or given twice: without). */
  export: z.object({ versions: z.literal('1').optional().catch(undefined) }),
};
