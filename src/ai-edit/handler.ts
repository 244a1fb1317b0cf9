// The built-in AI edit handler: answers `ai-edit/request` on a host's bus with an engine the operator set
// (src/ai-edit/config.ts), the way hyperclayjs 1.38 expects: `ai-edit/ack` at pickup, `ai-edit/delta
// {id, index, text}` while the reply streams (batched), then `ai-edit/done {id, html, stopReason, model}`
// or `ai-edit/error {id, message}`; `ai-edit/cancel {id}` stops the engine.
//
// A request is handled by the process it was sent to; its cancel may arrive on any process, so the
// handler listens to the account's bus (across processes). One handler per request: the owner may run
// an agent of their own (`kiln ai-edit serve`), so the built-in one waits `agentGraceMs` first and stands
// aside when an agent acked; and when both ack, the first ack on the bus wins (every party sees the same
// order), the other goes quiet. With no engine set, a plan not allowed, an unknown @engine, or a request
// in a shape Kiln's engines cannot take, the page hears why (an error), unless an agent took the request.
//
// Who may spend the operator's engines: never an app user (anyone may sign up on a public app), an account
// only once its email is confirmed, and within its plan's daily budget (src/ai-edit/budget.ts), counted when
// the prompt is about to go to the engine. Refusals carry a `code` beside the message.
import type { Database } from '../store/db.ts';
import type { BlobStore } from '../blobs/store.ts';
import type { PlanSettings } from '../billing/plan-settings.ts';
import type { DocumentCache } from '../core/document-cache.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { MessageBus } from '../bus/bus.ts';
import type { Caller } from '../access/caller.ts';
import type { SendBody } from '../bus/wire.ts';
import type { BusMessage } from '../events/bus.ts';
import type { AiEditConfig } from './config.ts';
import { engineFrom, type Engine } from './engines.ts';
import {
  EDIT_REQUEST,
  REQUEST_ID,
  buildPrompt,
  cleanReply,
  engineOf,
  referencesOf,
  type EditRequest,
  type Reference,
} from './prompt.ts';
import { limits } from '../limits.ts';
import { Counts } from '../core/counts.ts';
import { randomHex, type Clock } from '../clock.ts';
import { recordActivity } from '../store/activity.ts';
import { findByPath } from '../nodes/find.ts';
import { documentContent } from '../nodes/serve.ts';
import { documentPathOf } from '../save/document-url.ts';
import { EDITABLE_EXTENSIONS, extensionOf } from '../uploads/content-types.ts';
import { planRow } from '../store/accounts.ts';
import { effectivePlan } from '../billing/plans.ts';
import { KilnError } from '../errors.ts';
import type { Plan } from '../store/schema.ts';
import { charge, dayOf } from './budget.ts';

/** What the handler uses of the services, part by part: it is one of them, so it does not import src/services.ts. */
interface HandlerServices {
  database: Database;
  clock: Clock;
  bus: MessageBus;
  blobs: BlobStore;
  planSettings: PlanSettings;
  documents: DocumentCache;
  metrics: Metrics;
}

export const CHANNEL = 'ai-edit';
/** What a page hears of its edit when Kiln stops. */
export const RESTARTING = 'Kiln is restarting: ask again in a moment.';

const kb = (bytes: number) => `${Math.ceil(bytes / 1024).toLocaleString('en')} KB`;

/** A message heard on a host's bus: the account's, what was sent, and the page it says it came from. */
interface Heard {
  accountId: number;
  message: SendBody;
  pageUrl: string;
}

/** One request while the handler has it. */
interface Job {
  id: string;
  abort: AbortController;
  /** Ids (bus order) of other handlers' acks of this request. */
  otherAcks: number[];
  /** Resolves with the id of this handler's own ack as the bus delivered it. */
  ownAck: Promise<number>;
  ownAckHeard: (id: number) => void;
  wake: () => void;
}

class Refusal extends Error {}

export class AiEditHandler {
  /** This process's sender id on the bus. */
  readonly sender = `kiln-${randomHex(4)}`;
  private readonly engines: Map<string, Engine>;
  private readonly config: AiEditConfig | null;
  private readonly jobs = new Map<string, Job>();
  /** Requests running in this process: per owner, and all of them (`all`). */
  private readonly running = new Counts<number | 'all'>();
  private readonly s: HandlerServices;
  /** Requests being handled in this process (close waits for them). */
  private readonly runs = new Set<Promise<void>>();
  /** Set once the process is stopping. */
  private closed: Promise<void> | null = null;

  constructor(s: HandlerServices, config: AiEditConfig | null) {
    this.s = s;
    this.config = config;
    this.engines = new Map((config?.engines ?? []).map((c) => [c.name, engineFrom(c)]));
  }

  /** Whether an engine is set. */
  get on(): boolean {
    return this.engines.size > 0;
  }

  /** The engines, for the admin panel and /_/meta (never a key). */
  list(): Array<{ name: string; describe: string; isDefault: boolean }> {
    return [...this.engines.values()].map((e) => ({
      name: e.name,
      describe: e.describe,
      isDefault: e.name === this.config?.defaultEngine,
    }));
  }

  /** A message sent on a host's bus through this process, by a caller the bus let on (src/bus/use-cases.ts). */
  heard(caller: Caller, heard: Heard): void {
    const { accountId, message: body } = heard;
    if (body.channel !== CHANNEL || body.type !== 'ai-edit/request') return;
    if (this.closed) {
      const id = REQUEST_ID.safeParse(body.payload);
      if (id.success)
        void this.reply(accountId, 'ai-edit/error', { id: id.data.id, message: RESTARTING }).catch(() => {});
      return;
    }
    const run = this.request(caller, heard).catch((err) => console.error('AI edit failed:', err));
    this.runs.add(run);
    void run.finally(() => this.runs.delete(run));
  }

  private async request(caller: Caller, heard: Heard): Promise<void> {
    const { accountId, message: body } = heard;
    const named = REQUEST_ID.safeParse(body.payload);
    if (!named.success) return;
    const id = named.data.id;
    const key = `${accountId} ${id}`;
    if (this.jobs.has(key)) return;
    let ownAckHeard: (id: number) => void = () => {};
    const ownAck = new Promise<number>((resolve) => {
      ownAckHeard = resolve;
    });
    const job: Job = { id, abort: new AbortController(), otherAcks: [], ownAck, ownAckHeard, wake: () => {} };
    this.jobs.set(key, job);
    let off = () => {};
    try {
      off = await this.s.bus.listen(accountId, (m, busId) => this.onBus(job, m, busId));
      // An agent of the owner's may take it first, whatever its shape: a request hyperclayjs would not send
      // may be one the agent understands, so it waits the same grace before it is called malformed.
      if (await this.takenByAgent(job)) return;
      const parsed = EDIT_REQUEST.safeParse(body.payload);
      if (!parsed.success) {
        await this.reply(accountId, 'ai-edit/error', { id, message: 'The AI edit request is malformed.' });
        return;
      }
      await this.handle(caller, heard, parsed.data, job);
    } finally {
      off();
      this.jobs.delete(key);
    }
  }

  /** Waits `agentGraceMs` for another handler's ack (or a cancel): true when the request is not this
   *  handler's to answer. */
  private async takenByAgent(job: Job): Promise<boolean> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, limits.aiEdit.agentGraceMs);
      job.wake = () => {
        if (job.otherAcks.length > 0 || job.abort.signal.aborted) {
          clearTimeout(timer);
          resolve();
        }
      };
    });
    job.wake = () => {};
    return job.otherAcks.length > 0 || job.abort.signal.aborted;
  }

  /** What the handler hears of its request on the bus: other handlers' acks, its own ack coming back, a cancel. */
  private onBus(job: Job, m: BusMessage, id: number) {
    const e = m.envelope;
    if (e.channel !== CHANNEL || (e.payload as { id?: unknown } | null)?.id !== job.id) return;
    if (e.type === 'ai-edit/ack') {
      if (e.sender === this.sender) job.ownAckHeard(id);
      else job.otherAcks.push(id);
      job.wake();
    } else if (e.type === 'ai-edit/cancel') {
      job.abort.abort(new Error('cancelled'));
      job.wake();
    }
  }

  private async handle(caller: Caller, heard: Heard, req: EditRequest, job: Job) {
    const { accountId } = heard;
    const { engine: word } = engineOf(req.comment);
    const started = Date.now();
    const line = { engine: word ?? this.config?.defaultEngine ?? '', inBytes: 0, outBytes: 0 };
    let outcome = 'done';
    let slot: (() => void) | null = null;
    try {
      const { engine, plan, unlimited } = await this.engineFor(accountId, word, caller);
      line.engine = engine.name;
      slot = this.takeSlot(accountId);
      const ack = await this.reply(accountId, 'ai-edit/ack', { id: req.id, engine: engine.name });
      // First ack wins: wait for ours to come back, by which time any earlier one has arrived.
      const own = await Promise.race([job.ownAck, new Promise<number>((r) => setTimeout(() => r(ack), 5000).unref())]);
      if (job.otherAcks.some((other) => other < own)) {
        outcome = 'taken by an agent';
        return;
      }
      const prompt = buildPrompt(req, await this.references(accountId, req));
      if ('problem' in prompt) throw new Refusal(prompt.problem);
      const inBytes = Buffer.byteLength(prompt.system) + Buffer.byteLength(prompt.user);
      await this.charge(accountId, plan, unlimited, inBytes);
      line.inBytes = inBytes;
      // An engine exists, so the configuration does.
      const { timeoutMs } = this.config!;
      const timeout = setTimeout(
        () => job.abort.abort(new Refusal(`The engine took longer than ${timeoutMs / 1000} s.`)),
        timeoutMs,
      );
      const deltas = new DeltaBatcher(
        (index, text) => void this.reply(accountId, 'ai-edit/delta', { id: req.id, index, text }),
      );
      let reply = '';
      try {
        const result = await engine.run(prompt, {
          signal: job.abort.signal,
          onText: (text) => {
            reply += text;
            deltas.push(text);
          },
        });
        deltas.flush();
        const html = cleanReply(reply);
        line.outBytes = Buffer.byteLength(html);
        if (!html) throw new Refusal('The engine’s reply was empty.');
        await this.reply(accountId, 'ai-edit/done', {
          id: req.id,
          html,
          stopReason: result.stopReason,
          ...(result.model ? { model: result.model } : {}),
        });
      } finally {
        clearTimeout(timeout);
        deltas.stop();
      }
    } catch (err) {
      const cancelled = job.abort.signal.aborted && !(job.abort.signal.reason instanceof Refusal);
      const refused = err instanceof Refusal || err instanceof KilnError;
      outcome = cancelled
        ? 'cancelled'
        : err instanceof KilnError && err.code === 'ai-edit-budget'
          ? 'over budget'
          : refused
            ? 'refused'
            : 'failed';
      if (!cancelled) {
        const message = refused ? (err as Error).message : `The engine failed: ${(err as Error).message}`;
        if (outcome === 'failed') console.error(`AI edit ${req.id} (@${line.engine}) failed:`, (err as Error).message);
        const code = err instanceof KilnError ? { code: err.code } : {};
        await this.reply(accountId, 'ai-edit/error', { id: req.id, message, ...code });
      }
    } finally {
      slot?.();
      if (outcome !== 'taken by an agent')
        await this.record(caller, heard, { ...line, outcome, ms: Date.now() - started });
    }
  }

  /** The engine a request names (or the default), when this caller and account may use AI editing here; the
   *  account's plan, and whether it has no budget (superadmins). */
  private async engineFor(
    accountId: number,
    word: string | null,
    caller: Caller,
  ): Promise<{ engine: Engine; plan: Plan; unlimited: boolean }> {
    const who = caller.actor;
    // The bus lets only a person on (src/bus/use-cases.ts busMember).
    if (!who) throw new Refusal('Sign in first.');
    // Anyone may sign up on a public app: its users never spend the operator's engines.
    if (who.accountType === 'app_user')
      throw new KilnError(
        403,
        'AI editing is for the developers of this Kiln, not for the users of an app on it.',
        'ai-edit-app-user',
      );
    if (!who.emailConfirmed && !who.isSuperadmin)
      throw new KilnError(
        403,
        `Confirm your email before using AI editing: on your account page, enter your address (${who.email}) under Email and open the link it sends.`,
        'email-unconfirmed',
      );
    if (!this.on)
      throw new Refusal(
        'AI editing is not set up on this Kiln: its operator can set an engine (AI_EDIT_COMMAND or AI_EDIT_URL), or run your own agent with `kiln ai-edit serve` (node bin/kiln.js ai-edit serve, in a checkout of Kiln).',
      );
    const row = await planRow(this.s.database.db, accountId);
    const plan = row
      ? effectivePlan({ plan: row.plan, hasActiveSubscription: row.has_active_subscription === 1 })
      : 'free';
    if (!this.s.planSettings.aiEditPlans[plan] && row?.is_superadmin !== 1)
      throw new Refusal(`AI editing is not included in the ${plan} plan on this Kiln.`);
    const name = word ?? this.config!.defaultEngine;
    const engine = this.engines.get(name);
    if (!engine)
      throw new Refusal(
        `There is no engine @${name} here: use ${[...this.engines.keys()].map((n) => `@${n}`).join(', ')}, or answer @${name} with your own agent (kiln ai-edit serve --engine ${name}).`,
      );
    return { engine, plan, unlimited: row?.is_superadmin === 1 };
  }

  /** Counts the request against the account's daily budget: 429 `ai-edit-budget` when it does not fit. */
  private async charge(accountId: number, plan: Plan, unlimited: boolean, bytes: number): Promise<void> {
    const budget = this.s.planSettings.aiEditBudget[plan];
    // Administrators have no budget of a plan; the largest one still bounds what a day counts.
    const used = await charge(
      this.s.database.db,
      accountId,
      dayOf(this.s.clock.now()),
      bytes,
      unlimited ? limits.aiEdit.maxBudget : budget,
    );
    if (!used) return;
    const again = 'It starts over at 00:00 UTC; the administrator of this Kiln sets the budget of each plan.';
    if (used.requests >= budget.requests)
      throw new KilnError(
        429,
        `This account has used today's AI editing: the ${plan} plan allows ${budget.requests} AI edits a day on this Kiln (used today: ${used.requests}). ${again}`,
        'ai-edit-budget',
      );
    throw new KilnError(
      429,
      `This request would pass today's AI editing budget: the ${plan} plan allows ${kb(budget.bytes)} sent to the engine a day on this Kiln (used today: ${kb(used.bytes)}; this request: ${kb(bytes)}). ${again}`,
      'ai-edit-budget',
    );
  }

  private takeSlot(accountId: number): () => void {
    const mine = this.running.get(accountId);
    if (mine >= limits.aiEdit.perOwner)
      throw new Refusal(`${mine} AI edits of yours are running: try again when one is done.`);
    if (this.running.get('all') >= this.config!.concurrency)
      throw new Refusal('AI editing is busy on this Kiln: try again in a moment.');
    return this.running.take(accountId, 'all');
  }

  /** The `@path` references: the account's own documents and text files, each bounded. */
  private async references(accountId: number, req: EditRequest): Promise<Reference[]> {
    const paths = referencesOf(req);
    if (paths.length > limits.aiEdit.refs)
      throw new Refusal(`At most ${limits.aiEdit.refs} @file references per request.`);
    const out: Reference[] = [];
    for (const path of paths) {
      const node = await findByPath(this.s, accountId, path);
      let bytes: Buffer | null = null;
      if (node?.type === 'site') bytes = (await documentContent(this.s, node))?.bytes ?? null;
      else if (node?.type === 'upload' && EDITABLE_EXTENSIONS.has(extensionOf(node.name)) && node.blob_sha256)
        bytes = await this.s.blobs.get(node.blob_sha256);
      if (!bytes) throw new Refusal(`@${path}: there is no such document or text file of yours.`);
      const truncated = bytes.length > limits.aiEdit.refBytes;
      out.push({ path, text: bytes.subarray(0, limits.aiEdit.refBytes).toString('utf8'), truncated });
    }
    return out;
  }

  /** Sends on the account's bus as this handler; resolves with the message's id. */
  private reply(accountId: number, type: string, payload: Record<string, unknown>): Promise<number> {
    return this.s.bus.publish(accountId, { channel: CHANNEL, type, v: 1, payload, sender: this.sender }, 'kiln');
  }

  /** The owner's activity: who asked, which engine, how much went each way, the outcome; never the content. */
  private async record(
    caller: Caller,
    { accountId, pageUrl }: Heard,
    r: { engine: string; inBytes: number; outBytes: number; outcome: string; ms: number },
  ) {
    let path = '';
    try {
      path = documentPathOf(pageUrl).path.replace(/^\/+/, '');
    } catch {
      // no page URL: the line names no document
    }
    await recordActivity(this.s.database.db, {
      ownerId: accountId,
      at: this.s.clock.now().toISOString(),
      kind: 'ai-edit',
      nodeId: null,
      nodeType: 'site',
      path,
      writer: caller.actor?.writer ?? '',
      client: `@${r.engine}`,
      detail: JSON.stringify({ in: r.inBytes, out: r.outBytes, outcome: r.outcome, ms: r.ms }),
    }).catch((err) => console.error('recording an AI edit failed:', err));
  }

  /** Ends every running request (the process is stopping): each is aborted at once and its page told (`error`);
   *  resolves once they have ended, or after `limits.aiEdit.closeWaitMs` (their errors may wait for Redis). A
   *  request heard from now on is refused. */
  close(): Promise<void> {
    if (this.closed) return this.closed;
    for (const job of this.jobs.values()) job.abort.abort(new Refusal(RESTARTING));
    let timer: NodeJS.Timeout | undefined;
    this.closed = Promise.race([
      Promise.allSettled(this.runs).then(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, limits.aiEdit.closeWaitMs);
      }),
    ]).finally(() => clearTimeout(timer));
    return this.closed;
  }
}

/** Collects streamed text and hands it on at most every `limits.aiEdit.deltaMs`, numbered from 0. */
export class DeltaBatcher {
  private buffer = '';
  private index = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly send: (index: number, text: string) => void;
  constructor(send: (index: number, text: string) => void) {
    this.send = send;
  }

  push(text: string) {
    this.buffer += text;
    if (!this.timer) this.timer = setTimeout(() => this.flush(), limits.aiEdit.deltaMs);
  }

  flush() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.buffer) return;
    const text = this.buffer;
    this.buffer = '';
    this.send(this.index++, text);
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
