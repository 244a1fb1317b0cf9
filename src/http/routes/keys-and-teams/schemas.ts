// What the keys and teams pages read. Names and addresses are judged by the use cases (src/teams/); a
// field that is not text answers 400 `invalid`, a role other than the three 400 `invalid-role`.
import { z } from 'zod';
import { TEAM_ROLES } from '../../../teams/teams.ts';
import type { FieldCodes } from '../../io.ts';
import { fields } from '../../schema.ts';

/** A team role; none (or empty, as a form sends it) is `editor`. */
const role = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z.enum(TEAM_ROLES, { error: `Role must be one of ${TEAM_ROLES.join(', ')}.` }).default('editor'),
);

/** Text a form may leave out (absent or null is ''): the use case answers for it. */
const text = z
  .string()
  .nullish()
  .transform((v) => v ?? '');

const codes: FieldCodes = { role: 'invalid-role' };

export const bodies = {
  team: z.object({ username: text }),
  member: fields(z.object({ role, username: text }), codes),
  invite: fields(z.object({ role, email: text }), codes),
};

export const queries = {
  /** The keys page's tab: anything but `inactive` is `active`. */
  keys: z.looseObject({ tab: z.enum(['active', 'inactive']).catch('active') }),
};
