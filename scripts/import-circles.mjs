// Lists the import circles in src/: each strongly connected component (Tarjan) of the graph whose edges are
// every relative import of a .ts file, type-only ones included (`import type`, `export ... from`,
// `import('./x.ts')` in code or in a type). A circle makes load order matter and lets a low module lean on
// a high one. Prints each component with its files; exits 1 if there is any. `node scripts/import-circles.mjs`.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { tsFiles } from './ts-files.mjs';

const root = resolve(process.argv[2] ?? 'src');
const files = tsFiles(root);

/** The text with comments blanked out (strings kept), so a commented-out import is no edge. */
function withoutComments(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end - 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    } else if (c === "'" || c === '"' || c === '`') {
      const start = i;
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
      out += text.slice(start, i + 1);
    } else out += c;
  }
  return out;
}

const specifier = [
  // import x from '…', import type { X } from '…', export { x } from '…', export type * from '…'
  /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
  // import '…' (for its effects)
  /\bimport\s*['"]([^'"]+)['"]/g,
  // import('…') in code or in a type
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

const edges = new Map();
for (const file of files) {
  const text = withoutComments(readFileSync(file, 'utf8'));
  const to = new Set();
  for (const pattern of specifier) {
    for (const m of text.matchAll(pattern)) {
      const spec = m[1];
      if (!spec.startsWith('.')) continue;
      let target = resolve(dirname(file), spec);
      if (target.endsWith('.js')) target = `${target.slice(0, -3)}.ts`;
      if (!target.endsWith('.ts') && existsSync(`${target}.ts`)) target = `${target}.ts`;
      if (target.startsWith(root) && existsSync(target) && target !== file) to.add(target);
    }
  }
  edges.set(file, [...to].sort());
}

// Tarjan's strongly connected components, iterative so a deep chain cannot overflow the stack.
const index = new Map();
const low = new Map();
const onStack = new Set();
const stack = [];
const components = [];
let next = 0;
for (const start of files) {
  if (index.has(start)) continue;
  const work = [[start, 0]];
  index.set(start, next);
  low.set(start, next++);
  stack.push(start);
  onStack.add(start);
  while (work.length > 0) {
    const frame = work[work.length - 1];
    const [node, i] = frame;
    const out = edges.get(node) ?? [];
    if (i < out.length) {
      frame[1]++;
      const to = out[i];
      if (!index.has(to)) {
        index.set(to, next);
        low.set(to, next++);
        stack.push(to);
        onStack.add(to);
        work.push([to, 0]);
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
      continue;
    }
    work.pop();
    if (work.length > 0) {
      const parent = work[work.length - 1][0];
      low.set(parent, Math.min(low.get(parent), low.get(node)));
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  }
}

const cwd = process.cwd();
components.forEach((component, n) => {
  console.log(`circle ${n + 1}: ${component.length} files`);
  for (const file of component) {
    const inside = edges.get(file).filter((to) => component.includes(to));
    console.log(`  ${relative(cwd, file)} -> ${inside.map((to) => relative(cwd, to)).join(', ')}`);
  }
});
console.log(`${files.length} files, ${components.length} import circles`);
process.exitCode = components.length > 0 ? 1 : 0;
