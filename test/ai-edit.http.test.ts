// The built-in AI edit handler (#27) on a host's bus, as hyperclayjs 1.38 (communication/ai-edit.js) waits for
// it: `ai-edit/request` → `ai-edit/ack`, `ai-edit/delta {id, index, text}`…, `ai-edit/done {id, html}` or
// `ai-edit/error {id, message}`; `ai-edit/cancel {id}` stops the engine. Engines: a command (a local script,
// test/support/ai-engine.mjs) and HTTP engines against a stand-in server that speaks the streaming Anthropic
// Messages and OpenAI chat-completions APIs, which records what it was sent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { until } from './support/wait.ts';
import { isAlive, pidIn } from './support/child.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { limits } from '../src/limits.ts';

const ENGINE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support/ai-engine.mjs');
const API_KEY = 'sk-test-never-in-a-browser-0123456789';

/** The stand-in model server: what it was sent, and a streamed answer in the API's own shape. */
const received: Array<{ path: string; headers: http.IncomingHttpHeaders; body: any }> = [];
const standIn = http.createServer((req, res) => {
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (d) => (raw += d));
  req.on('end', async () => {
    const body = JSON.parse(raw);
    received.push({ path: req.url ?? '', headers: req.headers, body });
    const user: string = req.url === '/v1/messages' ? body.messages[0].content : body.messages[1].content;
    const element = /element to rewrite[^\n]*:\n([\s\S]*?)(?:\n\n|$)/.exec(user)?.[1] ?? '<p></p>';
    const reply = element.replace(/>([^<]+)</, '>$1 — from the model<');
    const pieces = reply.match(/[\s\S]{1,10}/g) ?? [];
    // A pause between pieces longer than the handler's batching: the page sees it stream.
    const pause = () => new Promise((r) => setTimeout(r, limits.aiEdit.deltaMs * 2));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (event: string | null, data: unknown) =>
      res.write(
        `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
      );
    if (req.url === '/v1/messages') {
      send('message_start', { type: 'message_start', message: { model: 'claude-stand-in' } });
      for (const text of pieces) {
        send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
        await pause();
      }
      send('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' } });
      send('message_stop', { type: 'message_stop' });
    } else {
      for (const text of pieces) {
        send(null, { model: 'gpt-stand-in', choices: [{ delta: { content: text } }] });
        await pause();
      }
      send(null, { model: 'gpt-stand-in', choices: [{ delta: {}, finish_reason: 'stop' }] });
      send(null, '[DONE]');
    }
    res.end();
  });
});

let kiln: TestKiln;
let port: number;
let dir: string;
before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-ai-'));
  await new Promise<void>((r) => standIn.listen(0, '127.0.0.1', r));
  const model = `http://127.0.0.1:${(standIn.address() as { port: number }).port}`;
  kiln = await startKiln({
    env: {
      AI_EDIT_COMMAND: `"${process.execPath}" ${ENGINE} ${dir}/edit edit`,
      AI_EDIT_ENGINES: 'slow,broken,claude,gpt',
      AI_EDIT_SLOW_COMMAND: `"${process.execPath}" ${ENGINE} ${dir}/slow slow`,
      AI_EDIT_BROKEN_COMMAND: `"${process.execPath}" ${ENGINE} ${dir}/broken fail`,
      AI_EDIT_CLAUDE_URL: `${model}/v1/messages`,
      AI_EDIT_CLAUDE_API_KEY: API_KEY,
      AI_EDIT_CLAUDE_MODEL: 'claude-test-model',
      AI_EDIT_GPT_URL: `${model}/v1/chat/completions`,
      AI_EDIT_GPT_API_KEY: API_KEY,
      AI_EDIT_GPT_MODEL: 'gpt-test-model',
      AI_EDIT_TIMEOUT_MS: '20000',
    },
  });
  port = Number(new URL(kiln.url).port);
});
after(async () => {
  await kiln.stop();
  standIn.close();
  rmSync(dir, { recursive: true, force: true });
});

const ELEMENT = '<p data-edit-id="intro">Hello there</p>';

async function ownerWithPage() {
  const main = kiln.client();
  const p = await signedIn(kiln, main);
  const host = kiln.hostOf(p.username);
  const page = `ai-${p.username}.html`;
  await createNode(await actingAs(kiln.services, p.id), {
    ownerId: p.id,
    parentId: 0,
    type: 'site',
    name: page,
    html: `<!doctype html><html><body><section data-edit-id="s">${ELEMENT}</section></body></html>`,
  });
  const bus = await SseClient.open({
    port,
    host,
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { cookie: main.jar.header(host) ?? '', 'sec-fetch-site': 'same-origin' },
  });
  await bus.comment('connected');
  return { main, p, host, page, bus };
}

type Owner = Awaited<ReturnType<typeof ownerWithPage>>;

let n = 0;
async function ask(o: Owner, comment: string, extra: Record<string, unknown> = {}) {
  const id = `req-${++n}`;
  const res = await o.main.on(o.host).post(
    '/_/bus/send',
    {
      channel: 'ai-edit',
      type: 'ai-edit/request',
      v: 1,
      sender: 'page-test01',
      payload: { id, editId: 'intro', tag: 'p', elementHTML: ELEMENT, comment, contextRefs: [], ...extra },
    },
    {
      headers: {
        'page-url': `http://${o.host}/${o.page}`,
        origin: `http://${o.host}`,
        'sec-fetch-site': 'same-origin',
      },
    },
  );
  assert.equal(res.status, 200, res.text);
  return id;
}

/** The handler's frames for a request up to its end (`done` or `error`). */
async function answers(o: Owner, id: string) {
  const got: Array<{ type: string; payload: any; sender: string }> = [];
  for (;;) {
    const f = (await o.bus.next({ timeoutMs: 30_000 })).json;
    if (f.payload?.id !== id || f.sender === 'page-test01') continue;
    got.push(f);
    if (f.type === 'ai-edit/done' || f.type === 'ai-edit/error') return got;
  }
}

test('the default engine (a command): ack, then numbered deltas that add up to the reply, then done with the element unfenced', async () => {
  const o = await ownerWithPage();
  try {
    const id = await ask(o, 'make it friendlier');
    const got = await answers(o, id);
    assert.equal(got[0].type, 'ai-edit/ack');
    const deltas = got.filter((f) => f.type === 'ai-edit/delta');
    assert.ok(deltas.length >= 1);
    assert.deepEqual(
      deltas.map((d) => d.payload.index),
      deltas.map((_, i) => i),
    );
    const streamed = deltas.map((d) => d.payload.text).join('');
    const done = got.at(-1)!;
    assert.equal(done.type, 'ai-edit/done', JSON.stringify(done));
    assert.equal(done.payload.html, '<p data-edit-id="intro">Hello there — edited</p>');
    assert.equal(streamed.trim(), `\`\`\`html\n${done.payload.html}\n\`\`\``, 'the deltas are the reply as it came');
    assert.equal(done.payload.stopReason, 'end_turn');
    // What the engine was asked: one element back, its tag and data-edit-id kept; the owner's words; the element.
    const prompt = readFileSync(path.join(dir, 'edit/prompt.txt'), 'utf8');
    assert.match(prompt, /exactly one complete <p> element/);
    assert.match(prompt, /data-edit-id/);
    assert.match(prompt, /The owner asks: make it friendlier/);
    assert.ok(prompt.includes(ELEMENT));
    // The owner's activity says who asked, which engine, the sizes and the outcome; never the content.
    const feed = await o.main.get('/_/activity');
    const line = feed.json.activity.find((a: any) => a.kind === 'ai-edit');
    assert.ok(line, JSON.stringify(feed.json));
    assert.equal(line.by, o.p.username);
    assert.equal(line.path, o.page);
    assert.equal(line.aiEdit.engine, '@ai');
    assert.equal(line.aiEdit.outcome, 'done');
    assert.ok(line.aiEdit.in > 0 && line.aiEdit.out === Buffer.byteLength(done.payload.html));
    assert.ok(!feed.text.includes('Hello there'), 'the activity never holds the content');
  } finally {
    o.bus.close();
  }
});

test('engines by a leading @word: a failing engine says why; an unknown one is an error, never the default; @page and @file references reach the prompt', async () => {
  const o = await ownerWithPage();
  try {
    const broken = await answers(o, await ask(o, '@broken fix this'));
    assert.equal(broken.at(-1)!.type, 'ai-edit/error');
    assert.match(broken.at(-1)!.payload.message, /exited with 3: the model is out of coffee/);
    const unknown = await answers(o, await ask(o, '@nobody fix this'));
    assert.deepEqual(
      unknown.map((f) => f.type),
      ['ai-edit/error'],
    );
    assert.match(unknown[0].payload.message, /no engine @nobody.*@ai, @slow, @broken, @claude, @gpt/);
    assert.match(unknown[0].payload.message, /your own agent \(kiln ai-edit serve --engine nobody\)/);
    // References: the owner's own document is read; another account's is not (to the owner it does not exist).
    await createNode(await actingAs(kiln.services, o.p.id), {
      ownerId: o.p.id,
      parentId: 0,
      type: 'site',
      name: `notes-${o.p.username}.html`,
      html: '<!doctype html><html><body>Remember the milk</body></html>',
    });
    const page = `<html><body><section>${ELEMENT}</section><footer>Footer text</footer></body></html>`;
    const ok = await answers(
      o,
      await ask(o, `@page use @notes-${o.p.username}.html`, {
        contextRefs: [`notes-${o.p.username}.html`],
        pageHTML: page,
      }),
    );
    assert.equal(ok.at(-1)!.type, 'ai-edit/done', JSON.stringify(ok.at(-1)));
    const prompt = readFileSync(path.join(dir, 'edit/prompt.txt'), 'utf8');
    assert.match(prompt, /Remember the milk/);
    assert.match(prompt, /Footer text/);
    const bob = kiln.client();
    const b = await signedIn(kiln, bob);
    await createNode(await actingAs(kiln.services, b.id), {
      ownerId: b.id,
      parentId: 0,
      type: 'site',
      name: `diary-${b.username}.html`,
      html: '<!doctype html><html><body>Bob’s secret</body></html>',
    });
    const theirs = await answers(o, await ask(o, 'use it', { contextRefs: [`diary-${b.username}.html`] }));
    assert.equal(theirs.at(-1)!.type, 'ai-edit/error');
    assert.match(theirs.at(-1)!.payload.message, /no such document or text file of yours/);
    // Too large for the engine: refused before anything is sent.
    const huge = await answers(
      o,
      await ask(o, 'shorten', { elementHTML: `<p>${'x'.repeat(limits.aiEdit.promptBytes)}</p>` }),
    );
    assert.match(huge.at(-1)!.payload.message, /too large for AI editing/);
  } finally {
    o.bus.close();
  }
});

test('cancel ends the engine process, and nothing more is sent for that request', async () => {
  const o = await ownerWithPage();
  try {
    const id = await ask(o, '@slow take your time');
    const ack = await o.bus.next({ timeoutMs: 30_000 });
    assert.equal(ack.json.type === 'ai-edit/request' ? (await o.bus.next()).json.type : ack.json.type, 'ai-edit/ack');
    const pid = await until(() => pidIn(path.join(dir, 'slow/engine.pid')), { what: 'the engine started' });
    await until(() => isAlive(pid), { what: 'the engine runs' });
    await o.main
      .on(o.host)
      .post(
        '/_/bus/send',
        { channel: 'ai-edit', type: 'ai-edit/cancel', v: 1, sender: 'page-test01', payload: { id } },
        { headers: { origin: `http://${o.host}`, 'sec-fetch-site': 'same-origin' } },
      );
    await until(() => !isAlive(pid), { what: 'the engine process is gone after the cancel' });
    // A later request is answered; nothing of the cancelled one came before its answer.
    const next = await ask(o, 'again');
    for (;;) {
      const f = (await o.bus.next({ timeoutMs: 30_000 })).json;
      assert.ok(!(f.payload?.id === id && ['ai-edit/done', 'ai-edit/error'].includes(f.type)), JSON.stringify(f));
      if (f.payload?.id === next && f.type === 'ai-edit/done') break;
    }
  } finally {
    o.bus.close();
  }
});

test('HTTP engines: the Anthropic Messages and OpenAI-compatible streams become deltas and done; the key goes to the engine only', async () => {
  const o = await ownerWithPage();
  try {
    for (const [engine, model, url] of [
      ['claude', 'claude-stand-in', '/v1/messages'],
      ['gpt', 'gpt-stand-in', '/v1/chat/completions'],
    ] as const) {
      const before = received.length;
      const got = await answers(o, await ask(o, `@${engine} warmer please`));
      const done = got.at(-1)!;
      assert.equal(done.type, 'ai-edit/done', JSON.stringify(done));
      assert.equal(done.payload.html, '<p data-edit-id="intro">Hello there — from the model</p>');
      assert.equal(done.payload.model, model);
      assert.ok(got.filter((f) => f.type === 'ai-edit/delta').length >= 2, 'streamed in pieces');
      assert.equal(received.length, before + 1);
      const r = received.at(-1)!;
      assert.equal(r.path, url);
      assert.equal(r.body.stream, true);
      if (engine === 'claude') {
        assert.equal(r.headers['x-api-key'], API_KEY);
        assert.equal(r.headers['anthropic-version'], '2023-06-01');
        assert.equal(r.body.model, 'claude-test-model');
        assert.match(r.body.system, /exactly one complete <p> element/);
        assert.match(r.body.messages[0].content, /warmer please/);
        assert.ok(r.body.messages[0].content.includes(ELEMENT));
        assert.ok(Buffer.byteLength(r.body.system + r.body.messages[0].content) <= limits.aiEdit.promptBytes);
      } else {
        assert.equal(r.headers.authorization, `Bearer ${API_KEY}`);
        assert.equal(r.body.model, 'gpt-test-model');
        assert.equal(r.body.messages[0].role, 'system');
        assert.ok(r.body.messages[1].content.includes(ELEMENT));
      }
    }
    assert.ok(!o.bus.raw.includes(API_KEY), 'the key never reaches the page');
    const meta = await kiln.client(o.host).get('/_/meta');
    assert.ok(!meta.text.includes(API_KEY));
    assert.equal(meta.json.bus.aiEdit.builtIn, true);
    assert.deepEqual(
      meta.json.bus.aiEdit.engines.map((e: { name: string }) => e.name),
      ['ai', 'slow', 'broken', 'claude', 'gpt'],
    );
  } finally {
    o.bus.close();
  }
});

test('an owner’s own agent (its sync key) that acks first takes the request: the built-in handler stays quiet', async () => {
  const o = await ownerWithPage();
  const key = await createSyncKey(kiln.services, o.p.id);
  const agent = await SseClient.open({
    port,
    host: o.host,
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { 'x-api-key': key.key },
  });
  try {
    await agent.comment('connected');
    const id = await ask(o, 'make it shine');
    const req = await agent.next();
    assert.equal(req.json.type, 'ai-edit/request');
    const post = (type: string, payload: unknown) =>
      kiln
        .client(o.host)
        .post(
          '/_/bus/send',
          { channel: 'ai-edit', type, v: 1, sender: 'agent-mine', payload },
          { headers: { 'x-api-key': key.key } },
        );
    assert.equal((await post('ai-edit/ack', { id })).status, 200);
    assert.equal((await post('ai-edit/done', { id, html: '<p data-edit-id="intro">Mine</p>' })).status, 200);
    const got = await answers(o, id);
    assert.deepEqual(
      got.map((f) => `${f.sender} ${f.type}`),
      ['agent-mine ai-edit/ack', 'agent-mine ai-edit/done'],
    );
    // Past the built-in handler's grace: it never answered.
    const later = await ask(o, 'another');
    for (;;) {
      const f = (await o.bus.next({ timeoutMs: 30_000 })).json;
      assert.ok(!(f.payload?.id === id && f.sender !== 'agent-mine' && f.sender !== 'page-test01'), JSON.stringify(f));
      if (f.payload?.id === later && f.type === 'ai-edit/done') break;
    }
  } finally {
    agent.close();
    o.bus.close();
  }
});

test('a request in a shape hyperclayjs does not send waits the same grace: the owner’s agent may take it; untaken, the page hears it is malformed', async () => {
  const o = await ownerWithPage();
  const key = await createSyncKey(kiln.services, o.p.id);
  const agent = await SseClient.open({
    port,
    host: o.host,
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { 'x-api-key': key.key },
  });
  // Not hyperclayjs's shape (no element tag, an `instruction` of the agent's own): Kiln's engines cannot
  // take it, but the owner's agent may understand it.
  const own = { tag: 'not a tag', instruction: 'make it shine' };
  try {
    await agent.comment('connected');
    const id = await ask(o, 'in my own words', own);
    const req = await agent.next();
    assert.equal(req.json.type, 'ai-edit/request');
    assert.equal(req.json.payload.id, id);
    const post = (type: string, payload: unknown) =>
      kiln
        .client(o.host)
        .post(
          '/_/bus/send',
          { channel: 'ai-edit', type, v: 1, sender: 'agent-mine', payload },
          { headers: { 'x-api-key': key.key } },
        );
    assert.equal((await post('ai-edit/ack', { id })).status, 200);
    assert.equal((await post('ai-edit/done', { id, html: '<p data-edit-id="intro">Mine</p>' })).status, 200);
    const got = await answers(o, id);
    assert.deepEqual(
      got.map((f) => `${f.sender} ${f.type}`),
      ['agent-mine ai-edit/ack', 'agent-mine ai-edit/done'],
    );
    // One the agent leaves: past the grace, the built-in handler says it is malformed (and never answered
    // the first, whose grace ended before this one's).
    const later = await ask(o, 'again in my own words', own);
    for (;;) {
      const f = (await o.bus.next({ timeoutMs: 30_000 })).json;
      assert.ok(!(f.payload?.id === id && f.sender !== 'agent-mine' && f.sender !== 'page-test01'), JSON.stringify(f));
      if (f.payload?.id === later && f.type === 'ai-edit/error') {
        assert.match(f.payload.message, /malformed/);
        break;
      }
    }
  } finally {
    agent.close();
    o.bus.close();
  }
});

test('the admin panel shows the engines (never a key) and which plans include AI editing; a plan left out hears why', async () => {
  const o = await ownerWithPage();
  const admin = kiln.client();
  await signedIn(kiln, admin, { isSuperadmin: true });
  const setPlans = (plans: Record<string, string>) =>
    admin.post('/_/admin/ai-edit', plans, { headers: { origin: `http://${kiln.config.rootDomain}` } });
  try {
    const panel = await admin.get('/_/admin');
    assert.equal(panel.status, 200);
    assert.deepEqual(
      panel.json.aiEdit.engines.map((e: { name: string; isDefault: boolean }) => `${e.name}${e.isDefault ? '*' : ''}`),
      ['ai*', 'slow', 'broken', 'claude', 'gpt'],
    );
    assert.match(panel.json.aiEdit.engines[3].describe, /Anthropic Messages API.*claude-test-model/);
    assert.ok(!panel.text.includes(API_KEY));
    const page = await admin.page('/_/admin');
    assert.match(page.text, /AI editing/);
    assert.ok(!page.text.includes(API_KEY));
    const saved = await setPlans({ personal: '1', maker: '1' });
    assert.equal(saved.status, 200, saved.text);
    assert.match(saved.json.msg, /included in the personal, maker plans/);
    assert.deepEqual((await admin.get('/_/admin')).json.aiEdit.plans, { free: false, personal: true, maker: true });
    const refused = await answers(o, await ask(o, 'please'));
    assert.equal(refused.at(-1)!.type, 'ai-edit/error');
    assert.match(refused.at(-1)!.payload.message, /not included in the free plan/);
    assert.equal((await kiln.client().post('/_/admin/ai-edit', { free: '1' })).status, 401);
  } finally {
    await setPlans({ free: '1', personal: '1', maker: '1' });
    o.bus.close();
  }
});

test('a request that runs past AI_EDIT_TIMEOUT_MS ends its engine and tells the page', async () => {
  const k = await startKiln({
    env: { AI_EDIT_COMMAND: `"${process.execPath}" ${ENGINE} ${dir}/late slow`, AI_EDIT_TIMEOUT_MS: '1500' },
  });
  try {
    const main = k.client();
    const p = await signedIn(k, main);
    const host = k.hostOf(p.username);
    const bus = await SseClient.open({
      port: Number(new URL(k.url).port),
      host,
      path: '/_/bus/subscribe?channel=ai-edit',
      headers: { cookie: main.jar.header(host) ?? '', 'sec-fetch-site': 'same-origin' },
    });
    try {
      await bus.comment('connected');
      const sent = await main.on(host).post(
        '/_/bus/send',
        {
          channel: 'ai-edit',
          type: 'ai-edit/request',
          v: 1,
          sender: 'page-late',
          payload: { id: 'req-late', tag: 'p', elementHTML: ELEMENT, comment: 'take forever' },
        },
        { headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' } },
      );
      assert.equal(sent.status, 200);
      let end: { type: string; payload: { message?: string } };
      do end = (await bus.next({ timeoutMs: 30_000 })).json;
      while (end.type !== 'ai-edit/error' && end.type !== 'ai-edit/done');
      assert.equal(end.type, 'ai-edit/error');
      assert.match(end.payload.message ?? '', /took longer than 1.5 s/);
      const pid = await until(() => pidIn(path.join(dir, 'late/engine.pid')), { what: 'the engine’s pid' });
      await until(() => !isAlive(pid), { what: 'the engine process ended at the timeout' });
    } finally {
      bus.close();
    }
  } finally {
    await k.stop();
  }
});

test('with an engine, a new document from a starter loads AI editing (its data-edit-id sections answer Ctrl+K); without one it does not', async () => {
  const main = kiln.client();
  const p = await signedIn(kiln, main);
  const made = await main.post(
    '/_/dashboard/nodes',
    { type: 'site', name: `ai-notes-${p.username}.html`, starter: 'notes', parentId: 0 },
    { headers: { accept: 'application/json' } },
  );
  assert.equal(made.status, 201, made.text);
  const page = (await kiln.client(kiln.hostOf(p.username)).get(`/ai-notes-${p.username}.html`)).text;
  assert.match(page, /hyperclay\.js\?preset=standard&amp;features=ai-edit"/);
  assert.match(page, /data-edit-id="todo"/);
  // A Kiln with no engine: the same starter without the feature (nothing would answer its panel).
  const { starterDocument } = await import('../src/nodes/starters.ts');
  assert.doesNotMatch(starterDocument('notes', 'x.html').toString(), /ai-edit/);
  assert.match(
    starterDocument('contact', 'x.html', { aiEdit: true }).toString(),
    /features=ai-edit,send-message,behavior-collector/,
  );
});
