// Blobs in any S3-compatible store (BLOB_STORE=s3): one object per blob under `blobs/ab/cd/<sha256>`,
// written with a multipart upload (@aws-sdk/lib-storage) so a large file goes in parts, read as a
// stream (a byte range with a ranged GET). S3 writes are atomic per object: a reader sees the whole
// blob or none. Writing bytes that are there writes them again, which renews the object's
// LastModified (what the sweep's grace period reads).
import { Transform, type Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { sha256 } from '../core/checksum.ts';
import { BLOB_NAME, type BlobListing, type BlobStore, type ByteRange } from './store.ts';
import type { BlobConfig } from '../config.ts';

const PREFIX = 'blobs/';

const isMissing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

export type S3Config = Extract<BlobConfig, { store: 's3' }>;

// The AWS SDK is imported when S3 is first used, not at every start: it costs a third of a second of
// CPU to load, and most instances keep their files on disk. (A static import would load it at start
// even from this lazily imported module: the bundle, scripts/build.ts, puts package imports at its top.)
type ClientS3 = typeof import('@aws-sdk/client-s3');
let clientS3: Promise<ClientS3> | undefined;
const loadClientS3 = () => (clientS3 ??= import('@aws-sdk/client-s3'));
let libStorage: Promise<typeof import('@aws-sdk/lib-storage')> | undefined;
const loadLibStorage = () => (libStorage ??= import('@aws-sdk/lib-storage'));

/** A client for the S3 variables (the blob store's, and the backups' to s3://). */
export async function s3Client(c: S3Config): Promise<S3Client> {
  const { S3Client } = await loadClientS3();
  return new S3Client({
    region: c.region,
    endpoint: c.endpoint,
    forcePathStyle: c.forcePathStyle,
    credentials:
      c.accessKeyId && c.secretAccessKey
        ? { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }
        : undefined,
    // Only what S3 itself needs: no checksum headers some compatible stores refuse.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;

  private readonly sdk: ClientS3;
  private readonly client: S3Client;
  private readonly bucket: string;
  private constructor(sdk: ClientS3, client: S3Client, bucket: string) {
    this.sdk = sdk;
    this.client = client;
    this.bucket = bucket;
  }

  static async open(c: S3Config): Promise<S3BlobStore> {
    return new S3BlobStore(await loadClientS3(), await s3Client(c), c.bucket);
  }

  private key(name: string): string {
    if (!BLOB_NAME.test(name)) throw new Error('bad blob name');
    return `${PREFIX}${name.slice(0, 2)}/${name.slice(2, 4)}/${name}`;
  }

  async put(bytes: Buffer): Promise<string> {
    const name = sha256(bytes);
    const { Upload } = await loadLibStorage();
    await new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.key(name), Body: bytes, ContentType: 'application/octet-stream' },
      partSize: 8 * 1024 * 1024,
      queueSize: 2,
    }).done();
    return name;
  }

  async get(name: string): Promise<Buffer | null> {
    try {
      const r = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
      return r.Body ? Buffer.from(await r.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async stream(name: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const r = await this.client.send(
        new this.sdk.GetObjectCommand({
          Bucket: this.bucket,
          Key: this.key(name),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      const body = (r.Body as Readable | undefined) ?? null;
      if (!body || !range) return body;
      // A store that answers more than the range asked (s3rver does for `bytes=0-0`): cut it here.
      const from = Number(/^bytes (\d+)-/.exec(r.ContentRange ?? '')?.[1] ?? 0);
      const length = range.end - range.start + 1;
      if (from === range.start && r.ContentLength === length) return body;
      return body.pipe(slice({ start: range.start - from, end: range.end - from }));
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async storedAt(name: string): Promise<Date | null> {
    try {
      const r = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
      return r.LastModified ?? new Date(0);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async has(name: string): Promise<boolean> {
    return (await this.storedAt(name)) !== null;
  }

  async delete(name: string): Promise<void> {
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
  }

  async *list(): AsyncIterable<BlobListing> {
    let token: string | undefined;
    do {
      const r = await this.client.send(
        new this.sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: PREFIX, ContinuationToken: token }),
      );
      for (const o of r.Contents ?? []) {
        const name = o.Key?.split('/').pop() ?? '';
        if (BLOB_NAME.test(name)) yield { name, storedAt: o.LastModified ?? new Date(0) };
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
  }

  async reachable(): Promise<boolean> {
    try {
      await this.client.send(new this.sdk.HeadBucketCommand({ Bucket: this.bucket }));
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/** Passes on bytes `start` to `end` (both included) of what flows through. */
function slice(range: ByteRange): Transform {
  let at = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const from = Math.max(0, range.start - at);
      const to = Math.min(chunk.length, range.end + 1 - at);
      at += chunk.length;
      done(null, from < to ? chunk.subarray(from, to) : undefined);
    },
  });
}
