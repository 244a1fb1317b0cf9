// A real `node bin/kiln.js serve` in a child process, for crash tests and benchmarks: it can be killed
// with SIGKILL and started again on the same storage.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { readFileSync } from 'node:fs';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A port nothing listens on now, for a child to listen on later (and, in the crash loops, again after each
 *  restart). It is taken below the kernel's ephemeral range (ip_local_port_range, 32768–60999 by default):
 *  a port from that range may be given to any outgoing connection in between, and the child then fails with
 *  EADDRINUSE (CI run f14-5, crash.save, beside a second file and a bench). */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let i = 0; low > 11_000 && i < 50; i++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await canListen(port)) return port;
  }
  return listenOn(0);
}

function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const canListen = (port: number) =>
  listenOn(port).then(
    () => true,
    () => false,
  );

/** Listens on the port (0: any) on loopback and closes again; the port it had. */
function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const { port: got } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(got));
    });
  });
}

export interface ChildKiln {
  port: number;
  child: ChildProcess;
  /** Everything the child wrote to stdout and stderr so far (for failure messages). */
  output(): string;
  /** Sends `signal` and waits until the process is gone (SIGKILL after 15 s). */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `node bin/kiln.js serve` with `env` (PORT is chosen here unless given) and waits until it
 *  answers HTTP (`nodeArgs`, e.g. `--cpu-prof`, go to node itself). Rejects with the child's output when it exits first or takes longer than `timeoutMs`. */
export async function spawnKiln(
  env: Record<string, string>,
  opts: { timeoutMs?: number; nodeArgs?: string[]; args?: string[] } = {},
): Promise<ChildKiln> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(
    process.execPath,
    [...(opts.nodeArgs ?? []), path.join(REPO, 'bin/kiln.js'), 'serve', ...(opts.args ?? [])],
    {
      cwd: REPO,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        // The tests' requests name the main app kiln.localhost:8080 whatever port the child listens on.
        ROOT_DOMAIN: 'kiln.localhost:8080',
        ...env,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
  for (;;) {
    if (exited) throw new Error(`kiln exited before it was ready (code ${child.exitCode}):\n${out}`);
    if (await answers(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`kiln did not answer within ${opts.timeoutMs ?? 90_000} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    child,
    output: () => out,
    kill: async (signal = 'SIGTERM') => {
      if (!exited) child.kill(signal);
      // A process that has not stopped 15 s after the signal (Kiln's own deadline is 10 s) is killed.
      const stuck = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(stuck);
    },
  };
}

/** Children started together. When one does not start, the ones that did are killed before the error is thrown:
 *  a child left running keeps its test file's process, and so the whole run, from ever ending. */
export async function spawnKilns(envs: Array<Record<string, string>>): Promise<ChildKiln[]> {
  const started = await Promise.allSettled(envs.map((env) => spawnKiln(env)));
  const failed = started.find((r) => r.status === 'rejected');
  if (!failed) return started.map((r) => (r as PromiseFulfilledResult<ChildKiln>).value);
  await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.kill('SIGKILL') : undefined)));
  throw failed.reason;
}

/** True when something answers HTTP on the port (any status). */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    // Long enough for an answer held back a while (a primary whose workers are not ready yet).
    sock.setTimeout(10_000);
    sock.once('connect', () => {
      sock.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    sock.once('data', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
    sock.once('timeout', () => {
      sock.destroy();
      resolve(false);
    });
    // A connection the server closes without a word (a process still starting): not yet, asked again. Without
    // this the wait never ended, and the child it waited for kept its test file running forever.
    sock.once('close', () => resolve(false));
  });
}

/** Runs `kiln <args>` to its end with `env` (and PATH, HOME, LOG_LEVEL=silent unless given); killed
 *  after 60 s. `out` is stdout and stderr together, as they came. */
export function kilnRun(
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'kiln.js'), ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let out = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
      out += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
      out += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, out });
    });
  });
}

/** The pid a process wrote to `file`, once the file holds one (a positive whole number). */
export function pidIn(file: string): number | false {
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : false;
  } catch {
    return false;
  }
}

/** True while a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
