// A thread's id, CPU time and scheduling priority, for the extraction pool (src/data/pool.ts):
// - an extraction's time budget counts the CPU time its thread used, not the time that passed: on a busy machine
//   a cheap extraction takes longer but is no more expensive (`cpuDeadline`);
// - a task that has used more CPU than a normal extraction ever does is presumed hostile, and its thread yields
//   the CPU to everything else (the server's own thread first) until it answers.
// On Linux the nice value is per thread (setpriority on a thread id), and /proc gives each thread's CPU time in
// ns (updated at each scheduler tick: a few ms). Elsewhere every call here answers null/false: budgets are
// wall-clock time and threads run at the server's priority.
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { wallDeadline, type Deadline } from '../rules/index.ts';

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

/** The CPU time in a thread's /proc schedstat line (ns on the CPU, ns waiting for it, time slices), ms. */
function schedstatCpuMs(line: string): number | null {
  const ns = Number(line.split(' ')[0]);
  return Number.isFinite(ns) ? ns / 1e6 : null;
}

/** CPU time a thread of this process has used, ms (null when the system does not say). */
export function threadCpuMs(tid: number): number | null {
  try {
    return schedstatCpuMs(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1'));
  } catch {
    return null;
  }
}

/** This thread's /proc entry, opened once: each read is then one pread (~2.5 µs). */
let ownSchedstat: number | null | undefined;
const schedstatBuffer = Buffer.alloc(128);

/** CPU time the calling thread has used, ms (null when the system does not say). */
function ownCpuMs(): number | null {
  if (ownSchedstat === undefined) {
    try {
      ownSchedstat = fs.openSync('/proc/thread-self/schedstat', 'r');
    } catch {
      ownSchedstat = null;
    }
  }
  if (ownSchedstat === null) return null;
  const n = fs.readSync(ownSchedstat, schedstatBuffer, 0, schedstatBuffer.length, 0);
  return schedstatCpuMs(schedstatBuffer.toString('latin1', 0, n));
}

/** A budget of `ms` of the calling thread's CPU time, from now (wall-clock time where CPU time is unknown).
 *  The wall clock is looked at first: CPU time never runs ahead of it, and it costs far less to read. */
export function cpuDeadline(ms: number): Deadline {
  const cpuStart = ownCpuMs();
  if (cpuStart === null) return wallDeadline(ms);
  const wallEnd = performance.now() + ms;
  return { passed: () => performance.now() > wallEnd && (ownCpuMs() ?? Infinity) - cpuStart > ms };
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

/** A thread's nice value as the system has it now, or null (no such thread, or not Linux). */
export function threadNice(tid: number): number | null {
  try {
    return os.getPriority(tid);
  } catch {
    return null;
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
