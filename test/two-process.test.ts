// Two Kiln processes (`node bin/kiln.js serve` children) on one PostgreSQL and one Redis behave as one:
// a save through one reaches streams opened on the other, and conditional writes spread over both
// have exactly one winner. Runs only with KILN_TEST_STORAGE=postgres (which brings Redis).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { storage, freshPostgres } from './support/kiln.ts';
import { spawnKilns, type ChildKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { SseClient } from './support/sse.ts';
import { hotAnswers } from './support/metrics.ts';
import { until } from './support/wait.ts';
import { newPerson, sessionsFor, actingAs } from './support/people.ts';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { createNode } from '../src/nodes/tree.ts';
import { versionsOf } from '../src/store/versions.ts';
import { versionContent } from '../src/save/history.ts';
import { writeSetting } from '../src/store/settings.ts';
import { REPO } from './support/child.ts';

const REDIS_URL = process.env.KILN_TEST_REDIS_URL;
const skip =
  storage === 'postgres' && REDIS_URL
    ? false
    : 'two processes need PostgreSQL and Redis: run with KILN_TEST_STORAGE=postgres (bash scripts/test.sh)';

const ROOT = 'kiln.localhost:8080';
const checksumOf = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);
const doc = (text: string) => `<!doctype html>\n<html><body><p>${text}</p></body></html>\n`;

let a: ChildKiln;
let b: ChildKiln;
let dropDb: (() => Promise<void>) | undefined;
const dirs: string[] = [];
let person: { id: number; username: string };
let token: string;
let key: string;
let nodeId: number;
const NAME = 'shared.html';
let pgUrl: string;
const env = (dir: string) => ({
  DATABASE_URL: pgUrl,
  REDIS_URL: REDIS_URL!,
  DATA_DIR: dir,
  ROOT_DOMAIN: ROOT,
  LOG_LEVEL: 'error',
  // An AI engine in both (test/support/ai-engine.mjs): the daily budget is counted by both together.
  AI_EDIT_COMMAND: `"${process.execPath}" ${path.join(REPO, 'test/support/ai-engine.mjs')} ${path.join(dir, 'engine')} edit`,
});
const AI_BUDGET = 3;

before(async () => {
  if (skip) return;
  const pgdb = await freshPostgres();
  dropDb = pgdb.drop;
  pgUrl = pgdb.url;
  for (let i = 0; i < 3; i++) dirs.push(mkdtempSync(path.join(os.tmpdir(), 'kiln-2p-')));
  // Set up the database (migrations, a person, a document, a key, a session) from this process.
  const setup = await createServices(loadConfig(env(dirs[2])));
  try {
    const created = await createPerson(setup, newPerson({ plan: 'personal' }));
    person = { id: created.id, username: created.username };
    token = (await sessionsFor(setup.database.db, setup.config, person.id, person.username)).host;
    key = (await createSyncKey(setup, person.id)).key;
    nodeId = (
      await createNode(await actingAs(setup, person.id), {
        ownerId: person.id,
        parentId: 0,
        type: 'site',
        name: NAME,
        html: doc('v1'),
      })
    ).id;
    for (const plan of ['free', 'personal', 'maker'])
      await writeSetting(setup.database.db, `ai-edit-requests-${plan}`, String(AI_BUDGET));
  } finally {
    await closeServices(setup);
  }
  [a, b] = await spawnKilns([env(dirs[0]), env(dirs[1])]);
});

after(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  await dropDb?.();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const host = () => `${person.username}.${ROOT}`;
const url = () => `http://${host()}/${NAME}`;

function saver(k: ChildKiln) {
  const c = new Client(k.port, host());
  c.jar.store(host(), `__Host-auth_token=${token}; Path=/`);
  return (html: string, headers: Record<string, string> = {}) =>
    c.post('/_/save', html, {
      headers: {
        'content-type': 'text/plain;charset=UTF-8',
        'document-url': url(),
        origin: `http://${host()}`,
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
    });
}

function syncStream(k: ChildKiln) {
  return SseClient.open({ port: k.port, host: ROOT, path: '/_/sync/stream', headers: { 'x-api-key': key } });
}
function savedLane(k: ChildKiln) {
  return SseClient.open({
    port: k.port,
    host: host(),
    path: `/_/sync?document-url=${encodeURIComponent(url())}&lane=saved`,
  });
}

test('a save through one process reaches the streams opened on the other (and its own), once each', {
  skip,
}, async () => {
  const onB = await syncStream(b);
  const laneOnB = await savedLane(b);
  const onA = await syncStream(a);
  try {
    for (const s of [onB, laneOnB, onA]) {
      assert.equal(s.status, 200, s.body);
      await s.comment('connected');
    }
    const v2 = doc('saved through A');
    const res = await saver(a)(v2);
    assert.equal(res.status, 200, res.text + a.output());
    for (const s of [onB, onA]) {
      const f = await s.next();
      assert.equal(f.json.type, 'node-saved');
      assert.equal(f.json.nodeId, nodeId);
      assert.equal(f.json.content, v2);
      assert.equal(f.json.checksum, checksumOf(v2));
    }
    const lane = await laneOnB.next();
    assert.equal(lane.json.html, v2);
    // Fence through B: the next frame everywhere is B's save — nothing arrived twice.
    const v3 = doc('saved through B');
    assert.equal((await saver(b)(v3)).status, 200);
    for (const s of [onB, onA]) assert.equal((await s.next()).json.content, v3);
    assert.equal((await laneOnB.next()).json.html, v3);
    assert.ok(Number(onB.frames[1].id) > Number(onB.frames[0].id), 'ids grow whichever process took the write');
    assert.deepEqual(
      onA.frames.map((f) => f.id),
      onB.frames.map((f) => f.id),
      'both processes number the events alike',
    );
  } finally {
    for (const s of [onB, laneOnB, onA]) s.close();
  }
});

test('20 concurrent saves with the same If-Match over both processes: one 200, nineteen 412, the winner’s bytes stored', {
  skip,
}, async () => {
  const current = await new Client(a.port, host()).get(`/${NAME}`);
  assert.equal(current.status, 200);
  const etag = String(current.headers.etag);
  const stream = await syncStream(b);
  try {
    await stream.comment('connected');
    const saves = [saver(a), saver(b)];
    const bodies = Array.from({ length: 20 }, (_, i) => doc(`contender ${i}`));
    const answers = await Promise.all(bodies.map((body, i) => saves[i % 2](body, { 'if-match': etag })));
    const statuses = answers.map((r) => r.status);
    assert.equal(
      statuses.filter((s) => s === 200).length,
      1,
      `statuses: ${statuses.join(' ')}\n${answers.map((r) => r.text).join('\n')}`,
    );
    assert.equal(statuses.filter((s) => s === 412).length, 19, `statuses: ${statuses.join(' ')}`);
    const winner = statuses.indexOf(200);
    for (const r of answers.filter((r) => r.status === 412)) {
      assert.equal(r.json.code, 'conflict');
      assert.equal(r.json.msgType, 'error');
      assert.match(r.json.etag, /^[0-9a-f]{16}$/);
    }
    for (const k of [a, b]) {
      const stored = await new Client(k.port, host()).get(`/${NAME}`);
      assert.equal(stored.text, bodies[winner]);
      assert.equal(stored.headers.etag, `"${checksumOf(bodies[winner])}"`);
    }
    // The one change is announced once.
    const f = await stream.next();
    assert.equal(f.json.content, bodies[winner]);
    const fence = doc('after the race');
    assert.equal((await saver(a)(fence)).status, 200);
    assert.equal((await stream.next()).json.content, fence);
  } finally {
    stream.close();
  }
});

test('40 concurrent saves of one document over both processes, no If-Match: every one 200 and a version of its own, numbered in a row, each reading back as its bytes', {
  skip,
}, async () => {
  // A save reads the document (locked) and its newest version in one statement; when it waited on the lock for the
  // other process's save, the version it read is from before that save and must be read again (src/store/saves.ts).
  const saves = [saver(a), saver(b)];
  const bodies = Array.from({ length: 40 }, (_, i) => doc(`writer ${i}`));
  const answers = await Promise.all(bodies.map((body, i) => saves[i % 2](body)));
  assert.deepEqual(
    answers.map((r) => r.status),
    bodies.map(() => 200),
    answers.map((r) => r.text).join('\n'),
  );
  const check = await createServices(loadConfig({ ...env(dirs[2]), LOG_LEVEL: 'silent' }));
  try {
    const versions = await versionsOf(check.database.db, nodeId);
    const numbers = versions.map((v) => v.backup_number).sort((x, y) => x - y);
    const newest = numbers.at(-1)!;
    assert.deepEqual(
      numbers.slice(-40),
      Array.from({ length: 40 }, (_, i) => newest - 39 + i),
    );
    const read = await Promise.all(versions.slice(0, 40).map((v) => versionContent(check.database.db, v.id)));
    assert.deepEqual(read.map((r) => r.bytes.toString('utf8')).sort(), [...bodies].sort());
  } finally {
    await closeServices(check);
  }
});

test('20 concurrent sync PUTs with the same If-Match over both processes: one 200, nineteen 412 {code: conflict, etag}, the winner’s bytes stored', {
  skip,
}, async () => {
  const current = await new Client(a.port, ROOT).get(`/_/sync/nodes/${nodeId}/content`, {
    headers: { 'x-api-key': key },
  });
  assert.equal(current.status, 200, current.text);
  const etag = current.json.checksum as string;
  const stream = await syncStream(a);
  try {
    await stream.comment('connected');
    const bodies = Array.from({ length: 20 }, (_, i) => doc(`sync contender ${i}`));
    const answers = await Promise.all(
      bodies.map((content, i) =>
        new Client((i % 2 ? a : b).port, ROOT).request('PUT', `/_/sync/nodes/${nodeId}/content`, {
          headers: { 'x-api-key': key, 'if-match': `"${etag}"` },
          body: { content },
        }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((st) => st === 200).length, 1, `statuses: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((st) => st === 412).length, 19, `statuses: ${statuses.join(' ')}`);
    const winner = statuses.indexOf(200);
    assert.equal(answers[winner].json.checksum, checksumOf(bodies[winner]));
    for (const r of answers.filter((r) => r.status === 412)) {
      assert.equal(r.json.code, 'conflict');
      assert.equal(r.json.etag, checksumOf(bodies[winner]));
    }
    for (const k of [a, b]) {
      const stored = await new Client(k.port, ROOT).get(`/_/sync/nodes/${nodeId}/content`, {
        headers: { 'x-api-key': key },
      });
      assert.equal(stored.json.content, bodies[winner]);
    }
    const f = await stream.next();
    assert.equal(f.json.content, bodies[winner]);
    assert.equal(stream.unread().length, 0);
  } finally {
    stream.close();
  }
});

test('a page one process answers from memory (its hot path) changes there as soon as a save lands through the other', {
  skip,
}, async () => {
  const visitor = () => new Client(b.port, host());
  const metricsOf = (k: ChildKiln) => hotAnswers(new Client(k.port, ROOT));
  // The first request starts B's watch of the account, the second is kept, the third comes from memory.
  for (let i = 0; i < 2; i++) assert.equal((await visitor().get(`/${NAME}`)).status, 200);
  const n = await metricsOf(b);
  const kept = await visitor().get(`/${NAME}`);
  assert.equal(await metricsOf(b), n + 1, 'B answered from memory');
  const html = doc(`hot ${Date.now()}`);
  const saved = await saver(a)(html);
  assert.equal(saved.status, 200, saved.text);
  assert.notEqual(kept.body.toString(), html);
  // The event reaches B through Redis (within milliseconds); without it B would keep its answer for a minute
  // (ANSWER_TTL_MS), far longer than the test waits.
  let body = '';
  await until(async () => (body = (await visitor().get(`/${NAME}`)).body.toString()) === html, {
    what: "B to answer with A's save",
    timeout: 30_000,
  }).catch(() => assert.equal(body, html));
});

test(`AI edits asked at once through both processes against a daily budget of ${AI_BUDGET}: ${AI_BUDGET} run, the next is refused`, {
  skip,
}, async () => {
  const bus = await SseClient.open({
    port: a.port,
    host: host(),
    path: '/_/bus/subscribe?channel=ai-edit',
    headers: { cookie: `__Host-auth_token=${token}`, 'sec-fetch-site': 'same-origin' },
  });
  try {
    assert.equal(bus.status, 200, bus.body);
    await bus.comment('connected');
    const ask = (k: ChildKiln, id: string) => {
      const c = new Client(k.port, host());
      c.jar.store(host(), `__Host-auth_token=${token}; Path=/`);
      return c.post(
        '/_/bus/send',
        {
          channel: 'ai-edit',
          type: 'ai-edit/request',
          v: 1,
          sender: 'page-2p',
          payload: { id, tag: 'p', elementHTML: '<p>Hi</p>', comment: 'warmer', contextRefs: [] },
        },
        { headers: { origin: `http://${host()}`, 'sec-fetch-site': 'same-origin', 'page-url': url() } },
      );
    };
    // Two per process at once (each process runs at most two of an account's at a time).
    const ids = ['ai-a1', 'ai-b1', 'ai-a2', 'ai-b2'];
    const sent = await Promise.all(ids.map((id, i) => ask(i % 2 ? b : a, id)));
    for (const r of sent) assert.equal(r.status, 200, r.text);
    const ends = new Map<string, { type: string; payload: { code?: string } }>();
    while (ends.size < ids.length) {
      const f = (await bus.next({ timeoutMs: 30_000 })).json;
      if (ids.includes(f.payload?.id) && (f.type === 'ai-edit/done' || f.type === 'ai-edit/error'))
        ends.set(f.payload.id, f);
    }
    const outcomes = [...ends.values()].map((f) => (f.type === 'ai-edit/done' ? 'done' : f.payload.code));
    assert.deepEqual(outcomes.sort(), ['ai-edit-budget', 'done', 'done', 'done'], JSON.stringify([...ends]));
    // And later, through either process: still refused.
    for (const [k, id] of [
      [a, 'ai-a3'],
      [b, 'ai-b3'],
    ] as const) {
      assert.equal((await ask(k, id)).status, 200);
      for (;;) {
        const f = (await bus.next({ timeoutMs: 30_000 })).json;
        if (f.payload?.id !== id || f.type === 'ai-edit/request' || f.type === 'ai-edit/ack') continue;
        assert.equal(f.type, 'ai-edit/error', JSON.stringify(f));
        assert.equal(f.payload.code, 'ai-edit-budget');
        break;
      }
    }
  } finally {
    bus.close();
  }
});
