// `kiln sync DIR`, `kiln push DIR`, `kiln pull DIR` and `kiln login --url URL`: a folder and a Kiln
// account (or a team's) kept in step from the command line. Needs none of the server's configuration.
// The key comes from KILN_KEY or from `kiln login` (stored in the user's config directory, 0600), never
// from the command line, which every user of the machine can read.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { SyncApi, SyncRefusal, Unreachable } from './api.ts';
import { EXIT, SyncEngine } from './engine.ts';
import { LocalFolder, readState } from './local.ts';
import { Output } from './output.ts';
import type { Mode } from './plan.ts';

/** Where `kiln login` keeps keys: $KILN_CONFIG_DIR, else $XDG_CONFIG_HOME/kiln, else ~/.config/kiln. */
export function configDir(): string {
  if (process.env.KILN_CONFIG_DIR) return process.env.KILN_CONFIG_DIR;
  const base = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'kiln');
}

const credentialsFile = () => path.join(configDir(), 'credentials.json');

function originOf(url: string): string {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('--url must be an http(s) address');
  return u.origin;
}

async function readCredentials(): Promise<Record<string, string>> {
  try {
    const c = JSON.parse(await fs.readFile(credentialsFile(), 'utf8')) as { keys?: Record<string, string> };
    return c.keys ?? {};
  } catch {
    return {};
  }
}

async function storeKey(origin: string, key: string): Promise<string> {
  const keys = await readCredentials();
  keys[origin] = key;
  const dir = configDir();
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = credentialsFile();
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
  await fs.chmod(tmp, 0o600);
  await fs.rename(tmp, file);
  return file;
}

async function readStdinKey(): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) process.stderr.write('Sync key (hcsk_…, from Account → Sync keys): ');
  const chunks: Buffer[] = [];
  if (stdin.isTTY) {
    // One line, not echoed.
    stdin.setRawMode(true);
    return new Promise((resolve) => {
      let text = '';
      const onData = (b: Buffer) => {
        const s = b.toString('utf8');
        for (const ch of s) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') {
            stdin.setRawMode(false);
            stdin.pause();
            stdin.off('data', onData);
            process.stderr.write('\n');
            return resolve(text.trim());
          }
          if (ch === '\u0003') process.exit(130);
          text += ch;
        }
      };
      stdin.on('data', onData);
      stdin.resume();
    });
  }
  for await (const c of stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

async function login(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { url: { type: 'string' } } });
  if (!values.url) {
    process.stderr.write('kiln login: --url is required (the address of your Kiln)\n');
    return EXIT.usage;
  }
  const origin = originOf(values.url);
  const key = process.env.KILN_KEY || (await readStdinKey());
  if (!key) {
    process.stderr.write('kiln login: no key given\n');
    return EXIT.usage;
  }
  const api = new SyncApi({ url: origin, key, giveUpAfterMs: 10_000 });
  try {
    await api.bind(undefined);
  } catch (err) {
    if (err instanceof SyncRefusal) {
      process.stderr.write(`kiln login: ${origin} refused the key: ${err.message}\n`);
      return EXIT.refused;
    }
    if (err instanceof Unreachable) {
      process.stderr.write(`kiln login: ${err.message}\n`);
      return EXIT.unreachable;
    }
    throw err;
  }
  const file = await storeKey(origin, key);
  process.stderr.write(`Logged in to ${origin} as ${api.username}; the key is in ${file} (readable by you only).\n`);
  return EXIT.ok;
}

async function syncCommand(mode: Mode, args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        team: { type: 'string' },
        once: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        prune: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        verbose: { type: 'boolean', short: 'v', default: false },
      },
    });
  }
  try {
    parsed = parse();
  } catch (err) {
    process.stderr.write(`kiln ${mode}: ${(err as Error).message}\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    process.stderr.write(`kiln ${mode}: name one folder (kiln ${mode} DIR)\n`);
    return EXIT.usage;
  }
  if (mode === 'sync' && values.prune) {
    process.stderr.write('kiln sync: --prune is for push and pull (sync always passes deletes on, into a trash)\n');
    return EXIT.usage;
  }
  const dir = path.resolve(positionals[0]);
  const st = await fs.stat(dir).catch(() => null);
  if (!st?.isDirectory()) {
    if (mode === 'pull' && !st) await fs.mkdir(dir, { recursive: true });
    else {
      process.stderr.write(`kiln ${mode}: ${dir} is not a folder\n`);
      return EXIT.usage;
    }
  }
  const state = await readState(new LocalFolder(dir));
  let url: string;
  try {
    url = originOf(values.url ?? state?.url ?? '');
  } catch {
    process.stderr.write(`kiln ${mode}: --url is required the first time (the address of your Kiln)\n`);
    return EXIT.usage;
  }
  if (state && values.url && originOf(state.url) !== url) {
    process.stderr.write(`kiln ${mode}: ${dir} is synced with ${state.url}; use another folder for ${url}\n`);
    return EXIT.usage;
  }
  const team = values.team ?? state?.team ?? null;
  if (state && values.team !== undefined && (state.team ?? null) !== values.team) {
    process.stderr.write(
      `kiln ${mode}: ${dir} is synced with ${state.team ? `team ${state.team}` : 'your own account'}\n`,
    );
    return EXIT.usage;
  }
  const key = process.env.KILN_KEY || (await readCredentials())[url];
  if (!key) {
    process.stderr.write(`kiln ${mode}: no key for ${url}: set KILN_KEY, or run kiln login --url ${url}\n`);
    return EXIT.usage;
  }
  const stop = new AbortController();
  let stops = 0;
  const onSignal = () => {
    // The first signal lets the current file finish and the state be written; a second one insists.
    if (++stops > 1) process.exit(130);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const out = new Output({ json: values.json, verbose: values.verbose });
  const engine = new SyncEngine({
    dir,
    url,
    key,
    team,
    mode,
    prune: values.prune,
    dryRun: values['dry-run'],
    watch: mode === 'sync' && !values.once && !values['dry-run'],
    out,
    signal: stop.signal,
  });
  try {
    return await engine.run();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Runs a sync-cli command (`sync`, `push`, `pull`, `login`); the exit code. */
export async function syncCli(cmd: string, args: string[]): Promise<number> {
  if (cmd === 'login') return login(args);
  return syncCommand(cmd as Mode, args);
}
