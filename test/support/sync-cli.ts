// Runs the `kiln sync` / `push` / `pull` command (node bin/kiln.js …) as a real child process against a
// test Kiln, with a key in KILN_KEY and a private config directory; and reads folders as maps.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { REPO } from './child.ts';
import { until } from './wait.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout's JSON lines (with --json). */
  events: any[];
}

const parseEvents = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return null;
      }
    })
    .filter(Boolean);

function envFor(key: string | null, extra: Record<string, string>) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    KILN_CONFIG_DIR: extra.KILN_CONFIG_DIR ?? path.join(os.tmpdir(), 'kiln-sync-cli-none'),
    ...(key ? { KILN_KEY: key } : {}),
    ...extra,
  };
}

/** Runs the command to its end (a generous deadline turns a hang into a failure). */
export function runCli(
  args: string[],
  key: string | null,
  extra: Record<string, string> = {},
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, 'bin/kiln.js'), ...args], {
      cwd: REPO,
      env: envFor(key, extra),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdin!.end(opts.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, events: parseEvents(stdout) });
    });
  });
}

export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  events(): any[];
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>;
  /** Waits until an event matching `pred` was printed. */
  waitFor(pred: (e: any) => boolean, what: string, timeout?: number): Promise<any>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts a long-running command (`kiln sync DIR` watching) with --json. */
export function startCli(args: string[], key: string, extra: Record<string, string> = {}): RunningCli {
  const child = spawn(process.execPath, [path.join(REPO, 'bin/kiln.js'), ...args], {
    cwd: REPO,
    env: envFor(key, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let done = false;
  exited.then(() => (done = true));
  const r: RunningCli = {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    events: () => parseEvents(stdout),
    exited,
    waitFor: (pred, what, timeout = 60_000) =>
      until(
        () => {
          const e = parseEvents(stdout).find(pred);
          if (!e && done) throw new Error(`the command exited waiting for ${what}: ${stderr}`);
          return e;
        },
        { what: `${what} (stderr: ${stderr.slice(-500)})`, timeout },
      ),
    stop: async (signal = 'SIGTERM') => {
      if (!done) child.kill(signal);
      return exited;
    },
  };
  return r;
}

/** Every file under `dir` (relative `/` paths → bytes), leaving out `.kiln/`. */
export function readTree(dir: string, skip = ['.kiln']): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (!rel && skip.includes(e.name)) continue;
      if (e.isDirectory()) walk(child);
      else if (e.isFile()) out.set(child.normalize('NFC'), fs.readFileSync(path.join(dir, child)));
    }
  };
  walk('');
  return out;
}

export function writeFile(dir: string, rel: string, content: string | Buffer) {
  const p = path.join(dir, ...rel.split('/'));
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

export function tempDir(prefix = 'kiln-sync-cli-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A small valid page. */
export const page = (text: string) =>
  `<!DOCTYPE html><html><head><title>${text}</title></head><body><p>${text}</p></body></html>`;
