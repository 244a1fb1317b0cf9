// The package's root folder, found from this module whether it runs from src/ (tsx) or from the
// dist/ bundle: the nearest folder above with Kiln's package.json.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg) && JSON.parse(fs.readFileSync(pkg, 'utf8')).name === 'kiln') return dir;
    if (path.dirname(dir) === dir) throw new Error(`Kiln's package.json not found above ${from}`);
  }
}

export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
