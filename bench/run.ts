// `npm run bench`: runs every benchmark module in bench/ (each `bench/<name>.ts` is a script that prints
// its own figures), one after another in its own process so that one benchmark's leftovers never slow
// the next. Pass names to run only some: `npm run bench -- http save-core`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2).map((a) => a.replace(/^bench\//, '').replace(/\.ts$/, ''));
const modules = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_') && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -3))
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort();

if (modules.length === 0) {
  console.error(
    `No benchmark matches ${wanted.join(', ')}. Available: ${readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
      .join(', ')}`,
  );
  process.exit(2);
}

const results: Array<{ name: string; ok: boolean; seconds: number }> = [];
for (const name of modules) {
  console.log(`\n=== bench/${name}.ts`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, `${name}.ts`)], {
    stdio: 'inherit',
    env: process.env,
  });
  results.push({ name, ok: r.status === 0, seconds: (Date.now() - t0) / 1000 });
}

console.log('\n=== summary');
for (const r of results) console.log(`${r.ok ? 'ok    ' : 'FAILED'} bench/${r.name}.ts (${r.seconds.toFixed(1)} s)`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
