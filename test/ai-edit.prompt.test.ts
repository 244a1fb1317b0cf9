// The pure parts of AI editing (#27): which engine a comment names, the references it carries, the prompt and
// its bound, the reply cleaned, a command line split without a shell, the AI_EDIT_* configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPrompt, cleanReply, engineOf, referencesOf, type EditRequest } from '../src/ai-edit/prompt.ts';
import { commandWords } from '../src/ai-edit/engines.ts';
import { aiEditConfig, AiEditConfigError } from '../src/ai-edit/config.ts';
import { limits } from '../src/limits.ts';

const req = (over: Partial<EditRequest> = {}): EditRequest => ({
  id: 'r1',
  tag: 'p',
  elementHTML: '<p data-edit-id="a">Hi</p>',
  comment: 'make it warmer',
  ...over,
});

test('a leading @word names the engine; @page and references never do (hyperclay-local 1.x read @notes.md as @note)', () => {
  assert.deepEqual(engineOf('@claude make it warmer'), { engine: 'claude', text: 'make it warmer' });
  assert.deepEqual(engineOf('  @Fast-1  shorter'), { engine: 'fast-1', text: 'shorter' });
  assert.deepEqual(engineOf('@page add a pricing table'), { engine: null, text: '@page add a pricing table' });
  assert.deepEqual(engineOf('@notes.md summarise this'), { engine: null, text: '@notes.md summarise this' });
  assert.deepEqual(engineOf('please use @claude'), { engine: null, text: 'please use @claude' });
  assert.deepEqual(engineOf('@solo'), { engine: 'solo', text: '' });
});

test('references: the request’s list, else the comment’s @tokens with a dot or slash, without page, each once', () => {
  assert.deepEqual(referencesOf(req({ contextRefs: ['notes.md', '/docs/a.html', 'notes.md', 'page'] })), [
    'notes.md',
    'docs/a.html',
  ]);
  assert.deepEqual(referencesOf(req({ comment: 'use @notes.md and @src/x.js, not @claude' })), [
    'notes.md',
    'src/x.js',
  ]);
});

test('the prompt asks for one element with its tag and data-edit-id, carries what was given, and is bounded', () => {
  const p = buildPrompt(req({ comment: '@ai warmer', quote: 'Hi', pageHTML: '<html>PAGE</html>' }), [
    { path: 'notes.md', text: 'NOTES', truncated: true },
  ]);
  assert.ok(!('problem' in p));
  assert.match(p.system, /exactly one complete <p> element/);
  assert.match(p.system, /data-edit-id/);
  assert.match(p.user, /^The owner asks: warmer/);
  for (const part of [
    '“Hi”',
    '<p data-edit-id="a">Hi</p>',
    '<html>PAGE</html>',
    'The file notes.md (its beginning):\nNOTES',
  ])
    assert.ok(p.user.includes(part), part);
  const big = buildPrompt(req({ elementHTML: 'x'.repeat(limits.aiEdit.promptBytes) }), []);
  assert.ok('problem' in big && /too large for AI editing/.test(big.problem));
});

test('a reply is cleaned of outside whitespace and one Markdown fence, nothing else', () => {
  assert.equal(cleanReply('```html\n<p>A</p>\n```\n'), '<p>A</p>');
  assert.equal(cleanReply('  ```\n<p>A</p>```'), '<p>A</p>');
  assert.equal(cleanReply('\n<p>A</p>\n'), '<p>A</p>');
  assert.equal(cleanReply('<p>```code```</p>'), '<p>```code```</p>');
});

test('a command line is split as a shell would quote it, and run without one', () => {
  assert.deepEqual(commandWords(`claude -p --model "opus 4" 'a b' c\\ d`), [
    'claude',
    '-p',
    '--model',
    'opus 4',
    'a b',
    'c d',
  ]);
  assert.deepEqual(commandWords(`x "" y`), ['x', '', 'y']);
  assert.deepEqual(commandWords('echo $HOME; rm -rf /'), ['echo', '$HOME;', 'rm', '-rf', '/']);
  assert.throws(() => commandWords('say "unclosed'), /unclosed/);
});

test('AI_EDIT_*: off without an engine; the default engine and named ones; mistakes are refused at start', () => {
  assert.equal(aiEditConfig({}), null);
  const c = aiEditConfig({
    AI_EDIT_URL: 'https://api.anthropic.com/v1/messages',
    AI_EDIT_API_KEY: 'k',
    AI_EDIT_MODEL: 'm',
    AI_EDIT_NAME: 'Claude',
    AI_EDIT_ENGINES: 'local',
    AI_EDIT_LOCAL_COMMAND: 'my-agent --x',
    AI_EDIT_TIMEOUT_MS: '5000',
  })!;
  assert.equal(c.defaultEngine, 'claude');
  assert.deepEqual(
    c.engines.map((e) => [e.name, e.command ?? e.url]),
    [
      ['claude', 'https://api.anthropic.com/v1/messages'],
      ['local', ['my-agent', '--x']],
    ],
  );
  assert.equal(c.timeoutMs, 5000);
  assert.equal(aiEditConfig({ AI_EDIT_ENGINES: 'only', AI_EDIT_ONLY_COMMAND: 'x' })!.defaultEngine, 'only');
  for (const bad of [
    { AI_EDIT_COMMAND: 'x', AI_EDIT_URL: 'https://a.example/v1/messages' },
    { AI_EDIT_URL: 'ftp://a.example' },
    { AI_EDIT_URL: 'https://a.example', AI_EDIT_API: 'other' },
    { AI_EDIT_ENGINES: 'ghost' },
    { AI_EDIT_ENGINES: 'page', AI_EDIT_PAGE_COMMAND: 'x' },
    { AI_EDIT_COMMAND: 'x', AI_EDIT_TIMEOUT_MS: '5' },
  ])
    assert.throws(() => aiEditConfig(bad), AiEditConfigError, JSON.stringify(bad));
});
