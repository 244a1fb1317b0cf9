// Builds what Kiln serves or runs from dist/ (npm `prepare`, `npm start` and `npm test` run it; it does
// nothing when every output is newer than src/, the lockfile and this script, so `npm start` right
// after `npm ci` starts at once; `--force` builds anyway):
//  - dist/editor.js: the code editor (CodeMirror 6) for browsers;
//  - dist/kiln.mjs: the server and CLI as one module, so `kiln` starts in about a second instead of
//    compiling every TypeScript file through tsx at each start. bin/kiln.js uses it only while it is
//    newer than every source file. Packages stay outside it, and every static `import … from 'pkg'`
//    in src/ becomes an import at its top, loaded at each start even from a module imported lazily:
//    a package only some configurations use (AWS SDK, stripe, pg, ioredis, Tailwind, nodemailer, the
//    zip packages) is imported with `await import('pkg')` where it is first used (types: `import type`);
//  - dist/extract-worker.mjs: the data API's extraction thread (src/data/extract-worker.ts), which the pool in
//    dist/kiln.mjs starts from the same folder.
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { buildEditor } from '../src/ui/assets.ts';
import { ROOT } from '../src/paths.ts';

const OUTPUTS = ['dist/editor.js', 'dist/kiln.mjs', 'dist/extract-worker.mjs'].map((f) => path.join(ROOT, f));
const INPUTS = ['src', 'package-lock.json', 'scripts/build.ts'].map((f) => path.join(ROOT, f));

/** The newest modification time of a file, or of any file below a folder. */
function newest(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let t = 0;
  for (const e of fs.readdirSync(p)) t = Math.max(t, newest(path.join(p, e)));
  return t;
}

const oldestOutput = Math.min(...OUTPUTS.map((f) => (fs.existsSync(f) ? fs.statSync(f).mtimeMs : 0)));
if (!process.argv.includes('--force') && oldestOutput >= Math.max(...INPUTS.map(newest))) {
  console.log('dist/ is up to date');
  process.exit(0);
}

await Promise.all([
  buildEditor(),
  ...[
    ['src/cli.ts', 'dist/kiln.mjs'],
    ['src/data/extract-worker.ts', 'dist/extract-worker.mjs'],
  ].map(([entry, out]) =>
    esbuild.build({
      entryPoints: [path.join(ROOT, entry)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      packages: 'external',
      outfile: path.join(ROOT, out),
      logLevel: 'warning',
    }),
  ),
]);
console.log('built dist/editor.js, dist/kiln.mjs and dist/extract-worker.mjs');
