import { hash } from 'node:crypto';

/** SHA-256 hex of bytes (one-shot: no Hash object per call; every signed-in request hashes its token). */
export function sha256(bytes: Uint8Array | string): string {
  return hash('sha256', bytes, 'hex');
}

/** The document checksum and ETag: first 16 hex chars of the SHA-256 of the stored bytes
 *  (what the Hyperclay Local sync engine computes for its local files). */
export function checksum(bytes: Uint8Array | string): string {
  return checksumOfHash(sha256(bytes));
}

/** True for a string shaped as a checksum (an ETag's value, without its quotes). */
export const isChecksum = (s: string): boolean => /^[0-9a-f]{16}$/.test(s);

/** The checksum of bytes whose SHA-256 hex is known. */
export function checksumOfHash(sha256Hex: string): string {
  return sha256Hex.slice(0, 16);
}
