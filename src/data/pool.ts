// The extraction pool: documents are parsed and rules run off the main thread, so no document can block the
// server. A few worker threads (src/data/extract-worker.ts), each answering one task at a time under one time
// budget that covers parsing and extraction (rulesLimits.maxMs, 50 ms, plus rulesLimits.parseMsPerMb for each MB
// of document to parse). The budget counts the thread's CPU time where the system says it (Linux): on a busy
// machine a cheap extraction takes longer but is no more expensive, and must not fail for it.
// - a thread checks the budget itself (between parser chunks, and every 2,048 steps of extraction) and answers
//   `too-expensive`;
// - a task that has used `graceMs` more than its budget and still not answered (a parse step that does not look
//   at the clock: one chunk of a deeply nested document can take longer than the whole budget) answers
//   `too-expensive` then, and its thread is told to stop (a flag it reads with its clock); if it still has not
//   finished `killMs - graceMs` later (wall-clock time), it is terminated and a fresh one replaces it (not at
//   once: starting a thread costs far more CPU than a thread that checks its clock a little late spends
//   finishing);
// - a task that has used half its budget is presumed hostile: its thread runs at the lowest priority until it
//   answers (Linux; src/data/thread-priority.ts), so it slows the server's thread little, and its budget counts
//   wall-clock time as well;
// - a thread that dies (out of memory: each has a heap limit) answers the same and is replaced;
// - at most `maxQueue` tasks wait, each at most `maxWaitMs`; more answer `too-expensive` at once (the server is
//   busy: a load-dependent failure, marked `busy`). Waiting does not count against a task's budget. The
//   data-clobber guard's tasks have a lane of their own: served first, never refused for the load (#44.1).
// A document goes back to the free thread that parsed it last (each thread keeps a small LRU of parsed
// documents by checksum). Threads start on first use, so commands that never extract start none.
//
// A hand-written pool rather than piscina: the watchdog must start when a thread takes the task (not when it is
// queued), the pool routes by checksum, and the thread script must load both from src/ through tsx and from
// the dist/ bundle; each is a few lines here.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { rulesLimits, type Extraction } from '../rules/index.ts';
import { demoteThread, restoreThread, threadCpuMs, threadNice } from './thread-priority.ts';

export type PoolRules = { kind: 'api' } | { kind: 'query'; text: string };

export interface PoolTask {
  /** Names the bytes: the thread's parsed-document cache key. */
  checksum: string;
  /** The document's UTF-8 bytes. */
  bytes: Uint8Array;
  rules: PoolRules;
  /** Budget for parse + extraction, ms. */
  maxMs: number;
}

export interface PoolReply {
  result: Extraction;
  /** Whether the thread had the document parsed already. */
  cached: boolean;
  /** `parse` when the budget ran out (or the thread was stopped) while parsing: then any rules on these bytes
   *  would fail the same way for a while. */
  phase?: 'parse';
  /** Set when the task was refused for the pool's load (queue full, waited too long, shutting down), not for what
   *  it costs: asked again later, it may well answer. */
  busy?: true;
}

/** Which queue a task waits in: `guard` (the data-clobber guard's checks, src/guard/guard.ts) goes before every
 *  other task, is never refused for the queue's length or its wait, and so is never switched off by a flood of
 *  `?data=` requests; its caller keeps it to one task at a time. */
export type PoolLane = 'guard' | 'data';

/** What a thread starts with: `stop[0]` becomes 1 when the pool has answered its task over budget; the thread
 *  stops it at its next look at the clock. */
export type ExtractWorkerData = { stop: Int32Array };

/** Messages from a thread: ready once loaded (with its thread id, Linux), 'parsing' when it starts parsing a
 *  task's document, then the reply. */
type FromWorker = { ready: true; tid: number | null } | 'parsing' | PoolReply;

export interface ExtractionPoolOptions {
  /** Threads (default: one less than the cores, at least 1). */
  threads?: number;
  /** Tasks waiting for a thread (default: 16 per thread). */
  maxQueue?: number;
  /** How long a task may wait for a free thread, ms of wall-clock time (default 1,000): a busy server, not an
   *  expensive task; its budget starts when a thread takes it. */
  maxWaitMs?: number;
  /** Budget of one task, ms (default: rulesLimits.maxMs). */
  maxMs?: number;
  /** How much past its budget a task may run before it answers too-expensive anyway, ms (default 50). */
  graceMs?: number;
  /** How long past its budget a thread may take before it is terminated and replaced, ms (default 1,000): its
   *  task is answered `graceMs` past the budget, its thread stopped `killMs - graceMs` of wall-clock time later. */
  killMs?: number;
  /** Heap limit of one thread, MB (default 512). */
  maxHeapMb?: number;
  /** A thread idle this long is stopped, its memory (a large document's parse) given back; the next task
   *  starts threads again. ms (default 30,000). */
  idleMs?: number;
  /** The share of its budget a task may use in CPU time before its thread drops to the lowest priority
   *  (default 0.5: a normal extraction uses a small part of it; the budget allows for the document's size). */
  demoteAt?: number;
}

/** `expiry` answers a task still waiting for a thread after `maxWaitMs`. */
type Job = {
  task: PoolTask;
  lane: PoolLane;
  resolve(r: PoolReply): void;
  reject(e: Error): void;
  expiry?: NodeJS.Timeout;
};
type Slot = {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  /** Whether the job was answered already (too-expensive, past budget + grace) while the thread works on. */
  answered: boolean;
  parsing: boolean;
  timers: NodeJS.Timeout[];
  recent: string[];
  /** The thread's id (Linux: its CPU time and priority, src/data/thread-priority.ts). */
  tid: number | null;
  /** Whether the thread runs at the lowest priority for its current task (see `watch`). */
  demoted: boolean;
  /** Shared with the thread: 1 tells it to stop its task (see ExtractWorkerData). */
  stop: Int32Array;
  /** Stops the thread once it has been idle `idleMs`. */
  idle?: NodeJS.Timeout;
};

const RECENT_PER_THREAD = 64;
/** How often a busy thread's CPU time is looked at, ms. */
const CPU_CHECK_MS = 10;
/** Each thread's young generation, MB (see spawnWorker). */
const YOUNG_GENERATION_MB = 64;

export function tooExpensive(error: string): Extraction {
  return { ok: false, status: 400, code: 'too-expensive', error: `Extraction too expensive: ${error}` };
}

const busy = (): PoolReply => ({
  result: tooExpensive('the server is busy, try again shortly'),
  cached: false,
  busy: true,
});
const shuttingDown = (): PoolReply => ({
  result: tooExpensive('the server is shutting down'),
  cached: false,
  busy: true,
});

/** How a thread is started: the bundled script next to dist/kiln.mjs, or the TypeScript source (as it is on
 *  a Node that strips types, as the main thread runs it; through tsx on one that does not). */
function spawnWorker(maxHeapMb: number, stop: Int32Array): Worker {
  const here = import.meta.url;
  // A parse allocates a whole tree of short-lived objects: with a small young generation each task is
  // collected several times over (measured on the 112 KB bench page: 16 MB → 10.4 ms of CPU per parse +
  // extract, V8's default for a 512 MB thread → 8.4 ms, 64 MB → 6.0 ms; 128 MB no better).
  const resourceLimits = { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };
  const workerData: ExtractWorkerData = { stop };
  if (!here.endsWith('.ts')) return new Worker(new URL('./extract-worker.mjs', here), { resourceLimits, workerData });
  if ((process.features as { typescript?: unknown }).typescript)
    return new Worker(new URL('./extract-worker.ts', here), { resourceLimits, workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const script = new URL('./extract-worker.ts', here).href;
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(script)}); })`;
  return new Worker(code, { eval: true, resourceLimits, workerData });
}

export class ExtractionPool {
  readonly threads: number;
  readonly maxQueue: number;
  readonly maxWaitMs: number;
  readonly maxMs: number;
  readonly graceMs: number;
  readonly killMs: number;
  private readonly maxHeapMb: number;
  private readonly demoteAt: number;
  private readonly idleMs: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  /** The guard's lane: taken before `queue`. */
  private readonly guardQueue: Job[] = [];
  private closed = false;
  /** Counters for tests and benchmarks. */
  readonly stats = {
    tasks: 0,
    late: 0,
    terminated: 0,
    crashed: 0,
    refused: 0,
    demoted: 0,
    /** The nice value the system gave the last demoted thread, read back right after (null: unknown). */
    demotedNice: null as number | null,
  };

  constructor(opts: ExtractionPoolOptions = {}) {
    const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    this.threads = Math.max(1, opts.threads ?? cores - 1);
    this.maxQueue = opts.maxQueue ?? 16 * this.threads;
    this.maxWaitMs = opts.maxWaitMs ?? 1_000;
    this.maxMs = opts.maxMs ?? rulesLimits.maxMs;
    this.graceMs = opts.graceMs ?? 50;
    this.killMs = Math.max(this.graceMs, opts.killMs ?? 1_000);
    this.maxHeapMb = opts.maxHeapMb ?? 512;
    this.demoteAt = opts.demoteAt ?? 0.5;
    this.idleMs = opts.idleMs ?? 30_000;
  }

  /** The budget of a task on `bytes` of document: the extraction's, plus time to parse it. */
  budgetFor(bytes: number): number {
    return Math.round(this.maxMs + (rulesLimits.parseMsPerMb * bytes) / (1024 * 1024));
  }

  /** Parses and extracts on a thread. Resolves with the engine's answer (never a RulesFailure thrown); rejects
   *  only when threads cannot start at all (a broken install). */
  run(task: Omit<PoolTask, 'maxMs'> & { maxMs?: number; lane?: PoolLane }): Promise<PoolReply> {
    if (this.closed) return Promise.resolve(shuttingDown());
    this.start();
    const { lane = 'data', ...rest } = task;
    if (lane === 'data' && this.queue.length >= this.maxQueue) {
      this.stats.refused++;
      return Promise.resolve(busy());
    }
    this.stats.tasks++;
    return new Promise((resolve, reject) => {
      const job: Job = {
        task: { ...rest, maxMs: rest.maxMs ?? this.budgetFor(rest.bytes.length) },
        lane,
        resolve,
        reject,
      };
      if (lane === 'guard') this.guardQueue.push(job);
      else {
        this.queue.push(job);
        if (this.slots.some((s) => s.ready)) this.startClock(job);
      }
      this.pump();
    });
  }

  /** Tasks waiting for a thread, threads busy, and threads alive (tests and benchmarks). */
  get load(): { queued: number; busy: number; alive: number } {
    return {
      queued: this.queue.length + this.guardQueue.length,
      busy: this.slots.filter((s) => s.job).length,
      alive: this.slots.length,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of [...this.guardQueue.splice(0), ...this.queue.splice(0)]) {
      clearTimeout(job.expiry);
      job.resolve(shuttingDown());
    }
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        if (!slot.answered) slot.job?.resolve(shuttingDown());
        return this.stop(slot);
      }),
    );
  }

  private start(): void {
    while (this.slots.length < this.threads) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const worker = spawnWorker(this.maxHeapMb, stop);
    worker.unref(); // an idle pool never keeps the process alive
    const slot: Slot = {
      worker,
      ready: false,
      job: null,
      answered: false,
      parsing: false,
      timers: [],
      recent: [],
      tid: null,
      demoted: false,
      stop,
    };
    worker.on('message', (m: FromWorker) => this.onMessage(slot, m));
    worker.on('error', (err) => this.onDeath(slot, err));
    worker.on('exit', (code) => this.onDeath(slot, new Error(`extraction thread exited with code ${code}`)));
    return slot;
  }

  private onMessage(slot: Slot, m: FromWorker): void {
    if (typeof m === 'object' && 'ready' in m) {
      slot.ready = true;
      slot.tid = m.tid;
      for (const job of this.queue) if (!job.expiry) this.startClock(job);
      this.pump();
      if (!slot.job) this.idleFromNow(slot);
      return;
    }
    if (m === 'parsing') {
      slot.parsing = true;
      return;
    }
    const job = slot.job;
    if (!job) return;
    slot.timers.forEach(clearTimeout);
    slot.timers = [];
    slot.job = null;
    slot.parsing = false;
    if (!slot.answered) job.resolve(m);
    slot.answered = false;
    if (slot.demoted) this.restore(slot);
    this.pump();
    if (!slot.job && this.slots.includes(slot)) this.idleFromNow(slot);
  }

  /** The thread has nothing to do: stopped when that lasts `idleMs` (V8 keeps a thread's heap, grown by a large
   *  document, for as long as the thread lives). */
  private idleFromNow(slot: Slot): void {
    clearTimeout(slot.idle);
    slot.idle = setTimeout(() => {
      const at = this.slots.indexOf(slot);
      if (at < 0 || slot.job) return;
      this.slots.splice(at, 1);
      void this.stop(slot);
    }, this.idleMs);
    slot.idle.unref();
  }

  /** The thread went away on its own (uncaught error, out of memory, exit). */
  private onDeath(slot: Slot, err: Error): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return; // already replaced or closed
    if (!slot.ready) {
      // It never loaded: a broken install, not a document. Fail what waits instead of respawning forever
      // (the next task tries again).
      void this.stop(slot);
      this.slots.splice(at, 1);
      for (const job of [...this.guardQueue.splice(0), ...this.queue.splice(0)]) job.reject(err);
      return;
    }
    this.stats.crashed++;
    this.replace(slot);
    this.late(slot);
    this.pump();
  }

  /** A waiting job's wait is bounded from now (not while the threads are still starting). */
  private startClock(job: Job): void {
    job.expiry = setTimeout(() => this.expire(job), this.maxWaitMs);
  }

  /** Still waiting for a thread after `maxWaitMs`: answered, never run. */
  private expire(job: Job): void {
    const at = this.queue.indexOf(job);
    if (at < 0) return;
    this.queue.splice(at, 1);
    this.stats.refused++;
    job.resolve(busy());
  }

  /** `graceMs` past its budget and still unanswered: answers too-expensive and tells the thread to stop the
   *  task, which it does at its next look at the clock (at the server's priority again, so soon: a demoted
   *  thread on a busy machine would take long to get there). One that has not stopped `killMs - graceMs` later
   *  (wall-clock time) is stopped (see `runaway`). */
  private overBudget(slot: Slot): void {
    const wait = this.killMs - this.graceMs;
    if (wait <= 0) {
      this.runaway(slot);
      return;
    }
    this.late(slot);
    Atomics.store(slot.stop, 0, 1);
    if (slot.demoted) this.restore(slot);
    if (this.slots.includes(slot)) slot.timers.push(setTimeout(() => this.runaway(slot), wait));
  }

  /** Answers the slot's task too-expensive (once); the thread goes on. */
  private late(slot: Slot): void {
    const job = slot.job;
    if (!job || slot.answered) return;
    slot.answered = true;
    this.stats.late++;
    job.resolve({
      result: tooExpensive(`over ${job.task.maxMs} ms`),
      cached: false,
      ...(slot.parsing ? { phase: 'parse' as const } : {}),
    });
  }

  /** Still busy well past its budget: stopped and replaced. */
  private runaway(slot: Slot): void {
    if (!this.slots.includes(slot) || !slot.job) return;
    this.late(slot);
    this.stats.terminated++;
    this.replace(slot);
    this.pump();
  }

  private pump(): void {
    for (;;) {
      const queue = this.guardQueue.length > 0 ? this.guardQueue : this.queue;
      if (queue.length === 0) return;
      let free: Slot | undefined;
      const checksum = queue[0].task.checksum;
      for (const s of this.slots) {
        if (!s.ready || s.job) continue;
        if (s.recent.includes(checksum)) {
          free = s;
          break;
        }
        free ??= s;
      }
      if (!free) return;
      this.assign(free, queue.shift()!);
    }
  }

  private assign(slot: Slot, job: Job): void {
    clearTimeout(job.expiry);
    clearTimeout(slot.idle);
    slot.job = job;
    slot.answered = false;
    slot.parsing = false;
    const { task } = job;
    const i = slot.recent.indexOf(task.checksum);
    if (i >= 0) slot.recent.splice(i, 1);
    slot.recent.push(task.checksum);
    if (slot.recent.length > RECENT_PER_THREAD) slot.recent.shift();
    slot.timers = [this.watch(slot, job)];
    // A copy of exactly the document's bytes, moved to the thread (the original may be a view into a larger
    // buffer that other code still reads).
    const bytes = new Uint8Array(task.bytes);
    Atomics.store(slot.stop, 0, 0);
    slot.worker.postMessage({ ...task, bytes }, [bytes.buffer]);
  }

  /** Watches a task's CPU time: past `demoteAt` of its budget it is presumed hostile (a normal one never uses
   *  that much) and its thread drops to the lowest priority until it answers, so the server's own thread and the
   *  other requests go first; past its budget + grace it is over budget. CPU time, not time since the start: on
   *  a busy machine a normal task takes longer but uses no more CPU, and is never stopped for it. A task
   *  presumed hostile is held to its budget in wall-clock time as well: at the lowest priority on a busy machine
   *  it could take long to use it up, and its requester would wait. Where CPU times are unknown, the budget is
   *  wall-clock time and nothing is demoted. */
  private watch(slot: Slot, job: Job): NodeJS.Timeout {
    const { maxMs } = job.task;
    const tid = slot.tid;
    const start = tid === null ? null : threadCpuMs(tid);
    if (tid === null || start === null) return setTimeout(() => this.overBudget(slot), maxMs + this.graceMs);
    const startedAt = performance.now();
    let hostile = false;
    const timer = setInterval(() => {
      const now = threadCpuMs(tid);
      if (slot.job !== job || now === null) return clearInterval(timer);
      const used = now - start;
      if (!hostile && used >= maxMs * this.demoteAt) {
        hostile = true;
        if (demoteThread(tid)) {
          slot.demoted = true;
          this.stats.demoted++;
          this.stats.demotedNice = threadNice(tid);
        }
      }
      if (used > maxMs + this.graceMs || (hostile && performance.now() - startedAt > maxMs + this.graceMs)) {
        clearInterval(timer);
        this.overBudget(slot);
      }
    }, CPU_CHECK_MS);
    return timer;
  }

  /** Gives a demoted thread its priority back; when the system refuses (an unprivileged server), the thread is
   *  replaced by a fresh one instead. */
  private restore(slot: Slot): void {
    slot.demoted = false;
    if (slot.tid === null || !restoreThread(slot.tid)) this.replace(slot);
  }

  /** Stops a slot's thread: its timers, its listeners (its exit is not a death to handle), the thread. */
  private stop(slot: Slot): Promise<number> {
    slot.timers.forEach(clearTimeout);
    clearTimeout(slot.idle);
    slot.worker.removeAllListeners();
    return slot.worker.terminate();
  }

  /** Stops a slot's thread and puts a fresh one in its place. */
  private replace(slot: Slot): void {
    const at = this.slots.indexOf(slot);
    void this.stop(slot);
    if (at >= 0) this.slots[at] = this.spawn();
  }
}
