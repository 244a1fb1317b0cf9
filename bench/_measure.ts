// What the benchmarks that drive a child Kiln over HTTP share (bench/sync.ts, bench/mcp.ts): keep-alive requests
// with a key, the child's CPU time from /proc, the machine's line, and the measuring loop: workers that repeat one
// step for a number of seconds, counted, with the child's CPU time per successful step. Not a benchmark itself
// (bench/run.ts skips files starting with `_`).
import http from 'node:http';
import { readFileSync } from 'node:fs';
import os from 'node:os';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** Closes the kept-alive connections (at the end of a benchmark, so that its process ends). */
export const closeConnections = () => agent.destroy();

/** One request with the key as `X-API-Key` (a JSON body when given); its status and text. */
export function request(
  port: number,
  method: string,
  url: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: url,
        agent,
        headers: { 'x-api-key': key, ...(data ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); null elsewhere. */
export function cpuMs(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    // After the command: state is field 3, utime field 14, stime field 15 (1-based, in clock ticks).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/** The machine's cores and load, printed first: the figures are only as good as the machine was quiet. */
export const machineLine = () =>
  `machine: ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

export interface Phase {
  calls: number;
  refused: number;
  /** Why steps were refused, by reason (an HTTP status, a code): a bench that only counts refusals hid a 422 on
   *  every write once. */
  why: Map<string | number, number>;
  seconds: number;
  perSecond: number;
  /** The child's CPU time per successful step (ms), or null where it cannot be read. */
  cpuPerCall: number | null;
}

/** Runs `step(worker, n)` in `workers` concurrent loops for `seconds`; a step answers true when it succeeded,
 *  else why it was refused. */
export async function phase(
  o: { pid: number | undefined; workers: number; seconds: number },
  step: (worker: number, n: number) => Promise<true | string | number>,
): Promise<Phase> {
  let calls = 0;
  let refused = 0;
  const why = new Map<string | number, number>();
  const end = Date.now() + o.seconds * 1000;
  const cpu0 = cpuMs(o.pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.workers }, async (_, w) => {
      for (let n = 0; Date.now() < end; n++) {
        const r = await step(w, n);
        if (r === true) {
          calls++;
          continue;
        }
        refused++;
        why.set(r, (why.get(r) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuMs(o.pid);
  return {
    calls,
    refused,
    why,
    seconds,
    perSecond: calls / seconds,
    cpuPerCall: cpu0 !== null && cpu1 !== null && calls ? (cpu1 - cpu0) / calls : null,
  };
}

/** "3 refused: 2 × 412, 1 × 429", or "" when none were. */
export const refusals = (p: Phase) =>
  p.refused ? `${p.refused} refused: ${[...p.why].map(([reason, n]) => `${n} × ${reason}`).join(', ')}` : '';
