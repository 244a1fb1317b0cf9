// Lists route registrations longer than a limit (default 40 lines): each app.get/post/put/patch/delete/
// route(...) call in src/http/routes/, measured from its opening to its closing parenthesis (strings,
// template literals and comments skipped). `node scripts/handler-lengths.mjs [limit]`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const limit = Number(process.argv[2] ?? 40);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts')) files.push(p);
  }
})('src/http/routes');

/** The index just past the parenthesis that closes the one at `open`. */
function closeOf(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') i = text.indexOf('\n', i);
    else if (c === '/' && text[i + 1] === '*') i = text.indexOf('*/', i) + 1;
    else if (c === "'" || c === '"' || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
    } else if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

let over = 0;
let count = 0;
for (const file of files.sort()) {
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/\bapp\.(get|post|put|patch|delete|route|all)\(/g)) {
    count++;
    const open = m.index + m[0].length - 1;
    const end = closeOf(text, open);
    const first = text.slice(0, m.index).split('\n').length;
    const lines = text.slice(m.index, end).split('\n').length;
    if (lines > limit) {
      over++;
      console.log(`${file}:${first} ${lines} lines`);
    }
  }
}
console.log(`${count} routes, ${over} over ${limit} lines`);
