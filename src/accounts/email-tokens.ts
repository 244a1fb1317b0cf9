// One-time email tokens (confirm an address, reset a password, finish a paid checkout): random,
// kept only as a SHA-256 hash, expiring, used once.
import type { Services } from '../services.ts';
import type { EmailTokensTable } from '../store/schema.ts';
import { randomToken } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { DAY } from '../limits.ts';
import { insertEmailToken, markEmailTokenUsed, pendingEmailToken } from '../store/email-tokens.ts';

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
  await insertEmailToken(s.database.db, {
    token_hash: sha256(token),
    account_id: o.accountId,
    email: o.email,
    purpose: o.purpose,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + LIFETIME[o.purpose]).toISOString(),
    used_at: null,
  });
  return token;
}

/** The unused, unexpired token row for `purpose`, or undefined. Does not use it up. */
export async function findEmailToken(s: Services, token: string, purpose: EmailTokenPurpose) {
  if (!token || token.length > 200) return undefined;
  return pendingEmailToken(s.database.db, sha256(token), purpose, s.clock.now().toISOString());
}

/** Uses a token up (once: false when it was used meanwhile). */
export async function useEmailToken(s: Services, id: number): Promise<boolean> {
  return markEmailTokenUsed(s.database.db, id, s.clock.now().toISOString());
}
