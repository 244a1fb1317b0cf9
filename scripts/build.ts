// Builds what Kiln serves or runs from dist/ (npm `prepare`, `npm start` and `npm test` run it):
//  - dist/editor.js: the code editor (CodeMirror 6) for browsers;
//  - dist/kiln.mjs: the server and CLI as one module, so `kiln` starts in about a second instead of
//    compiling every TypeScript file through tsx at each start. bin/kiln.js uses it only while it is
//    newer than every source file. Packages stay outside it, and every static `import … from 'pkg'`
//    in src/ becomes an import at its top, loaded at each start even from a module imported lazily:
//    a package only some configurations use (AWS SDK, stripe, pg, ioredis, Tailwind, nodemailer, the
//    zip packages) is imported with `await import('pkg')` where it is first used (types: `import type`);
//  - dist/extract-worker.mjs: the data API's extraction thread (src/data/extract-worker.ts), which the pool in
//    dist/kiln.mjs starts from the same folder.
import path from 'node:path';
import * as esbuild from 'esbuild';
import { buildEditor } from '../src/ui/assets.ts';
import { ROOT } from '../src/paths.ts';

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
      target: 'node20',
      packages: 'external',
      outfile: path.join(ROOT, out),
      logLevel: 'warning',
    }),
  ),
]);
console.log('built dist/editor.js, dist/kiln.mjs and dist/extract-worker.mjs');
