// One-time email tokens (confirm an address, reset a password, finish a paid checkout): their
// lifetimes (the token's shape: src/core/one-time-token.ts).
import type { Services } from '../services.ts';
import type { EmailTokensTable } from '../store/schema.ts';
import { newOneTimeToken, presentedTokenHash } from '../core/one-time-token.ts';
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
  const { token, row } = newOneTimeToken(s.clock.now(), LIFETIME[o.purpose]);
  await insertEmailToken(s.database.db, { ...row, account_id: o.accountId, email: o.email, purpose: o.purpose });
  return token;
}

/** The unused, unexpired token row for `purpose`, or undefined. Does not use it up. */
export async function findEmailToken(s: Services, token: string, purpose: EmailTokenPurpose) {
  const hash = presentedTokenHash(token);
  return hash ? pendingEmailToken(s.database.db, hash, purpose, s.clock.now().toISOString()) : undefined;
}

/** Uses a token up (once: false when it was used meanwhile). */
export async function useEmailToken(s: Services, id: number): Promise<boolean> {
  return markEmailTokenUsed(s.database.db, id, s.clock.now().toISOString());
}
