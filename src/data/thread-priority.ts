// A thread's id, CPU time and scheduling priority, for the extraction pool (src/data/pool.ts): a task that
// has used more CPU than a normal extraction ever does is presumed hostile, and its thread yields the CPU to
// everything else (the server's own thread first) until it answers. On Linux the nice value is per thread
// (setpriority on a thread id), and /proc gives each thread's CPU time in ns. Elsewhere every call here
// answers null/false and threads run at the server's priority.
import fs from 'node:fs';
import os from 'node:os';

/** The lowest priority: a demoted thread runs when nothing else wants the core. */
const DEMOTED_NICE = 19;

/** The calling thread's id (Linux), read in the thread itself. */
export function currentThreadId(): number | null {
  try {
    const m = /task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** CPU time a thread of this process has used, ms (null when the system does not say). */
export function threadCpuMs(tid: number): number | null {
  try {
    // schedstat: ns on the CPU, ns waiting for it, time slices.
    const ns = Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** Lowers a thread's priority (always permitted). */
export function demoteThread(tid: number): boolean {
  try {
    os.setPriority(tid, DEMOTED_NICE);
    return true;
  } catch {
    return false;
  }
}

/** Gives a demoted thread the process's priority back; false when the system refuses (raising a priority
 *  needs CAP_SYS_NICE or an RLIMIT_NICE allowance: an unprivileged server is refused). */
export function restoreThread(tid: number): boolean {
  try {
    // The pool calls this from the server's own thread: its priority is the one to go back to.
    os.setPriority(tid, os.getPriority());
    return true;
  } catch {
    return false;
  }
}
