// The work bound of one extraction. Tree walks and the selector adapter call `tick()`; output producers call
// `spend()`. Crossing a bound throws RulesAbort, which the extraction entry point turns into a typed failure.
// One extraction runs synchronously to its end, so the active budget is a module variable.
import { performance } from 'node:perf_hooks';
import { failure, RulesAbort } from './errors.ts';
import type { ExtractLimits } from './limits.ts';

const CHECK_EVERY = 2048;

/** When a time budget has run out. The default measures wall-clock time; the extraction pool's threads measure
 *  their own CPU time as well (src/data/thread-priority.ts), so that a busy machine does not make a cheap
 *  extraction too expensive. */
export interface Deadline {
  passed(): boolean;
}

/** A budget of `ms` of wall-clock time, from now. */
export function wallDeadline(ms: number): Deadline {
  const end = performance.now() + ms;
  return { passed: () => performance.now() > end };
}

class Budget {
  steps = 0;
  nextCheck = CHECK_EVERY;
  output = 0;
  maxSteps = Infinity;
  maxOutput = Infinity;
  deadline: Deadline = { passed: () => false };
  maxMs = Infinity;

  reset(limits: ExtractLimits, deadline = wallDeadline(limits.maxMs)): void {
    this.steps = 0;
    this.output = 0;
    this.nextCheck = Math.min(CHECK_EVERY, limits.maxSteps + 1);
    this.maxSteps = limits.maxSteps;
    this.maxOutput = limits.maxOutputChars;
    this.maxMs = limits.maxMs;
    this.deadline = deadline;
  }

  /** Called when `steps` reaches `nextCheck`. */
  check(): void {
    if (this.steps > this.maxSteps) {
      throw new RulesAbort(
        failure('too-expensive', `Extraction too expensive: over ${this.maxSteps} steps of tree work`),
      );
    }
    if (this.deadline.passed()) {
      throw new RulesAbort(failure('too-expensive', `Extraction too expensive: over ${this.maxMs} ms`));
    }
    this.nextCheck = Math.min(this.steps + CHECK_EVERY, this.maxSteps + 1);
  }
}

export const budget = new Budget();

/** One unit of tree work. */
export function tick(): void {
  if (++budget.steps >= budget.nextCheck) budget.check();
}

/** `n` units of tree work. */
export function ticks(n: number): void {
  budget.steps += n;
  if (budget.steps >= budget.nextCheck) budget.check();
}

/** `chars` more characters of output (also work: a step per 32 characters). */
export function spend(chars: number): void {
  budget.output += chars;
  if (budget.output > budget.maxOutput) {
    throw new RulesAbort(failure('too-large', `Extraction result too large: over ${budget.maxOutput} characters`));
  }
  budget.steps += chars >>> 5;
  if (budget.steps >= budget.nextCheck) budget.check();
}

/** Between extractions: no bound, so stray adapter calls (none are expected) cannot throw. */
export function unbounded(): void {
  budget.reset({ maxSteps: Number.MAX_SAFE_INTEGER, maxMs: 1e12, maxOutputChars: Number.MAX_SAFE_INTEGER });
}
unbounded();
