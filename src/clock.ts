// Time and randomness come from here only, so tests can control them.
import { randomBytes } from 'node:crypto';

export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

/** Hex string of `bytes` random bytes. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
/** URL-safe random token of `bytes` random bytes. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
