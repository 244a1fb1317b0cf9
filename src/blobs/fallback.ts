// A store that reads what it lacks from another: after switching BLOB_STORE away from the filesystem,
// uploads made before are still served from DATA_DIR/blobs until `kiln blobs migrate` has copied them
// (so the switch never interrupts reads). Writes, listings and deletes are the primary's only.
import type { BlobListing, BlobStore, ByteRange } from './store.ts';

export class FallbackBlobStore implements BlobStore {
  readonly kind = 'fallback' as const;
  readonly primary: BlobStore;
  private readonly older: BlobStore;
  constructor(primary: BlobStore, older: BlobStore) {
    this.primary = primary;
    this.older = older;
  }

  put(bytes: Buffer) {
    return this.primary.put(bytes);
  }
  async get(name: string) {
    return (await this.primary.get(name)) ?? this.older.get(name);
  }
  async stream(name: string, range?: ByteRange) {
    return (await this.primary.stream(name, range)) ?? this.older.stream(name, range);
  }
  async has(name: string) {
    return (await this.primary.has(name)) || this.older.has(name);
  }
  async storedAt(name: string) {
    return (await this.primary.storedAt(name)) ?? this.older.storedAt(name);
  }
  delete(name: string) {
    return this.primary.delete(name);
  }
  list(): AsyncIterable<BlobListing> {
    return this.primary.list();
  }
  reachable() {
    return this.primary.reachable();
  }
  async close() {
    await Promise.all([this.primary.close(), this.older.close()]);
  }
}
