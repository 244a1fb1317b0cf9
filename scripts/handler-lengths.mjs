// Lists route handlers longer than a limit (default 40 lines) in src/http/routes/: each app.get/post/put/patch/
// delete/route(...) call, measured from its opening to its closing parenthesis, and each function that takes
// a request (`(req: FastifyRequest…` or `(req, reply)`: a handler registered by reference, or a piece of one),
// measured over its body (strings, template literals and comments skipped). Exit 1 when any is over.
// `node scripts/handler-lengths.mjs [limit]`.
import { readFileSync } from 'node:fs';
import { tsFiles } from './ts-files.mjs';

const limit = Number(process.argv[2] ?? 40);
const files = tsFiles('src/http/routes');

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
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const seen = [];
  const inside = (i) => seen.some(([a, b]) => i > a && i < b);
  for (const m of text.matchAll(/\bapp\.(get|post|put|patch|delete|route|all)\(/g)) {
    count++;
    const open = m.index + m[0].length - 1;
    const end = closeOf(text, open);
    seen.push([m.index, end]);
    const first = text.slice(0, m.index).split('\n').length;
    const lines = text.slice(m.index, end).split('\n').length;
    if (lines > limit) {
      over++;
      console.log(`${file}:${first} ${lines} lines`);
    }
  }
  // Functions that take a request, outside the registrations measured above: from the parameter list to the
  // end of the body.
  for (const m of text.matchAll(/\((req|_req)(: FastifyRequest[^,)]*)?(, reply(: FastifyReply)?)?[,)]/g)) {
    if (inside(m.index)) continue;
    if (!m[2] && !m[3]) continue;
    const body = text.indexOf('{', closeOf(text, m.index));
    if (body === -1 || !/^\s*(:[^{]*)?(=>\s*)?$/.test(text.slice(closeOf(text, m.index), body))) continue;
    count++;
    const end = closeOf(text, body);
    seen.push([m.index, end]);
    const first = text.slice(0, m.index).split('\n').length;
    const lines = text.slice(m.index, end).split('\n').length;
    if (lines > limit) {
      over++;
      console.log(`${file}:${first} ${lines} lines (by reference)`);
    }
  }
}
console.log(`${count} routes and request functions, ${over} over ${limit} lines`);
if (over > 0) process.exitCode = 1;
