// Counts the blob store's failures (kiln_blob_store_errors_total), then passes them on unchanged.
import type { Counter } from 'prom-client';
import type { BlobListing, BlobStore, ByteRange } from './store.ts';

export class MeteredBlobStore implements BlobStore {
  readonly inner: BlobStore;
  private readonly errors: Counter<'op'>;
  constructor(inner: BlobStore, errors: Counter<'op'>) {
    this.inner = inner;
    this.errors = errors;
  }

  get kind() {
    return this.inner.kind;
  }

  private async count<T>(op: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      this.errors.inc({ op });
      throw err;
    }
  }

  put(bytes: Buffer) {
    return this.count('put', () => this.inner.put(bytes));
  }
  get(name: string) {
    return this.count('get', () => this.inner.get(name));
  }
  stream(name: string, range?: ByteRange) {
    return this.count('stream', () => this.inner.stream(name, range));
  }
  has(name: string) {
    return this.count('has', () => this.inner.has(name));
  }
  storedAt(name: string) {
    return this.count('storedAt', () => this.inner.storedAt(name));
  }
  delete(name: string) {
    return this.count('delete', () => this.inner.delete(name));
  }
  list(): AsyncIterable<BlobListing> {
    return this.inner.list();
  }
  async reachable() {
    const ok = await this.inner.reachable();
    if (!ok) this.errors.inc({ op: 'reachable' });
    return ok;
  }
  close() {
    return this.inner.close();
  }
}
