#!/usr/bin/env node
// The `kiln` command. Runs dist/kiln.mjs (built by `npm run build`) while it is newer than every file
// in src/; otherwise runs the TypeScript sources through tsx, so an edited checkout is never stale.
// The version check is the first import and the only named imports are ones every Node has: a static
// `import { enableCompileCache }` would fail to link on Node 20 before any check could run.
import './node-version.js';
import fs from 'node:fs';
import * as nodeModule from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// V8's compiled code for the bundle and its packages, kept on disk (os.tmpdir()/node-compile-cache, or
// NODE_COMPILE_CACHE): each later start compiles nothing it compiled before (about a quarter of a start).
nodeModule.enableCompileCache();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(root, 'dist', 'kiln.mjs');

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

if (fs.existsSync(bundle) && fs.statSync(bundle).mtimeMs >= newestSource(path.join(root, 'src'))) {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
