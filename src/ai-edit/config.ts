// AI editing's configuration, from the environment (read once by src/config.ts). Off unless an engine is set.
//
//   AI_EDIT_COMMAND="my-agent --flag"        the default engine: a command (prompt on stdin, reply on stdout)
//   AI_EDIT_URL / _API_KEY / _MODEL / _API   …or an HTTP engine (Anthropic Messages, or OpenAI-compatible)
//   AI_EDIT_NAME=claude                      the default engine's @name (default `ai`)
//   AI_EDIT_ENGINES=fast,local               more engines, each set by AI_EDIT_<NAME>_COMMAND or _URL, …
//   AI_EDIT_TIMEOUT_MS, AI_EDIT_CONCURRENCY  per request; at once in one process
//   AI_EDIT_ENV=ANTHROPIC_API_KEY,…           variables a command gets besides PATH, HOME and LANG
import { commandWords, namedEnv, type EngineConfig } from './engines.ts';
import { limits } from '../limits.ts';

export interface AiEditConfig {
  engines: EngineConfig[];
  /** The engine of requests without a leading @word. */
  defaultEngine: string;
  timeoutMs: number;
  concurrency: number;
  /** The variables AI_EDIT_ENV names (a command gets them besides PATH, HOME and LANG). */
  envNames: string[];
}

export const AI_EDIT_ENV_HELP: Array<[string, string]> = [
  [
    'AI_EDIT_COMMAND',
    'AI editing: a command (no shell) that reads the prompt on stdin and writes the element on stdout',
  ],
  [
    'AI_EDIT_URL',
    'AI editing: an HTTP engine instead, e.g. https://api.anthropic.com/v1/messages or an OpenAI-compatible …/v1/chat/completions',
  ],
  ['AI_EDIT_API_KEY', 'AI editing: the HTTP engine’s API key (sent to AI_EDIT_URL only, never to a browser)'],
  ['AI_EDIT_MODEL', 'AI editing: the HTTP engine’s model, e.g. claude-sonnet-4-5 or gpt-4.1'],
  ['AI_EDIT_API', 'AI editing: anthropic or openai (default: anthropic when AI_EDIT_URL ends in /messages)'],
  ['AI_EDIT_NAME', 'AI editing: the default engine’s @name (default ai)'],
  [
    'AI_EDIT_ENGINES',
    'AI editing: more engines by @name, comma-separated; each set by AI_EDIT_<NAME>_COMMAND, or _URL, _API_KEY, _MODEL, _API',
  ],
  [
    'AI_EDIT_ENV',
    'AI editing: variables a command engine gets besides PATH, HOME and LANG, comma-separated (e.g. ANTHROPIC_API_KEY); never Kiln’s own settings',
  ],
  ['AI_EDIT_TIMEOUT_MS', `AI editing: the longest one request may run (default ${limits.aiEdit.timeoutMs})`],
  [
    'AI_EDIT_CONCURRENCY',
    `AI editing: requests running at once in one process (default ${limits.aiEdit.concurrency}; ${limits.aiEdit.perOwner} per account)`,
  ],
];

const NAME = /^[a-z0-9_-]{1,32}$/;

export class AiEditConfigError extends Error {}

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** The names AI_EDIT_ENV lists; `kilnNames` (Kiln's own settings, which hold its secrets) are refused. */
export function envNamesOf(raw: string | undefined, kilnNames: readonly string[]): string[] {
  const names = (raw ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!VARIABLE.test(n)) throw new AiEditConfigError(`AI_EDIT_ENV: "${n}" is not a variable name.`);
    if (kilnNames.includes(n) || n.startsWith('AI_EDIT_') || n.startsWith('KILN_'))
      throw new AiEditConfigError(
        `AI_EDIT_ENV names ${n}, one of Kiln's own settings: an engine never gets them (name the engine's own variables).`,
      );
  }
  return names;
}

function engineAt(env: NodeJS.ProcessEnv, prefix: string, name: string, envNames: string[] = []): EngineConfig | null {
  const get = (k: string) => {
    const v = env[`${prefix}${k}`];
    return v === undefined || v === '' ? undefined : v;
  };
  const command = get('COMMAND');
  const url = get('URL');
  if (command && url) throw new AiEditConfigError(`${prefix}COMMAND and ${prefix}URL: set one of them.`);
  if (command) {
    let argv: string[];
    try {
      argv = commandWords(command);
    } catch (err) {
      throw new AiEditConfigError(`${prefix}COMMAND: ${(err as Error).message}`);
    }
    if (argv.length === 0) throw new AiEditConfigError(`${prefix}COMMAND is empty.`);
    return { name, command: argv, env: namedEnv(envNames, env) };
  }
  if (url) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new AiEditConfigError(`${prefix}URL must be an http(s) URL (got ${JSON.stringify(url)}).`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:')
      throw new AiEditConfigError(`${prefix}URL must be an http(s) URL.`);
    const api = get('API');
    if (api !== undefined && api !== 'anthropic' && api !== 'openai')
      throw new AiEditConfigError(`${prefix}API must be anthropic or openai.`);
    return { name, url, apiKey: get('API_KEY'), model: get('MODEL'), api };
  }
  return null;
}

function bounded(env: NodeJS.ProcessEnv, key: string, fallback: number, min: number, max: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new AiEditConfigError(`${key} must be a whole number from ${min} to ${max}.`);
  return n;
}

/** AI editing as the environment sets it, or null when no engine is set. */
export function aiEditConfig(env: NodeJS.ProcessEnv, kilnNames: readonly string[] = []): AiEditConfig | null {
  const envNames = envNamesOf(env.AI_EDIT_ENV, kilnNames);
  const defaultName = (env.AI_EDIT_NAME || 'ai').toLowerCase();
  if (!NAME.test(defaultName)) throw new AiEditConfigError('AI_EDIT_NAME: 1 to 32 of a-z 0-9 _ -.');
  const engines: EngineConfig[] = [];
  const first = engineAt(env, 'AI_EDIT_', defaultName, envNames);
  if (first) engines.push(first);
  for (const raw of (env.AI_EDIT_ENGINES ?? '').split(',')) {
    const name = raw.trim().toLowerCase();
    if (!name) continue;
    if (!NAME.test(name) || name === 'page')
      throw new AiEditConfigError(`AI_EDIT_ENGINES: "${name}" is not an engine name (a-z 0-9 _ -, not page).`);
    if (engines.some((e) => e.name === name)) throw new AiEditConfigError(`AI_EDIT_ENGINES names ${name} twice.`);
    const prefix = `AI_EDIT_${name.toUpperCase().replace(/-/g, '_')}_`;
    const e = engineAt(env, prefix, name, envNames);
    if (!e) throw new AiEditConfigError(`AI_EDIT_ENGINES names ${name}: set ${prefix}COMMAND or ${prefix}URL.`);
    engines.push(e);
  }
  if (engines.length === 0) return null;
  return {
    engines,
    defaultEngine: first ? defaultName : engines[0].name,
    timeoutMs: bounded(env, 'AI_EDIT_TIMEOUT_MS', limits.aiEdit.timeoutMs, 1000, 60 * 60_000),
    concurrency: bounded(env, 'AI_EDIT_CONCURRENCY', limits.aiEdit.concurrency, 1, 1000),
    envNames,
  };
}
