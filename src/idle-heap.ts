// V8 grows its heap for a large document (a 4 MB page opened in the editor, saved, diffed) and keeps it
// committed while the process idles: nothing allocates, so nothing is collected, and the memory is not
// given back for as long as nobody asks anything. So once no request has come for IDLE_MS and the heap
// holds SLACK_BYTES more than it uses, one memory-reducing collection returns it (once per quiet spell;
// the pause falls where nobody waits). Extraction threads give theirs back by ending (src/data/pool.ts).
import v8 from 'node:v8';
import vm from 'node:vm';

const CHECK_MS = 5_000;
const IDLE_MS = 10_000;
/** At 48 MB a process that had served a 4 MB document idled with 33 MB committed and unused (bench/memory). */
const SLACK_BYTES = 16 * 2 ** 20;

type Collect = (o: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
let collect: Collect | undefined;

/** V8's collector, exposed the first time it is needed (no `--expose-gc` on the command line). */
function collector(): Collect {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as Collect;
  }
  return collect;
}

/** Checks every few seconds; `lastRequestAt` is when the process last got a request (ms). */
export function collectWhenIdle(lastRequestAt: () => number, now: () => number = Date.now): { stop(): void } {
  let collectedAt = 0;
  const timer = setInterval(() => {
    const at = lastRequestAt();
    if (now() - at < IDLE_MS || collectedAt > at) return;
    const heap = v8.getHeapStatistics();
    if (heap.total_heap_size - heap.used_heap_size < SLACK_BYTES) return;
    collectedAt = now();
    collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  }, CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
