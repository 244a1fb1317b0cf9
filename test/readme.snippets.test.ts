// The README's snippets, copied out of it and run against a real Kiln: what a newcomer pastes works as the
// README says it does. The rules tag (its page saved, `/_/api` answering the JSON the README shows) and the
// sync API's round trip in JavaScript (create, read, write with If-Match, a stale write refused, rename).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../src/paths.ts';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder } from './support/sync-client.ts';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** The code block right after `<!-- name -->` in the README. */
function snippet(name: string, lang: string): string {
  const m = new RegExp(`<!-- ${name} -->\\s*\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(readme);
  assert.ok(m, `the README has the ${name} snippet`);
  return m[1];
}

let kiln: TestKiln;
before(async () => (kiln = await startKiln()));
after(() => kiln.stop());

/** Runs JavaScript as a module in a child Node (as a reader would, `node snippet.mjs`); its output. */
function runModule(
  code: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c, out, err }));
    child.stdin.end(code);
  });
}

test('the rules tag snippet: its page saved, /_/api answers the JSON the README shows', async () => {
  const { api, person } = await keyHolder(kiln);
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>Groceries</title></head><body>\n${snippet('rules-tag', 'html')}</body></html>`;
  const name = `groceries-${person.id}.html`;
  await api.create({ type: 'site', name, parentId: 0, content: page });
  const answer = await kiln.client(kiln.hostOf(person.username)).get(`/_/api/${name}`);
  assert.equal(answer.status, 200, answer.text);
  assert.deepEqual(answer.json, JSON.parse(snippet('rules-tag-answer', 'json')));
});

test('the sync API snippet runs as written: the first write wins, the stale one is refused, the rename shows', async () => {
  const { key } = await keyHolder(kiln);
  const run = await runModule(snippet('sync-api', 'js'), { KILN_URL: kiln.url, KILN_KEY: key });
  assert.equal(run.code, 0, run.err);
  const [statuses, listing] = run.out.trim().split('\n');
  assert.equal(statuses, '200 412 conflict');
  assert.deepEqual(listing.split(' ').sort(), ['notes', 'notes/done.html']);
});
