// A busy machine makes an extraction slower, never too expensive: on Linux the budget counts the CPU time of the
// extraction thread, not the time that passes. Here every thread of this process runs at the lowest priority
// against a busy loop per core, so a cheap task (a millisecond or two of CPU) takes longer than its whole budget
// in wall-clock time; it must answer all the same. (Before, a loaded CI machine answered `too-expensive` for a
// few hundred bytes of HTML.) This file runs in a process of its own: its threads stay at the lowest priority.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { ExtractionPool } from '../src/data/pool.ts';
import { until } from './support/wait.ts';

/** Well above what the task uses even here (a millisecond or two of CPU on a quiet machine; up to ten measured
 *  on a crowded two-core VM, where the busy loops slow the thread's own work too), well below the time it takes
 *  (a second or more at the lowest priority). At 20 ms the task was demoted as hostile (past half its budget)
 *  and failed there. */
const BUDGET_MS = 100;

/** About 20 KB: a millisecond or two to parse and extract on a quiet machine. */
function page(n: number): Buffer {
  const items = Array.from({ length: 300 }, (_, i) => `<li class="item" data-id="${i}"><b>Item ${i}</b></li>`);
  return Buffer.from(
    `<!doctype html><html><head><title>Page ${n}</title></head><body><ul>${items.join('')}</ul></body></html>`,
  );
}

test('on a busy machine a cheap extraction answers: its budget counts CPU time, not the time that passes', {
  skip: !existsSync('/proc/thread-self') && 'no per-thread CPU time here: budgets are wall-clock time',
}, async (t) => {
  const pool = new ExtractionPool({ threads: 1, maxMs: BUDGET_MS });
  const hogs: ChildProcess[] = [];
  const run = (n: number) =>
    pool.run({ checksum: `page-${n}`, bytes: page(n), rules: { kind: 'query', text: '{t: title, n: li@data-id}' } });
  try {
    // The thread starts and warms up at the normal priority.
    assert.deepEqual((await run(0)).result, { ok: true, data: { t: 'Page 0', n: '0' } });
    // The busy loops first (a process starts at the priority of the thread that starts it).
    const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    let looping = 0;
    for (let i = 0; i <= cores; i++) {
      const hog = spawn(process.execPath, ['-e', 'process.stdout.write("looping\\n"); for (;;) {}'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      hog.stdout!.once('data', () => looping++);
      hogs.push(hog);
    }
    for (const tid of readdirSync('/proc/self/task')) os.setPriority(Number(tid), 19);
    // Every one has started and is in its loop (past Node's start-up), competing with the thread.
    await until(() => looping === hogs.length, { what: 'the busy loops to run' });

    // At least 5 tasks, and on until one has taken longer than its whole budget in wall-clock time (what
    // this is about); how starved the thread is depends on the machine, so that is reported, not asserted.
    const walls: number[] = [];
    for (let n = 1; n <= 40 && (n <= 5 || Math.max(...walls) <= BUDGET_MS); n++) {
      const started = performance.now();
      const reply = await run(n);
      walls.push(performance.now() - started);
      assert.deepEqual(reply.result, { ok: true, data: { t: `Page ${n}`, n: '0' } }, `task ${n}`);
    }
    t.diagnostic(`wall-clock times ${walls.map((w) => w.toFixed(0)).join(', ')} ms (budget ${BUDGET_MS} ms of CPU)`);
    assert.equal(pool.stats.late, 0);
    assert.equal(pool.stats.demoted, 0);
  } finally {
    for (const hog of hogs) hog.kill('SIGKILL');
    await pool.close();
  }
});

test('an idle thread is stopped (its memory given back) and the next task starts one again', async () => {
  const pool = new ExtractionPool({ threads: 1, maxMs: BUDGET_MS, idleMs: 50 });
  const run = (n: number) =>
    pool.run({ checksum: `idle-${n}`, bytes: page(n), rules: { kind: 'query', text: '{t: title}' } });
  try {
    assert.deepEqual((await run(1)).result, { ok: true, data: { t: 'Page 1' } });
    assert.equal(pool.load.alive, 1);
    await until(() => pool.load.alive === 0, { what: 'the idle thread to stop' });
    assert.deepEqual((await run(2)).result, { ok: true, data: { t: 'Page 2' } });
    assert.equal(pool.load.alive, 1);
  } finally {
    await pool.close();
  }
});

test('the data-clobber guard’s lane: with the queue full (the next `?data=` task refused busy), a guard task is taken, and before the tasks waiting', async () => {
  // Waiting tasks are never answered busy for their wait here (this file's threads run at the lowest priority).
  const pool = new ExtractionPool({ threads: 1, maxQueue: 3, maxWaitMs: 600_000 });
  const rules = { kind: 'query' as const, text: '{t: title}' };
  try {
    // A thread ready: the first task below goes to it at once.
    assert.deepEqual((await pool.run({ checksum: 'lane-0', bytes: page(0), rules })).result, {
      ok: true,
      data: { t: 'Page 0' },
    });
    const order: string[] = [];
    const run = (name: string, n: number, lane?: 'guard') =>
      pool.run({ checksum: `lane-${n}`, bytes: page(n), rules, ...(lane ? { lane } : {}) }).then((r) => {
        order.push(name);
        return r;
      });
    // In one turn of the event loop: one task running, three waiting (the queue is full), one refused.
    const data = [1, 2, 3, 4].map((n) => run(`data ${n}`, n));
    const refused = run('data 5', 5);
    const guard = run('guard', 6, 'guard');
    assert.equal(pool.load.queued, 4);
    const [five, g, ...rest] = await Promise.all([refused, guard, ...data]);
    assert.equal(five.busy, true, 'the data API’s queue is full');
    assert.match(five.result.ok ? '' : five.result.error, /busy/);
    assert.equal(g.busy, undefined);
    assert.deepEqual(g.result, { ok: true, data: { t: 'Page 6' } }, 'the guard’s task is never refused for the load');
    for (const r of rest) assert.equal(r.result.ok, true);
    assert.deepEqual(order, ['data 5', 'data 1', 'guard', 'data 2', 'data 3', 'data 4']);
  } finally {
    await pool.close();
  }
});
