// One-time links (confirm an address, reset a password, finish a checkout, join a team): a random token
// that is mailed and kept only as its SHA-256 hash, expiring, used once. The one place for their shape;
// each kind's store keeps its rows and marks one used at most once.
import { randomToken } from '../clock.ts';
import { sha256 } from './checksum.ts';

/** Longer presented tokens are not looked up (ours are 43 characters). */
const MAX_PRESENTED = 200;

/** A new token to mail, and the columns its row keeps (never the token itself). */
export function newOneTimeToken(now: Date, lifetimeMs: number) {
  const token = randomToken(32);
  return {
    token,
    row: {
      token_hash: sha256(token),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + lifetimeMs).toISOString(),
      used_at: null,
    },
  };
}

/** The hash a presented token is looked up by; null for one that cannot be ours. */
export function presentedTokenHash(token: string): string | null {
  return token && token.length <= MAX_PRESENTED ? sha256(token) : null;
}
