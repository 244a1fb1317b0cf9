// Content-addressed blob store for uploads: a blob's name is the SHA-256 of its bytes.
import type { Readable } from 'node:stream';

export interface BlobStore {
  /** Stores bytes durably (before this resolves) and returns their SHA-256 name. Idempotent. */
  put(bytes: Buffer): Promise<string>;
  get(sha256: string): Promise<Buffer | null>;
  stream(sha256: string): Readable | null;
  has(sha256: string): Promise<boolean>;
}
