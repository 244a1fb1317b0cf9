// The deadline of a stop, kept by a thread of its own: the main thread may be blocked (a log write to a
// pipe nobody reads any more waits forever, and so would a timer of the main thread). Started with the
// process, the thread sleeps until `arm` wakes it, then gives the stop `ms` and ends the process with
// SIGKILL if it is still there. Arming is one atomic store: it needs nothing from the event loop.
import { Worker } from 'node:worker_threads';

const WATCH = `
const { workerData } = require('node:worker_threads');
const flag = new Int32Array(workerData.shared);
Atomics.wait(flag, 0, 0);
Atomics.wait(flag, 0, 1, workerData.ms);
process.kill(workerData.pid, 'SIGKILL');
`;

export interface ExitDeadline {
  /** Starts the countdown (once; later calls do nothing). */
  arm(): void;
}

export function exitDeadline(ms: number): ExitDeadline {
  const shared = new SharedArrayBuffer(4);
  const flag = new Int32Array(shared);
  const worker = new Worker(WATCH, { eval: true, workerData: { shared, ms, pid: process.pid } });
  // The thread never keeps the process alive; a normal exit ends it.
  worker.unref();
  return {
    arm() {
      if (Atomics.compareExchange(flag, 0, 0, 1) === 0) Atomics.notify(flag, 0);
    },
  };
}
