// Login tokens: random, kept server-side as a SHA-256 hash, 30 days, revocable.
import type { Db } from '../store/schema.ts';
import { randomToken } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { limits } from '../limits.ts';

export async function createSession(db: Db, accountId: number, now: Date): Promise<{ token: string; expiresAt: Date }> {
  const token = randomToken(32);
  const expiresAt = new Date(now.getTime() + limits.loginTokenLifetimeMs);
  await db
    .insertInto('sessions')
    .values({ token_hash: sha256(token), account_id: accountId, created_at: now.toISOString(), expires_at: expiresAt.toISOString(), revoked_at: null })
    .execute();
  return { token, expiresAt };
}

export async function revokeSession(db: Db, token: string, now: Date): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: now.toISOString() }).where('token_hash', '=', sha256(token)).execute();
}
