// A zip made in memory for import tests: names → contents, or `{zeros: n}` for n zero bytes produced a
// megabyte at a time (a zip bomb's entry, never held whole).
import { Readable } from 'node:stream';
import yazl from 'yazl';

const MB = 1024 * 1024;

function zeros(size: number): Readable {
  const chunk = Buffer.alloc(MB);
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
}

export function zipOf(files: Record<string, string | Buffer | { zeros: number }>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) {
    if (typeof content === 'object' && !Buffer.isBuffer(content))
      z.addReadStream(zeros(content.zeros), name, { size: content.zeros });
    else z.addBuffer(Buffer.from(content), name);
  }
  z.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    z.outputStream
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
}
