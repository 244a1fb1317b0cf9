// `kiln ai-edit serve`: an agent on the owner's own machine that answers their pages' AI edit requests with a
// local command, over the host's bus with the account's sync key (the bus takes it for the account's own
// hosts). It speaks the wire the built-in handler does (src/ai-edit/handler.ts): ack at once, deltas, done or
// error; a cancel kills the command. It answers requests without an @engine (or, with --engine NAME, those
// that start with @NAME); when the server's built-in handler or another agent acked first, it lets go. The command
// reads prompts others can shape: it gets PATH, HOME, LANG and the variables `--env` names, never the sync key.
// Bounded as Kiln's own engines are: a command still running after `timeoutMs` is killed and the page told; at
// most `concurrency` commands run at once, and a request beyond them is refused (acked, then an error saying why).
import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import { randomBytes } from 'node:crypto';
import { engineFrom, namedEnv, type Engine } from './engines.ts';
import { EDIT_REQUEST, REQUEST_ID, buildPrompt, cleanReply, engineOf } from './prompt.ts';
import { DeltaBatcher } from './handler.ts';
import { eventData } from '../core/event-stream.ts';
import { setTimeout as delay } from 'node:timers/promises';
import { limits } from '../limits.ts';

export interface AgentOptions {
  /** The document host's address, e.g. https://alice.example.com (or http://alice.kiln.localhost:8080). */
  url: string;
  key: string;
  command: string[];
  /** Variables the command gets besides PATH, HOME and LANG (from this process's environment). */
  env?: string[];
  /** Answer only requests that start with @engine. */
  engine?: string;
  /** The longest a command may run (default: as Kiln's own engines). */
  timeoutMs?: number;
  /** Commands running at once (default: as Kiln's own engines per owner). */
  concurrency?: number;
  log: (line: string) => void;
  /** Stops the agent. */
  signal?: AbortSignal;
}

interface Envelope {
  channel: string;
  type: string;
  payload: unknown;
  sender: string;
}

/** Names under `.localhost` are this machine (as browsers treat them), whatever the resolver says. */
function lookup(hostname: string, opts: dns.LookupOptions, cb: (...args: unknown[]) => void) {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if (opts.all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
    else cb(null, '127.0.0.1', 4);
    return;
  }
  dns.lookup(hostname, opts, cb as never);
}

function call(method: string, url: URL, headers: Record<string, string>, body?: string): Promise<http.IncomingMessage> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method, headers, lookup: lookup as never }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function textOf(res: http.IncomingMessage): Promise<string> {
  let t = '';
  res.setEncoding('utf8');
  for await (const chunk of res) t += chunk;
  return t;
}

/** Runs until stopped: subscribes, answers, reconnects (1 s doubling to 30 s) when the stream ends. A refused
 *  key (401/403) ends it with that error. */
export async function serveAgent(o: AgentOptions): Promise<void> {
  const base = new URL(o.url.replace(/\/+$/, ''));
  const names = (o.env ?? []).filter((n) => n !== 'KILN_SYNC_KEY');
  const engine = engineFrom({ name: o.engine ?? 'agent', command: o.command, env: namedEnv(names, process.env) });
  const sender = `agent-${randomBytes(3).toString('hex')}`;
  const running = new Map<string, AbortController>();
  const acks = new Map<string, string[]>();
  const ownAck = new Map<string, () => void>();
  const timeoutMs = o.timeoutMs ?? limits.aiEdit.timeoutMs;
  const concurrency = o.concurrency ?? limits.aiEdit.perOwner;
  /** Commands running now. */
  let busy = 0;

  const send = async (type: string, payload: Record<string, unknown>) => {
    const res = await call(
      'POST',
      new URL('/_/bus/send', base),
      { 'x-api-key': o.key, 'content-type': 'application/json' },
      JSON.stringify({ channel: 'ai-edit', type, v: 1, payload, sender }),
    );
    const text = await textOf(res);
    if (res.statusCode !== 200) throw new Error(`the bus refused ${type}: ${res.statusCode} ${text.slice(0, 200)}`);
  };

  const answer = async (env: Envelope) => {
    const parsed = EDIT_REQUEST.safeParse(env.payload);
    if (!parsed.success) return;
    const req = parsed.data;
    const { engine: word } = engineOf(req.comment);
    if ((o.engine ?? null) !== word || running.has(req.id)) return;
    const abort = new AbortController();
    running.set(req.id, abort);
    const heard = new Promise<void>((r) => ownAck.set(req.id, r));
    try {
      await send('ai-edit/ack', { id: req.id, engine: engine.name });
      await Promise.race([heard, new Promise((r) => setTimeout(r, 5000))]);
      // First ack wins: another's before ours means it is theirs.
      const order = acks.get(req.id) ?? [];
      if (order[0] !== undefined && order[0] !== sender) {
        o.log(`${req.id}: taken by ${order[0]}`);
        return;
      }
      if (busy >= concurrency)
        throw new Busy(
          `${busy} AI edit${busy === 1 ? ' is' : 's are'} running on your agent (its --concurrency): try again when one is done.`,
        );
      busy++;
      const timer = setTimeout(
        () => abort.abort(new TimedOut(`the command took longer than ${timeoutMs / 1000} s (its --timeout)`)),
        timeoutMs,
      );
      try {
        o.log(`${req.id}: answering "${req.comment.slice(0, 60)}" with ${engine.describe}`);
        await run(engine, req, abort.signal, send);
        o.log(`${req.id}: done`);
      } finally {
        clearTimeout(timer);
        busy--;
      }
    } catch (err) {
      if (abort.signal.aborted && !(abort.signal.reason instanceof TimedOut)) o.log(`${req.id}: cancelled`);
      else {
        o.log(`${req.id}: ${(err as Error).message}`);
        const message = err instanceof Busy ? err.message : `Your agent failed: ${(err as Error).message}`;
        await send('ai-edit/error', { id: req.id, message }).catch(() => {});
      }
    } finally {
      running.delete(req.id);
      acks.delete(req.id);
      ownAck.delete(req.id);
    }
  };

  const onEnvelope = (env: Envelope) => {
    if (env.channel !== 'ai-edit') return;
    const id = REQUEST_ID.safeParse(env.payload);
    if (env.type === 'ai-edit/request' && env.sender !== sender) void answer(env);
    else if (env.type === 'ai-edit/ack' && id.success) {
      const list = acks.get(id.data.id) ?? [];
      list.push(env.sender);
      acks.set(id.data.id, list);
      if (env.sender === sender) ownAck.get(id.data.id)?.();
    } else if (env.type === 'ai-edit/cancel' && id.success) running.get(id.data.id)?.abort();
  };

  let wait = 1000;
  while (!o.signal?.aborted) {
    let res: http.IncomingMessage;
    try {
      res = await call('GET', new URL('/_/bus/subscribe?channel=ai-edit', base), {
        'x-api-key': o.key,
        accept: 'text/event-stream',
      });
    } catch (err) {
      o.log(`cannot reach ${base.origin}: ${(err as Error).message}; trying again in ${wait / 1000} s`);
      await sleep(wait, o.signal);
      wait = Math.min(wait * 2, 30_000);
      continue;
    }
    if (res.statusCode === 401 || res.statusCode === 403) {
      const body = await textOf(res);
      let msg = body;
      try {
        msg = JSON.parse(body).msg ?? body;
      } catch {}
      throw new Error(`${base.origin} refused the key (${res.statusCode}): ${msg}`);
    }
    if (res.statusCode !== 200) {
      res.resume();
      o.log(`${base.origin} answered ${res.statusCode}; trying again in ${wait / 1000} s`);
      await sleep(wait, o.signal);
      wait = Math.min(wait * 2, 30_000);
      continue;
    }
    o.log(
      `listening for AI edit requests on ${base.origin} (${o.engine ? `@${o.engine}` : 'requests without an @engine'})`,
    );
    wait = 1000;
    const stop = () => res.destroy();
    o.signal?.addEventListener('abort', stop, { once: true });
    try {
      for await (const data of eventData(res)) {
        try {
          onEnvelope(JSON.parse(data));
        } catch {
          // not an envelope
        }
      }
    } catch {
      // the connection ended
    }
    o.signal?.removeEventListener('abort', stop);
    if (!o.signal?.aborted) o.log('the bus stream ended; reconnecting');
  }
  for (const a of running.values()) a.abort();
}

async function run(
  engine: Engine,
  req: import('./prompt.ts').EditRequest,
  signal: AbortSignal,
  send: (type: string, payload: Record<string, unknown>) => Promise<void>,
) {
  const prompt = buildPrompt(req, []);
  if ('problem' in prompt) throw new Error(prompt.problem);
  let reply = '';
  let sending = Promise.resolve();
  const deltas = new DeltaBatcher((index, text) => {
    // In order: each delta after the one before it.
    sending = sending.then(() => send('ai-edit/delta', { id: req.id, index, text }));
  });
  try {
    const result = await engine.run(prompt, {
      signal,
      onText: (t) => {
        reply += t;
        deltas.push(t);
      },
    });
    deltas.flush();
    await sending;
    const html = cleanReply(reply);
    if (!html) throw new Error('the command wrote nothing');
    await send('ai-edit/done', { id: req.id, html, stopReason: result.stopReason });
  } finally {
    deltas.stop();
  }
}

/** A command that ran out its --timeout (a cancel is any other abort). */
class TimedOut extends Error {}
/** A request beyond --concurrency. */
class Busy extends Error {}

/** Waits `ms`, or less when the agent is stopped. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => {});
}
