// The data API never blocks the server: a pathological document (100,000 nested <div>s, 2.5 MB, which
// htmlparser2 takes seconds to parse) answers `too-expensive` on `/_/api` and `?data=` while other requests
// are served, bad `?data=` rules on it answer 400 without the document being parsed, and the extraction pool
// recovers when a thread has to be stopped. No answer is held to a time: what each test shows is an ordering (others
// answered while the pathological request was still in flight), a counter of the pool, or an answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { startKiln, type TestKiln } from './support/kiln.ts';
import type { Res } from './support/client.ts';
import { addDocument, apiTag, assertDataAnswer, assertFailure, dataUrl, owner, type Owner } from './data.support.ts';
import { ExtractionPool } from '../src/data/pool.ts';
import type { Clock } from '../src/clock.ts';
import { until, within } from './support/wait.ts';

let kiln: TestKiln;
let alice: Owner;
let bob: Owner;

/** The server's clock: real time, except that `hold()` stops it until `release()`. A test that must stay within a
 *  time to live of the server's (a parse over the budget is remembered for TOO_EXPENSIVE_TTL_MS) holds it, so a
 *  slow machine cannot carry it past that time. */
let heldAt: number | null = null;
let behind = 0;
const clock: Clock = { now: () => new Date(heldAt ?? Date.now() - behind) };
const hold = () => {
  heldAt = Date.now() - behind;
};
const release = () => {
  behind = Date.now() - heldAt!;
  heldAt = null;
};

const DEPTH = 100_000;
/** 2.5 MB: 100,000 nested <div>s, with an api tag in the head. */
const DEEP = `<!doctype html><html><head>${apiTag({ first: 'div' })}</head><body>${'<div class="level">'.repeat(DEPTH)}deep${'</div>'.repeat(DEPTH)}</body></html>`;
const PAGE = `<!doctype html><html><head><title>Bob</title>${apiTag({ title: 'title' })}</head><body><h1>Bob's page</h1></body></html>`;

before(async () => {
  kiln = await startKiln({ clock });
  alice = await owner(kiln);
  bob = await owner(kiln);
  assert.ok(DEEP.length >= 2_000_000, `${DEEP.length} characters`);
  await addDocument(kiln, alice, 'deep.html', DEEP);
  // The same with other bytes: a document of its own for `?data=` (a parse over the budget is remembered
  // per checksum for a couple of seconds).
  await addDocument(kiln, alice, 'deep-data.html', DEEP.replace('<body>', '<body><!-- data -->'));
  await addDocument(kiln, bob, 'page.html', PAGE);
  // Start the pool's threads and check the normal path first.
  const warm = await bob.anonymous.get('/_/api/page.html');
  assertDataAnswer(warm, 200);
  assert.deepEqual(warm.json, { title: 'Bob' });
});
after(() => kiln.stop());

/** Runs `pathological` while GETs of Bob's page (another account's host) keep going, one after another, as long
 *  as it is in flight; all must answer. `whileInFlight`: how many of them answered before it did. */
async function whileOthersRead(pathological: () => Promise<Res>) {
  let done = false;
  const slow = pathological().finally(() => (done = true));
  const others: Res[] = [];
  let whileInFlight = 0;
  // At least one, and more as long as the pathological request is in flight.
  do {
    others.push(await bob.anonymous.get('/page.html'));
    if (!done) whileInFlight++;
  } while (!done && others.length < 200);
  return { slow: await slow, others, whileInFlight };
}

test('/_/api on 100,000 nested divs answers too-expensive, and the server keeps answering others meanwhile', async () => {
  const tasks = kiln.services.extractions.stats.tasks;
  const { slow, others, whileInFlight } = await whileOthersRead(() => alice.anonymous.get('/_/api/deep.html'));
  assertFailure(slow, 400, 'too-expensive', /too expensive/i);
  // Parsed in the pool (its thread gave up at its budget), never on the server's thread.
  assert.equal(kiln.services.extractions.stats.tasks, tasks + 1, 'extracted in the pool');
  for (const o of others) {
    assert.equal(o.status, 200);
    assert.match(o.text, /Bob's page/);
  }
  // The server's thread was free all along: another host's page answered before the pathological request did.
  assert.ok(whileInFlight > 0, `${others.length} other requests, none answered while it was in flight`);
});

test('?data= on 100,000 nested divs answers too-expensive, and the server keeps answering others meanwhile', async () => {
  const tasks = kiln.services.extractions.stats.tasks;
  // The server's clock stands still until the second request: the parse over the budget is still remembered
  // then (TOO_EXPENSIVE_TTL_MS), however long the first one took on a busy machine.
  hold();
  try {
    const { slow, others, whileInFlight } = await whileOthersRead(() =>
      alice.anonymous.get(dataUrl('/deep-data.html', { deepest: 'div:not(:has(div))', n: 'div@class' })),
    );
    assertFailure(slow, 400, 'too-expensive', /too expensive/i);
    for (const o of others) assert.equal(o.status, 200);
    assert.ok(whileInFlight > 0, `${others.length} other requests, none answered while it was in flight`);
    assert.equal(kiln.services.extractions.stats.tasks, tasks + 1, 'extracted in the pool');
    // Other rules on the same document: the same answer (the parse alone is over the budget), without
    // parsing again.
    const again = await alice.anonymous.get(dataUrl('/deep-data.html', { other: 'body@class' }));
    assertFailure(again, 400, 'too-expensive');
    assert.equal(kiln.services.extractions.stats.tasks, tasks + 1, 'answered without a second parse');
  } finally {
    release();
  }
});

test('bad ?data= rules on the pathological document answer 400 without the document being parsed', async () => {
  const before = kiln.services.extractions.stats.tasks;
  const cases: Array<[string, string]> = [
    ['{a: ', 'rules-syntax'],
    [JSON.stringify({ a: 'div[[' }), 'selector'],
    [JSON.stringify({ a: 'div:unknown-pseudo(x)' }), 'selector'],
  ];
  for (const [rules, code] of cases) assertFailure(await alice.anonymous.get(dataUrl('/deep.html', rules)), 400, code);
  assert.equal(kiln.services.extractions.stats.tasks, before, 'no task reached the extraction pool');
});

test('after the pathological document, extractions on other documents answer normally', async () => {
  const res = await bob.anonymous.get(dataUrl('/page.html', { h: 'h1', t: 'title' }));
  assertDataAnswer(res, 200);
  assert.deepEqual(res.json, { h: "Bob's page", t: 'Bob' });
});

test("waiting for a free thread does not count against a task's budget; a wait past maxWaitMs answers busy", async () => {
  // About 3 MB of ordinary HTML: far longer to parse (half a second and more) than the small page's whole budget,
  // which is ample for the page itself and for a collection of the big parse's garbage on its thread (a 20 ms
  // budget was used up by one under load: its CPU counts wall-clock time too once half is gone).
  const big = Buffer.from(
    `<html><body>${'<p class="x">Some text <b>bold</b> <a href="/y">link</a></p>'.repeat(48_000)}</body></html>`,
  );
  const SMALL_BUDGET = 200;
  // However long the big parse takes on a busy machine, the page waits for it (the default maxWaitMs, 1 s of
  // wall-clock time, answered it busy under load).
  const pool = new ExtractionPool({ threads: 1, maxWaitMs: 60_000 });
  try {
    await pool.run({ checksum: 'warm', bytes: Buffer.from(PAGE), rules: { kind: 'api' } });
    const first = pool.run({
      checksum: 'big',
      bytes: big,
      rules: { kind: 'query', text: '{n: p@class}' },
      maxMs: 20_000,
    });
    const t = performance.now();
    const second = await pool.run({
      checksum: 'page',
      bytes: Buffer.from(PAGE),
      rules: { kind: 'api' },
      maxMs: SMALL_BUDGET,
    });
    const waited = performance.now() - t;
    assert.deepEqual(second.result, { ok: true, data: { title: 'Bob' } }, `after ${waited.toFixed(0)} ms`);
    assert.ok(waited > SMALL_BUDGET, `the page waited ${waited.toFixed(0)} ms: longer than its budget`);
    assert.deepEqual((await first).result, { ok: true, data: { n: 'x' } });
  } finally {
    await pool.close();
  }
  const impatient = new ExtractionPool({ threads: 1, maxWaitMs: 10 });
  try {
    await impatient.run({ checksum: 'warm', bytes: Buffer.from(PAGE), rules: { kind: 'api' } });
    const [first, second] = await Promise.all([
      impatient.run({ checksum: 'big', bytes: big, rules: { kind: 'query', text: '{n: p@class}' }, maxMs: 20_000 }),
      impatient.run({ checksum: 'page', bytes: Buffer.from(PAGE), rules: { kind: 'api' } }),
    ]);
    assert.deepEqual(first.result, { ok: true, data: { n: 'x' } });
    assert.equal(!second.result.ok && second.result.code, 'too-expensive');
    assert.match(!second.result.ok ? second.result.error : '', /busy/);
  } finally {
    await impatient.close();
  }
});

test('a task answered over budget is stopped by its own thread: the next task answers, no thread replaced', async () => {
  // A thread that has not stopped its task a minute after the pool answered it would be terminated and replaced
  // (killMs): far longer than a thread that reads its stop flag takes, even on a busy machine.
  const pool = new ExtractionPool({ threads: 1, maxMs: 100, killMs: 60_000 });
  try {
    const deep = await pool.run({
      checksum: 'deep',
      bytes: Buffer.from(DEEP),
      rules: { kind: 'query', text: '{a: div}' },
    });
    assert.equal(!deep.result.ok && deep.result.code, 'too-expensive');
    // The next task waits for the thread to be free: it answers once the thread has stopped the deep one.
    const ok = await within(
      pool.run({ checksum: 'page', bytes: Buffer.from(PAGE), rules: { kind: 'api' } }),
      30_000,
      'the next task (its thread did not stop the task over budget)',
    );
    assert.deepEqual(ok.result, { ok: true, data: { title: 'Bob' } });
    // On the same thread: it stopped the task itself (nothing was terminated, nothing died).
    assert.equal(pool.stats.terminated, 0);
    assert.equal(pool.stats.crashed, 0);
  } finally {
    await pool.close();
  }
});

test('the pool stops a thread that runs past its budget, answers too-expensive, and recovers', async () => {
  // A budget the thread believes is 10 s, answered by the pool after 500 ms of CPU time and stopped at once
  // (killMs = graceMs: no time to stop on its own).
  const pool = new ExtractionPool({ threads: 1, maxMs: 10_000, graceMs: -9_500, killMs: -9_500 });
  try {
    const bytes = Buffer.from(DEEP);
    const reply = await pool.run({ checksum: 'deep', bytes, rules: { kind: 'query', text: '{a: div}' } });
    assert.equal(reply.result.ok, false);
    assert.equal(!reply.result.ok && reply.result.code, 'too-expensive');
    assert.equal(reply.phase, 'parse');
    // Answered by the pool at its budget (`late`), not by the thread at the 10 s it believes it has.
    assert.equal(pool.stats.late, 1);
    // And its thread stopped.
    await until(() => pool.stats.terminated > 0, { what: 'the thread to be stopped' });
    assert.equal(pool.stats.terminated, 1);
    // The replacement thread answers (with a budget of its own: a fresh thread on a busy machine may be slow).
    const ok = await pool.run({ checksum: 'page', bytes: Buffer.from(PAGE), rules: { kind: 'api' }, maxMs: 20_000 });
    assert.deepEqual(ok.result, { ok: true, data: { title: 'Bob' } });
    // Queued tasks beyond the bound answer at once.
    const small = new ExtractionPool({ threads: 1, maxQueue: 1 });
    try {
      const replies = await Promise.all(
        [1, 2, 3].map((i) => small.run({ checksum: `p${i}`, bytes: Buffer.from(PAGE), rules: { kind: 'api' } })),
      );
      assert.ok(replies.some((r) => !r.result.ok && r.result.code === 'too-expensive' && /busy/.test(r.result.error)));
      assert.ok(replies.some((r) => r.result.ok));
    } finally {
      await small.close();
    }
  } finally {
    await pool.close();
  }
});

/** The nice value of each thread of this process (Linux), by thread id. */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
      // After "pid (comm) ": state is field 3; nice is field 19.
      nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return nices;
}
const lowest = () => Math.max(...threadNices().values());

test('a task that uses more CPU than a normal one ever does runs at the lowest priority until it answers; normal tasks never do', {
  skip: !existsSync('/proc/thread-self') && 'threads have no nice value of their own here',
}, async () => {
  // A long grace (2 s past the budget) keeps the thread demoted long enough to be seen on a busy machine too.
  const pool = new ExtractionPool({ threads: 1, graceMs: 2_000 });
  try {
    const page = () => pool.run({ checksum: 'page', bytes: Buffer.from(PAGE), rules: { kind: 'api' } });
    for (let i = 0; i < 20; i++) assert.deepEqual((await page()).result, { ok: true, data: { title: 'Bob' } });
    assert.equal(pool.stats.demoted, 0);
    assert.equal(lowest(), 0);

    const deep = pool.run({ checksum: 'deep', bytes: Buffer.from(DEEP), rules: { kind: 'query', text: '{a: div}' } });
    const reply = await deep;
    assert.equal(!reply.result.ok && reply.result.code, 'too-expensive');
    assert.equal(pool.stats.demoted, 1);
    // What the system says of the thread right after the pool demoted it (a test sampling /proc from this thread
    // missed the moment on a loaded machine: the demotion and the answer came in one late tick).
    assert.equal(pool.stats.demotedNice, 19, 'the thread ran at nice 19 while it parsed');
    // Once the thread has finished (or was stopped), every thread is back at the server's priority, and the
    // next normal task answers.
    for (let i = 0; i < 300 && lowest() !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(lowest(), 0);
    assert.deepEqual((await page()).result, { ok: true, data: { title: 'Bob' } });
  } finally {
    await pool.close();
  }
});
