// Builds what Kiln serves or runs from dist/ (npm `prepare`, `npm start` and `npm test` run it):
//  - dist/editor.js: the code editor (CodeMirror 6) for browsers;
//  - dist/kiln.mjs: the server and CLI as one module, so `kiln` starts in about a second instead of
//    compiling every TypeScript file through tsx at each start. bin/kiln.js uses it only while it is
//    newer than every source file.
import path from 'node:path';
import * as esbuild from 'esbuild';
import { buildEditor } from '../src/ui/assets.ts';
import { ROOT } from '../src/paths.ts';

await Promise.all([
  buildEditor(),
  esbuild.build({
    entryPoints: [path.join(ROOT, 'src/cli.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: path.join(ROOT, 'dist/kiln.mjs'),
    logLevel: 'warning',
  }),
]);
console.log('built dist/editor.js and dist/kiln.mjs');
