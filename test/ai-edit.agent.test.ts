// `kiln ai-edit serve` (#27): an agent on the owner's machine, with the account's sync key, answers their
// pages' AI edit requests with a local command, end to end through a real Kiln (which has no engine of its own:
// the agent acks first, so the built-in handler's "not set up" never comes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { REPO } from './support/child.ts';
import { until } from './support/wait.ts';
import { createSyncKey } from '../src/sync/keys.ts';

let kiln: TestKiln;
let dir: string;
before(async () => {
  kiln = await startKiln();
  dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-agent-'));
});
after(async () => {
  await kiln.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `kiln ai-edit serve` as a person starts it (the key on the command line, or in KILN_SYNC_KEY); `log()` is what
 *  it said so far. */
function startAgent(
  url: string,
  key: string,
  command: string,
  keyIn: 'args' | 'env' = 'args',
  more: { args?: string[]; env?: Record<string, string> } = {},
) {
  const args = ['bin/kiln.js', 'ai-edit', 'serve', '--url', url, '--command', command, ...(more.args ?? [])];
  const agent = spawn(process.execPath, keyIn === 'args' ? [...args, '--key', key] : args, {
    cwd: REPO,
    env: { ...process.env, ...more.env, ...(keyIn === 'env' ? { KILN_SYNC_KEY: key } : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let out = '';
  agent.stderr.on('data', (d) => (out += d));
  return { agent, log: () => out };
}

test('an agent started with the sync key answers a page’s request: ack, deltas, done, from the agent only', async () => {
  const main = kiln.client();
  const p = await signedIn(kiln, main);
  const port = Number(new URL(kiln.url).port);
  const host = kiln.hostOf(p.username);
  const { key } = await createSyncKey(kiln.services, p.id);
  const engine = `"${process.execPath}" ${path.join(REPO, 'test/support/ai-engine.mjs')} ${dir} edit`;
  const { agent, log } = startAgent(`http://${p.username}.kiln.localhost:${port}`, key, engine);
  const page = await SseClient.open({
    port,
    host,
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { cookie: main.jar.header(host) ?? '', 'sec-fetch-site': 'same-origin' },
  });
  try {
    await page.comment('connected');
    await until(() => log().includes('listening for AI edit requests'), { what: `the agent listens:\n${log()}` });
    const sent = await main.on(host).post(
      '/_/bus/send',
      {
        channel: 'ai-edit',
        type: 'ai-edit/request',
        v: 1,
        sender: 'page-a1',
        payload: {
          id: 'req-agent',
          tag: 'h1',
          editId: 'title',
          elementHTML: '<h1 data-edit-id="title">Welcome</h1>',
          comment: 'bolder',
          contextRefs: [],
        },
      },
      {
        headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'page-url': `http://${host}/index.html` },
      },
    );
    assert.equal(sent.status, 200, sent.text);
    const got: Array<{ type: string; sender: string; payload: any }> = [];
    for (;;) {
      const f = (await page.next({ timeoutMs: 30_000 })).json;
      if (f.sender === 'page-a1') continue;
      got.push(f);
      if (f.type === 'ai-edit/done' || f.type === 'ai-edit/error') break;
    }
    assert.deepEqual([...new Set(got.map((f) => f.sender))].length, 1, 'one handler answered');
    assert.match(got[0].sender, /^agent-/);
    assert.equal(got[0].type, 'ai-edit/ack');
    assert.ok(got.some((f) => f.type === 'ai-edit/delta'));
    assert.equal(got.at(-1)!.type, 'ai-edit/done', JSON.stringify(got.at(-1)));
    assert.equal(got.at(-1)!.payload.html, '<h1 data-edit-id="title">Welcome — edited</h1>');
    await until(() => log().includes('req-agent: done'), { what: `the agent logs it:\n${log()}` });
  } finally {
    page.close();
    agent.kill('SIGTERM');
  }
});

test('a key the host does not take (here from KILN_SYNC_KEY) ends the agent with the reason', async () => {
  const port = Number(new URL(kiln.url).port);
  const p = await signedIn(kiln, kiln.client());
  const { agent, log } = startAgent(
    `http://${p.username}.kiln.localhost:${port}`,
    `hcsk_${'0'.repeat(64)}`,
    'cat',
    'env',
  );
  const code = await new Promise((r) => agent.once('exit', r));
  assert.equal(code, 1);
  assert.match(log(), /refused the key \(401\): That sync key is not valid/);
});

test('the agent’s command gets PATH, HOME, LANG and what --env names, never KILN_SYNC_KEY', async () => {
  const main = kiln.client();
  const p = await signedIn(kiln, main);
  const port = Number(new URL(kiln.url).port);
  const host = kiln.hostOf(p.username);
  const { key } = await createSyncKey(kiln.services, p.id);
  const out = path.join(dir, 'env-run');
  const engine = `"${process.execPath}" ${path.join(REPO, 'test/support/ai-engine.mjs')} ${out} edit`;
  const { agent, log } = startAgent(`http://${p.username}.kiln.localhost:${port}`, key, engine, 'env', {
    args: ['--env', 'MY_MODEL_TOKEN'],
    env: { MY_MODEL_TOKEN: 'for-my-model', SOMETHING_ELSE: 'not for the command' },
  });
  const page = await SseClient.open({
    port,
    host,
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { cookie: main.jar.header(host) ?? '', 'sec-fetch-site': 'same-origin' },
  });
  try {
    await page.comment('connected');
    await until(() => log().includes('listening for AI edit requests'), { what: `the agent listens:\n${log()}` });
    const sent = await main.on(host).post(
      '/_/bus/send',
      {
        channel: 'ai-edit',
        type: 'ai-edit/request',
        v: 1,
        sender: 'page-a2',
        payload: { id: 'req-env', tag: 'p', elementHTML: '<p>Hi</p>', comment: 'more', contextRefs: [] },
      },
      { headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' } },
    );
    assert.equal(sent.status, 200, sent.text);
    for (;;) {
      const f = (await page.next({ timeoutMs: 30_000 })).json;
      if (f.type === 'ai-edit/error') assert.fail(JSON.stringify(f));
      if (f.type === 'ai-edit/done') break;
    }
    const raw = readFileSync(path.join(out, 'env.json'), 'utf8');
    const env = JSON.parse(raw);
    assert.deepEqual(
      Object.keys(env).sort(),
      ['HOME', 'LANG', 'MY_MODEL_TOKEN', 'PATH'].filter((k) => k in env).sort(),
    );
    assert.equal(env.MY_MODEL_TOKEN, 'for-my-model');
    assert.equal(env.PATH, process.env.PATH);
    assert.ok(!raw.includes(key), 'the sync key never reaches the command');
    assert.ok(!('KILN_SYNC_KEY' in env));
    assert.ok(!raw.includes('not for the command'));
  } finally {
    page.close();
    agent.kill('SIGTERM');
  }
});
