// The engines an operator gives AI editing, and how each runs a prompt:
// - a command (no shell): the prompt on its stdin, its stdout streamed back, exit 0 = done;
// - an HTTP engine: the Anthropic Messages API or an OpenAI-compatible chat completion, streamed.
// The API key stays on the server: it goes to the engine's URL and nowhere else. A command reads prompts that
// others can shape (a page's text, an app's visitors), so it runs with a minimal environment: PATH, HOME and
// LANG, plus the variables the operator names (AI_EDIT_ENV, `--env`); never the server's secrets or a Kiln key.
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { asText, type Prompt } from './prompt.ts';
import { limits } from '../limits.ts';
import { eventData } from '../core/event-stream.ts';

export interface EngineConfig {
  name: string;
  command?: string[];
  url?: string;
  apiKey?: string;
  model?: string;
  api?: 'anthropic' | 'openai';
  /** A command's environment besides PATH, HOME and LANG (the variables the operator named). */
  env?: Record<string, string>;
}

/** What every command gets of the environment it was started in. */
const BASE_ENV = ['PATH', 'HOME', 'LANG'] as const;

/** A command's whole environment: PATH, HOME, LANG of `from` (this process's) and `named`. */
export function commandEnv(named: Record<string, string> = {}, from: NodeJS.ProcessEnv = process.env) {
  const env: Record<string, string> = {};
  for (const k of BASE_ENV) if (from[k] !== undefined) env[k] = from[k];
  return { ...env, ...named };
}

/** The values of the variables named (those set), from `from`. */
export function namedEnv(names: readonly string[], from: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of names) if (from[k] !== undefined) env[k] = from[k];
  return env;
}

export interface RunOptions {
  signal: AbortSignal;
  /** Each piece of the reply as it arrives. */
  onText: (text: string) => void;
}

export interface Engine {
  readonly name: string;
  /** What the admin panel and the request's `done` say it is (never the key). */
  readonly describe: string;
  /** Runs a prompt to its end; resolves with the model's name (if known) and why it stopped. */
  run(prompt: Prompt, opts: RunOptions): Promise<{ model?: string; stopReason: string }>;
}

export function engineFrom(c: EngineConfig): Engine {
  if (c.command) return new CommandEngine(c.name, c.command, commandEnv(c.env));
  return new HttpEngine(c);
}

/** Splits a command line into words as a shell would quote them ('…', "…", \), without running a shell. */
export function commandWords(line: string): string[] {
  const words: string[] = [];
  let cur = '';
  let has = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) words.push(cur);
      cur = '';
      has = false;
    } else cur += ch;
  }
  if (quote) throw new Error(`unclosed ${quote} in the command`);
  if (has || cur) words.push(cur);
  return words;
}

class CommandEngine implements Engine {
  readonly name: string;
  readonly describe: string;
  private readonly argv: string[];
  private readonly env: Record<string, string>;
  constructor(name: string, argv: string[], env: Record<string, string>) {
    this.name = name;
    this.argv = argv;
    this.env = env;
    this.describe = `command ${argv[0]}`;
  }

  run(prompt: Prompt, { signal, onText }: RunOptions): Promise<{ model?: string; stopReason: string }> {
    return new Promise((resolve, reject) => {
      // Its own process group: a cancel ends whatever the command started too.
      const child = spawn(this.argv[0], this.argv.slice(1), {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        env: this.env,
      });
      const out = new StringDecoder('utf8');
      let stderr = '';
      let bytes = 0;
      let settled = false;
      const kill = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        kill();
        reject(err);
      };
      const onAbort = () => fail(signal.reason instanceof Error ? signal.reason : new Error('cancelled'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      child.on('error', (err) => fail(new Error(`the engine command could not start: ${err.message}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > limits.aiEdit.replyBytes) return fail(new Error('the engine’s reply is too long'));
        const text = out.write(chunk);
        if (text && !settled) onText(text);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-2000);
      });
      child.on('close', (code, sig) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) return;
        const rest = out.end();
        if (rest) onText(rest);
        if (code === 0) {
          settled = true;
          resolve({ stopReason: 'end_turn' });
        } else
          fail(
            new Error(
              `the engine exited with ${code ?? sig}${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`,
            ),
          );
      });
      child.stdin.on('error', () => {}); // a command that does not read its input is its own business
      child.stdin.end(asText(prompt));
    });
  }
}

class HttpEngine implements Engine {
  readonly name: string;
  readonly describe: string;
  private readonly c: EngineConfig & { api: 'anthropic' | 'openai' };
  constructor(c: EngineConfig) {
    const api = c.api ?? (/\/messages\/?$/.test(new URL(c.url!).pathname) ? 'anthropic' : 'openai');
    this.c = { ...c, api };
    this.name = c.name;
    this.describe = `${api === 'anthropic' ? 'Anthropic Messages API' : 'OpenAI-compatible API'} at ${new URL(c.url!).host}${c.model ? `, model ${c.model}` : ''}`;
  }

  async run(prompt: Prompt, { signal, onText }: RunOptions): Promise<{ model?: string; stopReason: string }> {
    const { api, url, apiKey, model } = this.c;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    let body: unknown;
    if (api === 'anthropic') {
      if (apiKey) headers['x-api-key'] = apiKey;
      headers['anthropic-version'] = '2023-06-01';
      body = {
        model,
        max_tokens: 8192,
        stream: true,
        system: prompt.system,
        messages: [{ role: 'user', content: prompt.user }],
      };
    } else {
      if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      body = {
        model,
        stream: true,
        messages: [
          { role: 'system', content: prompt.system },
          { role: 'user', content: prompt.user },
        ],
      };
    }
    const res = await fetch(url!, { method: 'POST', headers, body: JSON.stringify(body), signal });
    if (!res.ok || !res.body) {
      const text = (await res.text().catch(() => '')).slice(0, 500);
      throw new Error(`the engine answered ${res.status}${text ? `: ${apiMessage(text)}` : ''}`);
    }
    let stopReason = 'end_turn';
    let seenModel: string | undefined = model;
    const events = eventData(res.body as unknown as AsyncIterable<Uint8Array>, {
      maxBytes: limits.aiEdit.replyBytes * 4,
      tooLong: 'the engine’s reply is too long',
    });
    for await (const data of events) {
      if (data.trim() === '[DONE]') return { model: seenModel, stopReason };
      let e: StreamEvent;
      try {
        e = JSON.parse(data);
      } catch {
        continue;
      }
      if (api === 'anthropic') {
        if (e.type === 'message_start' && e.message?.model) seenModel = e.message.model;
        else if (e.type === 'content_block_delta' && typeof e.delta?.text === 'string') onText(e.delta.text);
        else if (e.type === 'message_delta' && e.delta?.stop_reason) stopReason = e.delta.stop_reason;
        else if (e.type === 'error') throw new Error(`the engine reported: ${e.error?.message ?? 'an error'}`);
        else if (e.type === 'message_stop') return { model: seenModel, stopReason };
      } else {
        if (e.error) throw new Error(`the engine reported: ${e.error.message ?? 'an error'}`);
        if (typeof e.model === 'string') seenModel = e.model;
        const choice = e.choices?.[0];
        if (typeof choice?.delta?.content === 'string') onText(choice.delta.content);
        if (choice?.finish_reason) stopReason = choice.finish_reason === 'stop' ? 'end_turn' : choice.finish_reason;
      }
    }
    return { model: seenModel, stopReason };
  }
}

/** A streamed event of either API (the fields read here). */
interface StreamEvent {
  type?: string;
  model?: unknown;
  message?: { model?: string };
  delta?: { text?: unknown; stop_reason?: string };
  error?: { message?: string };
  choices?: Array<{ delta?: { content?: unknown }; finish_reason?: string | null }>;
}

/** The message of an API's JSON error body, or the body's beginning. */
function apiMessage(text: string): string {
  try {
    const j = JSON.parse(text);
    return String(j.error?.message ?? j.message ?? text).slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}
