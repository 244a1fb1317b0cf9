// A folder of files in an S3-compatible bucket (`s3://bucket/prefix`), for backups: uploaded and
// downloaded file by file, the connection from the S3 variables (S3_ENDPOINT, S3_REGION, keys …).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { loadConfig } from '../config.ts';

export const isS3Url = (s: string) => s.startsWith('s3://');

export class S3Folder {
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly env: Record<string, string | undefined>;
  private constructor(bucket: string, prefix: string, env: Record<string, string | undefined>) {
    this.bucket = bucket;
    this.prefix = prefix;
    this.env = env;
  }

  static fromUrl(url: string): S3Folder {
    const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
    if (!m) throw new Error(`Not an s3:// address: ${url}`);
    return new S3Folder(m[1], m[2].replace(/\/+$/, ''), process.env);
  }

  private async client() {
    const { s3Client } = await import('../blobs/s3.ts');
    const c = loadConfig({ ...this.env, BLOB_STORE: 's3', S3_BUCKET: this.bucket }).blobs;
    if (c.store !== 's3') throw new Error('s3 configuration');
    return s3Client(c);
  }

  private key(rel: string) {
    return this.prefix ? `${this.prefix}/${rel}` : rel;
  }

  /** Uploads every file under `dir` as `<prefix>/<name>/<relative path>`. */
  async upload(dir: string, name: string): Promise<void> {
    const { Upload } = await import('@aws-sdk/lib-storage');
    const client = await this.client();
    try {
      for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
        if (!e.isFile()) continue;
        const full = path.join(e.parentPath, e.name);
        const rel = path.relative(dir, full).split(path.sep).join('/');
        await new Upload({
          client,
          params: { Bucket: this.bucket, Key: this.key(`${name}/${rel}`), Body: fs.createReadStream(full) },
        }).done();
      }
    } finally {
      client.destroy();
    }
  }

  /** Downloads every object under the prefix into `dir` (the prefix names one backup). */
  async download(dir: string): Promise<void> {
    const { GetObjectCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    const client = await this.client();
    try {
      let token: string | undefined;
      let any = false;
      do {
        const r = await client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.prefix}/`, ContinuationToken: token }),
        );
        for (const o of r.Contents ?? []) {
          const rel = o.Key!.slice(this.prefix.length + 1);
          if (!rel || rel.split('/').includes('..')) continue;
          const to = path.join(dir, ...rel.split('/'));
          await fsp.mkdir(path.dirname(to), { recursive: true });
          const got = await client.send(new GetObjectCommand({ Bucket: this.bucket, Key: o.Key! }));
          await pipeline(got.Body as Readable, fs.createWriteStream(to));
          any = true;
        }
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
      if (!any) throw new Error(`Nothing at s3://${this.bucket}/${this.prefix}`);
    } finally {
      client.destroy();
    }
  }
}
