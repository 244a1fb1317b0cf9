#!/usr/bin/env node
// The `kiln` command. Runs dist/kiln.mjs (built by `npm run build`) while it is newer than every file
// in src/; otherwise runs the TypeScript sources through tsx, so an edited checkout is never stale.
import fs from 'node:fs';
import { enableCompileCache } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// better-sqlite3 13 needs Node-API 10 (Node 22.14 and later): on an older Node it crashes at the first
// database it opens, so say what to install instead.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  console.error(`Kiln needs Node.js 22.14 or later (24 recommended); this is Node.js ${process.versions.node}.`);
  process.exit(1);
}

// V8's compiled code for the bundle and its packages, kept on disk (os.tmpdir()/node-compile-cache, or
// NODE_COMPILE_CACHE): each later start compiles nothing it compiled before (about a quarter of a start).
enableCompileCache();

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
