// Content-addressed blob store for uploads: a blob's name is the SHA-256 of its bytes. Three adapters
// behind this one interface, chosen once at start (src/blobs/open.ts): the filesystem (default),
// PostgreSQL (chunks in their own table) and any S3-compatible store.
import type { Readable } from 'node:stream';

/** Bytes `start` to `end`, both included (as an HTTP Range names them). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobListing {
  name: string;
  /** When the blob was last written (a put of bytes already there writes this again). */
  storedAt: Date;
}

export interface BlobStore {
  readonly kind: 'filesystem' | 'postgres' | 's3' | 'fallback';
  /** Stores bytes durably (before this resolves) and returns their SHA-256 name. Idempotent: storing
   *  bytes that are there renews their `storedAt`, so a sweep spares a blob that was just named again. */
  put(bytes: Buffer): Promise<string>;
  get(name: string): Promise<Buffer | null>;
  /** The bytes as a stream (all, or one range), read in chunks; null when there is no such blob. */
  stream(name: string, range?: ByteRange): Promise<Readable | null>;
  has(name: string): Promise<boolean>;
  /** When the blob was last written, or null when there is none. */
  storedAt(name: string): Promise<Date | null>;
  delete(name: string): Promise<void>;
  /** Every blob, in no particular order. */
  list(): AsyncIterable<BlobListing>;
  /** True when the store answers now (for /_/ready). */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
}

export const BLOB_NAME = /^[0-9a-f]{64}$/;
