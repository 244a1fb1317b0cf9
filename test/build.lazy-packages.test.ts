// Packages only some configurations use are imported where first used (#23): a static import anywhere
// in src/ would be hoisted to the top of dist/kiln.mjs and loaded at every start (scripts/build.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../src/paths.ts';

const OPTIONAL = [
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-storage',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/server/stdio',
  '@tailwindcss/node',
  'cheerio',
  'hyper-html-api',
  'hyper-html-api/cheerio',
  'hyper-html-api/engine',
  'ioredis',
  'nodemailer',
  'oidc-provider',
  'pg',
  'stripe',
  'yauzl',
  'yazl',
];

test('src/ imports optional packages only with await import() (types with import type)', () => {
  const found: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, 'src'), { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith('.ts')) continue;
    const file = path.join(e.parentPath, e.name);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?\bfrom\s+'([^']+)'/gm)) {
      if (OPTIONAL.includes(m[1])) found.push(`${path.relative(ROOT, file)}: ${m[1]}`);
    }
  }
  assert.deepEqual(found, []);
});
