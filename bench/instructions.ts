// Instructions retired while a measured run goes on, from the CPU's hardware counter (`perf stat`). CPU seconds
// depend on how fast the host runs at that moment (a shared 2-core machine varies by a third from run to run);
// the same work retires about the same instructions on a slow or a busy host, so a change of a few per cent
// shows. Null where perf or the counter is missing (many virtual machines): benches then print CPU seconds only.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let available: boolean | undefined;

function perfWorks(): boolean {
  available ??= /^\d+,/m.test(
    spawnSync('perf', ['stat', '-x,', '-e', 'instructions', '--', 'true'], { encoding: 'utf8' }).stderr ?? '',
  );
  return available;
}

/** Counts instructions, for each named group, in its processes (with the threads they have when counting starts,
 *  and those they start later) or on the whole machine, until `stop()`. */
export async function countInstructions<K extends string>(
  groups: Record<K, number[] | 'machine'>,
): Promise<{ stop(): Promise<Record<K, number | null>> }> {
  const names = Object.keys(groups) as K[];
  const none = () => Object.fromEntries(names.map((k) => [k, null])) as Record<K, number | null>;
  if (!perfWorks()) return { stop: async () => none() };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-perf-'));
  // A group without processes counts nothing (null).
  const runs = names
    .filter((name) => groups[name].length > 0)
    .map((name) => {
      const g = groups[name];
      const out = path.join(dir, name);
      const target = g === 'machine' ? ['-a'] : ['-p', g.join(',')];
      const child = spawn('perf', ['stat', '-x,', '-e', 'instructions', '-o', out, ...target], { stdio: 'ignore' });
      return { name, out, child, exited: new Promise<void>((res) => child.on('exit', () => res())) };
    });
  // perf counts from its start: give it a moment to open the counters before the measured work begins.
  await new Promise((res) => setTimeout(res, 300));
  return {
    async stop() {
      for (const r of runs) r.child.kill('SIGINT');
      await Promise.all(runs.map((r) => r.exited));
      const counted = none();
      for (const r of runs) {
        try {
          const n = readFileSync(r.out, 'utf8').match(/^(\d+),/m);
          counted[r.name] = n ? Number(n[1]) : null;
        } catch {}
      }
      rmSync(dir, { recursive: true, force: true });
      return counted;
    },
  };
}
