// The .ts files below a folder, sorted: what the source checks here (import-circles, handler-lengths) read.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every .ts file at any depth below `dir`, as `dir`-prefixed paths, sorted. */
export function tsFiles(dir) {
  const files = [];
  (function walk(at) {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const p = join(at, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  })(dir);
  return files.sort();
}
