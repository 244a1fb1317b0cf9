// A zip made in memory for import tests: names → contents.
import yazl from 'yazl';

export function zipOf(files: Record<string, string | Buffer>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) z.addBuffer(Buffer.from(content), name);
  z.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    z.outputStream
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
}
