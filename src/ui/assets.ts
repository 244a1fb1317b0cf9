// Front-end assets Kiln serves itself (no CDN): the editor bundle and the hyperclayjs browser library.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../paths.ts';

const EDITOR_BUNDLE = path.join(ROOT, 'dist', 'editor.js');

export async function buildEditor(): Promise<void> {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'src/ui/client/editor.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2020',
    outfile: EDITOR_BUNDLE,
    logLevel: 'silent',
  });
}

let editorJs: Promise<Buffer> | null = null;
export function editorBundle(): Promise<Buffer> {
  editorJs ??= (async () => {
    if (!fs.existsSync(EDITOR_BUNDLE)) await buildEditor();
    return fs.readFileSync(EDITOR_BUNDLE);
  })();
  return editorJs;
}
