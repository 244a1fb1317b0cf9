// No import circles in src/, type-only imports included (#46): a circle lets a low module lean on a high
// one (a member of Services on Services itself) and makes load order matter. scripts/import-circles.mjs
// builds the graph of every relative import and lists its strongly connected components.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../src/paths.ts';

const SCRIPT = path.join(ROOT, 'scripts', 'import-circles.mjs');

function circles(dir: string) {
  const run = spawnSync(process.execPath, [SCRIPT, dir], { cwd: ROOT, encoding: 'utf8' });
  return { status: run.status, out: run.stdout + run.stderr };
}

test('src/ has no import circles, type-only imports included', () => {
  const { status, out } = circles(path.join(ROOT, 'src'));
  if (status !== 0) assert.fail(`import circles in src/:\n${out}`);
  assert.match(out, / 0 import circles\n$/);
});

test('the check finds a circle made only of type imports and dynamic imports', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-circles-'));
  try {
    fs.mkdirSync(path.join(dir, 'low'));
    fs.writeFileSync(path.join(dir, 'top.ts'), "import type { Low } from './low/low.ts';\nexport type Top = Low;\n");
    fs.writeFileSync(
      path.join(dir, 'low', 'low.ts'),
      "// import type { Top } from '../nowhere.ts';\nexport type Low = import('../mid.ts').Mid;\n",
    );
    fs.writeFileSync(
      path.join(dir, 'mid.ts'),
      "export type Mid = number;\nexport async function top() {\n  return await import('./top.ts');\n}\n",
    );
    fs.writeFileSync(path.join(dir, 'alone.ts'), "export { type Mid } from './mid.ts';\n");
    const { status, out } = circles(dir);
    assert.equal(status, 1, out);
    assert.match(out, /circle 1: 3 files/, out);
    assert.match(out, /low\/low\.ts -> .*mid\.ts/, out);
    assert.match(out, / 1 import circles\n$/, out);
    assert.doesNotMatch(out, /alone\.ts/, out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
