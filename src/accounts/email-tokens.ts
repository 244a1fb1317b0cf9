// One-time email tokens (confirm an address, reset a password, finish a paid checkout): random,
// kept only as a SHA-256 hash, expiring, used once.
import type { Services } from '../services.ts';
import type { EmailTokensTable } from '../store/schema.ts';
import { randomToken } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { DAY } from '../limits.ts';

export type EmailTokenPurpose = EmailTokensTable['purpose'];

const LIFETIME: Record<EmailTokenPurpose, number> = {
  confirm: 7 * DAY,
  reset: DAY / 24,
  checkout: 30 * DAY,
  invite: 14 * DAY,
  'email-change': DAY,
};

export async function createEmailToken(
  s: Services,
  o: { accountId: number | null; email: string; purpose: EmailTokenPurpose },
): Promise<string> {
  const token = randomToken(32);
  const now = s.clock.now();
  await s.database.db
    .insertInto('email_tokens')
    .values({
      token_hash: sha256(token),
      account_id: o.accountId,
      email: o.email,
      purpose: o.purpose,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + LIFETIME[o.purpose]).toISOString(),
      used_at: null,
    })
    .execute();
  return token;
}

/** The unused, unexpired token row for `purpose`, or undefined. Does not use it up. */
export async function findEmailToken(s: Services, token: string, purpose: EmailTokenPurpose) {
  if (!token || token.length > 200) return undefined;
  return s.database.db
    .selectFrom('email_tokens')
    .selectAll()
    .where('token_hash', '=', sha256(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', s.clock.now().toISOString())
    .executeTakeFirst();
}

/** Uses a token up (once: false when it was used meanwhile). */
export async function useEmailToken(s: Services, id: number): Promise<boolean> {
  const r = await s.database.db
    .updateTable('email_tokens')
    .set({ used_at: s.clock.now().toISOString() })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
