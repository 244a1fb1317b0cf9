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
import { isAlive, pidIn } from './support/child.ts';
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

/** An owner whose page listens on its bus, an agent of theirs started with `extra` options, and a way to ask. */
async function pageAndAgent(engineMode: string, extra: string[]) {
  const main = kiln.client();
  const p = await signedIn(kiln, main);
  const port = Number(new URL(kiln.url).port);
  const host = kiln.hostOf(p.username);
  const { key } = await createSyncKey(kiln.services, p.id);
  const engineDir = path.join(dir, `${p.username}-${engineMode}`);
  const engine = `"${process.execPath}" ${path.join(REPO, 'test/support/ai-engine.mjs')} ${engineDir} ${engineMode}`;
  const started = startAgent(`http://${p.username}.kiln.localhost:${port}`, key, engine, 'args', { args: extra });
  const page = await SseClient.open({
    port,
    host,
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { cookie: main.jar.header(host) ?? '', 'sec-fetch-site': 'same-origin' },
  });
  await page.comment('connected');
  await until(() => started.log().includes('listening for AI edit requests'), {
    what: `the agent listens:\n${started.log()}`,
  });
  const send = async (type: string, payload: Record<string, unknown>) => {
    const res = await main.on(host).post(
      '/_/bus/send',
      { channel: 'ai-edit', type, v: 1, sender: 'page-a1', payload },
      {
        headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'page-url': `http://${host}/index.html` },
      },
    );
    assert.equal(res.status, 200, res.text);
  };
  const ask = (id: string) =>
    send('ai-edit/request', {
      id,
      tag: 'h1',
      editId: 'title',
      elementHTML: '<h1 data-edit-id="title">Hi</h1>',
      comment: 'more',
    });
  /** The agent's frames about a request so far. */
  const about = (id: string) =>
    page.frames.map((f) => f.json).filter((e) => e?.payload?.id === id && e.sender !== 'page-a1');
  return { ...started, page, send, ask, about, engineDir };
}

test('kiln ai-edit serve --timeout: a command that never answers is ended, and the page told why', async () => {
  const a = await pageAndAgent('slow', ['--timeout', '1']);
  try {
    await a.ask('req-slow');
    const error = await until(() => a.about('req-slow').find((e) => e.type === 'ai-edit/error'), {
      what: `the agent to give up on the command:\n${a.log()}`,
    });
    assert.match(error.payload.message, /took longer than 1 s/);
    assert.equal(a.about('req-slow')[0].type, 'ai-edit/ack', 'the agent had taken it');
    const engine = pidIn(path.join(a.engineDir, 'engine.pid'));
    assert.ok(engine, 'the command ran');
    await until(() => !isAlive(engine), { what: 'the command to be ended' });
  } finally {
    a.page.close();
    a.agent.kill('SIGTERM');
  }
});

test('kiln ai-edit serve --concurrency: a request beyond the bound is refused with the reason; a slot freed takes the next', async () => {
  const a = await pageAndAgent('slow', ['--concurrency', '1']);
  try {
    await a.ask('req-one');
    await until(() => a.about('req-one').some((e) => e.type === 'ai-edit/delta'), {
      what: `the first request's command to run:\n${a.log()}`,
    });
    await a.ask('req-two');
    const refused = await until(() => a.about('req-two').find((e) => e.type === 'ai-edit/error'), {
      what: `the second request refused:\n${a.log()}`,
    });
    assert.match(refused.payload.message, /1 AI edit is running on your agent/);
    assert.ok(!a.about('req-two').some((e) => e.type === 'ai-edit/delta'), 'no command ran for it');
    // The page cancels the first: its slot is free for the next, whose command runs.
    await a.send('ai-edit/cancel', { id: 'req-one' });
    await until(() => a.log().includes('req-one: cancelled'), { what: `the first cancelled:\n${a.log()}` });
    await a.ask('req-three');
    await until(() => a.about('req-three').some((e) => e.type === 'ai-edit/delta'), {
      what: `the third request's command to run:\n${a.log()}`,
    });
  } finally {
    a.page.close();
    a.agent.kill('SIGTERM');
  }
});

test('kiln ai-edit serve refuses a --timeout or --concurrency that is not a whole number in range', async () => {
  for (const extra of [
    ['--timeout', '0'],
    ['--timeout', 'soon'],
    ['--concurrency', '0'],
  ]) {
    const { agent, log } = startAgent('http://x.kiln.localhost:9', `hcsk_${'0'.repeat(64)}`, 'cat', 'args', {
      args: extra,
    });
    const code = await new Promise((r) => agent.once('exit', r));
    assert.equal(code, 2, log());
    assert.match(log(), new RegExp(`${extra[0]} must be a whole number`));
  }
});
