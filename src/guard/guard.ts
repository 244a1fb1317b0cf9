// The data-clobber guard: no write silently destroys a page's data. A self-saving page is app and data at once,
// and hyperclayjs saves the whole page without If-Match, so a tab open since yesterday, a page script gone
// wrong or a desktop client writing an old copy can replace what was saved since. After every content change
// (THE save pipeline records the check the write owes in its own transaction, `guardCheckOf`, and calls
// `afterWrite`, whoever wrote) the page's `api` data is extracted (extraction pool, the guard's own lane, within
// its budgets) and compared with the data the guard protects (the baseline); what counts as destroyed
// and when that fires are Hyperclay's rules (classify.ts). A loss raises one event per document, kept until
// the owner restores the data, reverts the page, dismisses it, or a later write brings the data back; events
// are dropped after 30 days (the versions still hold everything).
//
// Wire (hyperclayjs 1.38 `data-loss-panel`, Hyperclay Local 1.22): GET /_/data-loss answers `{event}`,
// POST /_/data-loss/<id> `{choice}` resolves; `notification` frames on the owner's live lanes; a dismissal
// reaches the owner's devices as a `control` frame on the sync stream (control.ts).
//
// Where Kiln differs from Hyperclay Local: a code-editor save and a version restore are the owner's deliberate
// acts (the editor refuses to overwrite a newer save): they never fire and always bless the data; events end
// after 30 days; detection runs after the save is answered (as on hyperclay.com), so the panel polls; a check
// owed when its process dies is run by the next process to start, or by the panel's next look; an outside write
// (agent, sync) that destroys nothing blesses its data, so a stale tab's background save that drops it fires.
import { isVersionOf } from '../store/versions.ts';
import { randomUUID } from 'node:crypto';
import type { Database } from '../store/db.ts';
import type { Clock } from '../clock.ts';
import type { ExtractionPool } from '../data/pool.ts';
import type { SavedBy, SavedNode } from '../save/saved.ts';
import { channels, type DataLossNote, type EventBus } from '../events/bus.ts';
import {
  applyGuardChecks,
  dropOwedChecks,
  guardRow,
  nodesOwingChecks,
  owedChecks,
  putGuardRow,
  sweepGuardEvents,
  type GuardRow,
  type OwedCheck,
} from '../store/guards.ts';
import type { GuardCheck } from '../store/saves.ts';
import { newestVersion, nodeById } from '../store/nodes.ts';
import { recordActivity, type ActivityRow } from '../store/activity.ts';
import { storedContent } from '../store/nodes.ts';
import { childPathOf } from '../nodes/find.ts';
import { versionContent } from '../save/history.ts';
import { sha256 } from '../core/checksum.ts';
import { DAY } from '../limits.ts';
import { KilnError } from '../errors.ts';
import {
  buildPreview,
  classify,
  islandHash,
  lossSummary,
  lossUndone,
  meaningful,
  shouldFire,
  stableJson,
  type Island,
  type Provenance,
} from './classify.ts';
import { withData } from './restore.ts';
import { publishSoon } from '../events/publish.ts';

/** What the guard uses of the services, part by part: it is one of them, so it does not import src/services.ts. */
export interface GuardPorts {
  database: Database;
  clock: Clock;
  events: EventBus;
  extractions: ExtractionPool;
}

export const EVENT_DAYS = 30;
/** How long a document's writes gather before they are checked: a page saving continuously costs at most a few
 *  extractions a second, and hyperclayjs's panel looks 300, 1,200 and 3,000 ms after its save. */
const CHECK_DELAY_MS = 200;
/** Pages larger than this are compared, but not dry-run restored on the main thread (revert still works). */
const MAX_RESTORE_BYTES = 4 * 1024 * 1024;
/** A check the pool could not take (shutting down) is tried again this much later. */
const RETRY_MS = 1_000;
/** How many times a document's checks are worked out again when another process changed its guard state meanwhile. */
const MAX_STALE = 5;
/** Writes whose bytes this process keeps while their check is owed. */
const MAX_WRITTEN = 64;

/** How a write came, as the guard weighs it: Hyperclay's provenances, plus the owner's deliberate acts
 *  (code editor, version restore) and new documents (nothing to compare with). */
export type WriteProvenance = Provenance | 'deliberate' | 'new';

export function provenanceOf(by: SavedBy): WriteProvenance {
  switch (by.kind) {
    case 'sync':
    case 'instance':
    case 'agent':
      return 'external';
    case 'browser':
      return by.trigger === 'user' ? 'ui-gestured' : by.trigger === 'auto' ? 'ui-background' : 'ui-unknown';
    case 'create':
    case 'starter':
    case 'import':
      return 'new';
    default:
      return 'deliberate';
  }
}

/** hyperclayjs 1.38 sends `Save-Trigger: user | auto`; older ones `X-Hyperclay-User-Driven: 1 | 0`; none: unknown. */
export function saveTriggerOf(headers: Record<string, string | string[] | undefined>): 'user' | 'auto' | null {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim().toLowerCase();
  const trigger = one(headers['save-trigger']);
  if (trigger !== undefined) return trigger === 'user' ? 'user' : 'auto';
  const driven = one(headers['x-hyperclay-user-driven']);
  if (driven === '1' || driven === 'true') return 'user';
  if (driven === '0' || driven === 'false') return 'auto';
  return null;
}

/** A pending event, as stored: what was destroyed and how to get it back. */
interface GuardEvent {
  id: string;
  /** The island before the loss (raw data: never sent to a browser). */
  recoverable: { api: unknown };
  /** The version that was current before the clobbering write (revert target), when known. */
  revertVersionId: number | null;
  firstDetectedAt: number;
  lastWriteAt: number;
  lossSummary: ReturnType<typeof lossSummary>;
}

interface State {
  baseline: Island;
  uiWorkPending: boolean;
  event: GuardEvent | null;
  /** The newest version known to hold the baseline's data: the revert target of the next event (#44.2). */
  safeVersionId: number | null;
}

/** The event as hyperclayjs's panel reads it (`preview` strings only, never the destroyed data). */
export interface ClientEvent {
  id: string;
  firstDetectedAt: number;
  lastWriteAt: number;
  lossSummary: GuardEvent['lossSummary'];
  fieldCount: number;
  preview: { key: string; now: string; yours: string }[];
  droppedAdditions: number;
  restorable: boolean;
  canRevert: boolean;
  status: 'pending';
}

export type Choice = 'restore' | 'revert' | 'dismiss';
const STATUS: Record<Choice, 'restored' | 'reverted' | 'dismissed'> = {
  restore: 'restored',
  revert: 'reverted',
  dismiss: 'dismissed',
};

/** What a write hands the guard: the document, who wrote, the bytes now stored, the version it made and the
 *  version before. */
export interface GuardedWrite {
  node: SavedNode;
  by: SavedBy;
  bytes: Buffer;
  text: string | null;
  checksum: string;
  /** The version this write made. */
  versionId: number;
  /** The version that was current before this write (null for a new document) and its text when this process
   *  had it at hand (undefined: read it from the versions when needed). */
  before: { versionId: number | null; text?: string | null };
}

const TAG_MARK = 'data-rules-name';

/** The check a write owes, recorded in its own transaction (data_loss_checks), or null when it owes none: a new
 *  document has nothing to lose yet (its first save, or its owner's first visit, starts protecting it), and a page
 *  that has no rules tag and had none before has nothing to guard (the common case: nothing recorded). */
export function guardCheckOf(
  by: SavedBy,
  text: string | null,
  before: GuardedWrite['before'],
  now: string,
): GuardCheck | null {
  if (text === null || provenanceOf(by) === 'new') return null;
  if (!text.includes(TAG_MARK) && before.text !== undefined && !before.text?.includes(TAG_MARK)) return null;
  return {
    before_version_id: before.versionId,
    by_kind: by.kind,
    by_trigger: by.trigger ?? null,
    writer: by.writer,
    created_at: now,
  };
}

/** The extraction pool could not take the guard's task now (shutting down): the check stays owed. */
class Deferred extends Error {}

/** A write this process made, kept while its check is owed. */
interface Written {
  nodeId: number;
  bytes: Buffer;
  text: string | null;
  checksum: string;
  beforeText?: string | null;
}

/** What a check leaves: the guard's next state (null: unchanged), the activity line that commits with it, and
 *  what to do once it is applied. */
interface Outcome {
  next: State | null;
  activity?: ActivityRow;
  after?: () => Promise<unknown>;
}

/** One guard per process: runs each document's checks one after another, off the save's answer. Every guarded
 *  write owes a check recorded with it (data_loss_checks), which stays owed until its outcome is applied: this
 *  process runs it CHECK_DELAY_MS after the write; the panel's GET, a resolution or a device runs what is owed
 *  before it answers; a process starting runs what any process left owed (killed before its checks ran). Two
 *  processes that run the same check apply it once (the owed rows are deleted in the transaction that applies it). */
export class DataLossGuard {
  private queues = new Map<number, Promise<unknown>>();
  private restorable = new Map<string, boolean>();
  private revertable = new Map<string, boolean>();
  /** What this process wrote, by version, while its check is owed: no need to read the version back. */
  private written = new Map<number, Written>();
  /** Documents with writes whose check is owed, and the timer that runs them: the writes of the last
   *  CHECK_DELAY_MS are checked together (see takeBatch). */
  private timers = new Map<number, NodeJS.Timeout>();
  /** Settles when the guard's extraction in the pool ends (see islandOf). */
  private extracting: Promise<void> = Promise.resolve();
  private closed = false;

  private s: GuardPorts;
  constructor(s: GuardPorts) {
    this.s = s;
  }

  /** Runs `job` after the document's earlier guard work; never rejects. */
  private serial<T>(nodeId: number, job: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(nodeId) ?? Promise.resolve();
    const run = prev.then(job, job);
    const tail = run.catch(() => undefined);
    this.queues.set(nodeId, tail);
    void tail.then(() => {
      if (this.queues.get(nodeId) === tail) this.queues.delete(nodeId);
    });
    return run;
  }

  /** Resolves once every queued check has finished (shutdown, tests). Checks not run stay owed. */
  async idle(): Promise<void> {
    for (const id of [...this.timers.keys()]) this.flush(id);
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  /** Stops scheduling retries (shutdown): what is owed then is run by the next process to start. */
  close(): void {
    this.closed = true;
  }

  /** At start: runs the checks any process left owed (one killed between a write and its check). */
  async resume(): Promise<void> {
    // One document after another: this runs beside the requests a starting process serves.
    for (const id of await nodesOwingChecks(this.s.database.db)) await this.serial(id, () => this.runOwed(id));
  }

  /** After a committed write that owes a check (guardCheckOf): runs it shortly. Not awaited by the save. */
  afterWrite(w: GuardedWrite): void {
    if (this.written.size >= MAX_WRITTEN) this.written.delete(this.written.keys().next().value!);
    this.written.set(w.versionId, {
      nodeId: w.node.id,
      bytes: w.bytes,
      text: w.text,
      checksum: w.checksum,
      beforeText: w.before.text,
    });
    this.later(w.node.id, CHECK_DELAY_MS);
  }

  private later(id: number, ms: number): void {
    if (this.timers.has(id) || this.closed) return;
    const timer = setTimeout(() => this.flush(id), ms);
    // A retry never keeps a process alive (what is owed is run at the next start).
    if (ms !== CHECK_DELAY_MS) timer.unref();
    this.timers.set(id, timer);
  }

  /** Runs a document's owed checks: when their delay is over, or at once when someone asks about the document
   *  (the panel, a resolution, a device), so an answer always follows the writes before it. */
  private flush(id: number): void {
    const timer = this.timers.get(id);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(id);
    void this.serial(id, () => this.runOwed(id)).catch((err) => console.error('data-loss guard failed:', err));
  }

  /** Runs what a document's writes owe, oldest first, in batches (takeBatch), each applied before the next is
   *  read. A check the pool cannot take now stays owed and is tried again. Inside the document's serial queue.
   *  True once nothing is owed. */
  private async runOwed(nodeId: number): Promise<boolean> {
    const { db } = this.s.database;
    for (let stale = 0; stale < MAX_STALE; ) {
      const owed = await owedChecks(db, nodeId);
      if (owed.length === 0) {
        // Another process may have applied some: what this one kept of them goes.
        for (const [id, w] of this.written) if (w.nodeId === nodeId) this.written.delete(id);
        return true;
      }
      const node = await nodeById(db, nodeId);
      if (node?.type !== 'site') {
        await dropOwedChecks(db, nodeId);
        return true;
      }
      const batch = takeBatch(owed);
      let outcome: 'done' | 'stale';
      try {
        outcome = await this.check(await this.writeOf(node, batch), batch);
      } catch (err) {
        if (!(err instanceof Deferred)) throw err;
        this.later(nodeId, RETRY_MS);
        return false;
      }
      if (outcome === 'stale') stale++;
    }
    // Another process keeps changing this document's guard state: it runs these checks, or a later look does.
    return false;
  }

  /** The write a batch of owed checks stands for: from the state before its first to the bytes of its last. */
  private async writeOf(node: SavedNode, batch: OwedCheck[]): Promise<GuardedWrite | null> {
    const first = batch[0];
    const last = batch[batch.length - 1];
    let mine = this.written.get(last.version_id);
    if (!mine) {
      const bytes = await this.versionBytes(last.version_id);
      if (!bytes) return null;
      mine = { nodeId: node.id, bytes, text: bytes.toString('utf8'), checksum: sha256(bytes) };
    }
    const by: SavedBy = {
      kind: last.by_kind as SavedBy['kind'],
      accountId: null,
      writer: last.writer,
      trigger: last.by_trigger as SavedBy['trigger'],
    };
    const beforeText = this.written.get(first.version_id)?.beforeText;
    return {
      node,
      by,
      bytes: mine.bytes,
      text: mine.text,
      checksum: mine.checksum,
      versionId: last.version_id,
      before: { versionId: first.before_version_id, ...(beforeText !== undefined ? { text: beforeText } : {}) },
    };
  }

  /** The island of some bytes: `{api}` data, null when the page has no api rules tag, undefined when it cannot be
   *  read (bad rules, over budget): the guard then does nothing (it fails open, never blocking a write). Throws
   *  Deferred when the pool cannot take the task now: the check stays owed. Guard tasks have a lane of their own
   *  in the pool (no one's `?data=` load can refuse them), one at a time in the whole process. */
  private async islandOf(bytes: Buffer, checksum: string): Promise<Island | undefined> {
    if (!bytes.includes(TAG_MARK)) return null;
    const turn = this.extracting;
    let done = () => {};
    this.extracting = new Promise<void>((r) => (done = r));
    await turn;
    const reply = await this.s.extractions
      .run({ checksum, bytes, rules: { kind: 'api' }, lane: 'guard' })
      .catch(() => null)
      .finally(done);
    if (!reply) return undefined;
    if (reply.busy) throw new Deferred();
    if (reply.result.ok) return { api: reply.result.data };
    return reply.result.code === 'no-rules-tag' ? null : undefined;
  }

  /** Checks one (batched) write and applies its outcome with the owed checks it stands for. */
  private async check(w: GuardedWrite | null, batch: OwedCheck[]): Promise<'done' | 'stale'> {
    const { db } = this.s.database;
    const nodeId = batch[0].node_id;
    const current = w ? await this.islandOf(w.bytes, w.checksum) : undefined;
    const row = await guardRow(db, nodeId);
    const outcome = w && current !== undefined ? await this.judge(w, current, row) : { next: null };
    const applied = await applyGuardChecks(this.s, {
      nodeId,
      ownerId: w?.node.owner_id ?? 0,
      versionIds: batch.map((c) => c.version_id),
      expect: row,
      next: outcome.next && rowOf(outcome.next),
      activity: outcome.activity,
      now: this.s.clock.now().toISOString(),
      lock: (tx) => this.s.database.lock.row(tx, 'nodes', nodeId),
    });
    if (!applied) return 'stale';
    for (const c of batch) this.written.delete(c.version_id);
    await outcome.after?.();
    return 'done';
  }

  /** What a write does to the guard's state: Hyperclay's rules (classify.ts). */
  private async judge(w: GuardedWrite, current: Island, row: GuardRow | undefined): Promise<Outcome> {
    const prov = provenanceOf(w.by);
    const state = stateOf(row);
    if (!row && current === null) return { next: null };
    if (!state.baseline && prov !== 'new' && w.before.versionId !== null) {
      // First sight of this page's data: protect what it had before this write.
      const text = w.before.text !== undefined ? w.before.text : await this.versionText(w.before.versionId);
      if (text) {
        const earlier = await this.islandOf(Buffer.from(text, 'utf8'), sha256(text));
        if (earlier && meaningful(earlier.api)) {
          state.baseline = earlier;
          state.safeVersionId = w.before.versionId;
        }
      }
    }
    if (!state.baseline) {
      if (!current || !meaningful(current.api)) return { next: null };
      return { next: { ...state, baseline: current, uiWorkPending: false, safeVersionId: w.versionId } };
    }
    const now = this.s.clock.now().getTime();
    if (state.event) {
      const d = classify(state.event.recoverable, current);
      if (lossUndone(d)) {
        const event = state.event;
        return {
          next: { baseline: current, uiWorkPending: false, event: null, safeVersionId: w.versionId },
          activity: this.line(w.node, 'data-loss-restored', w.by.writer, null),
          after: () => this.notify(w.node, 'resolved', { id: event.id, status: 'restored' }),
        };
      }
      if (prov !== 'deliberate' && prov !== 'new' && shouldFire(prov, state.uiWorkPending, state.baseline, current, d))
        state.event.lastWriteAt = now;
      if (prov === 'external') state.uiWorkPending = false;
      return { next: state };
    }
    const d = classify(state.baseline, current);
    if (prov !== 'deliberate' && prov !== 'new' && shouldFire(prov, state.uiWorkPending, state.baseline, current, d)) {
      const event: GuardEvent = {
        id: randomUUID(),
        recoverable: { api: state.baseline.api },
        // The newest version known to hold the data: the one right before this write, unless writes whose check
        // did not keep the data came between (then revert would put those back).
        revertVersionId: state.safeVersionId ?? w.before.versionId,
        firstDetectedAt: now,
        lastWriteAt: now,
        lossSummary: lossSummary(prov, d),
      };
      if (prov === 'external') state.uiWorkPending = false;
      return {
        next: { ...state, event },
        activity: this.line(w.node, 'data-loss', w.by.writer, w.by.kind),
        after: async () => {
          await this.notify(w.node, 'raised', await this.clientEvent(w.node, event, w.bytes, current));
        },
      };
    }
    if (prov === 'ui-gestured' || prov === 'deliberate') {
      // A person's save blesses the data.
      return { next: { ...state, baseline: current, uiWorkPending: true, safeVersionId: w.versionId } };
    }
    if (prov === 'external' && current && meaningful(current.api)) {
      // An outside writer's change (an agent, a sync client, another instance) that destroyed nothing is saved
      // data from now on: a tab opened before it never saw it, and hyperclayjs saves the whole page without
      // saying which version it holds, so that tab's next background save would otherwise drop it unseen.
      return { next: { ...state, baseline: current, uiWorkPending: false, safeVersionId: w.versionId } };
    }
    if (prov === 'external' && state.uiWorkPending) state.uiWorkPending = false;
    // A write that kept the protected data is the newest to go back to.
    if (lossUndone(d)) state.safeVersionId = w.versionId;
    return { next: state };
  }

  private async versionBytes(versionId: number): Promise<Buffer | null> {
    try {
      return (await versionContent(this.s.database.db, versionId)).bytes;
    } catch {
      return null;
    }
  }

  private async versionText(versionId: number): Promise<string | null> {
    return (await this.versionBytes(versionId))?.toString('utf8') ?? null;
  }

  private async store(node: SavedNode, state: State): Promise<void> {
    const now = this.s.clock.now().toISOString();
    await putGuardRow(this.s.database.db, node.id, node.owner_id, rowOf(state), now);
  }

  /** Ends the pending event; the data now on the page (its newest version) becomes what is protected. */
  private async clear(
    node: SavedNode,
    state: State,
    current: Island,
    status: 'restored' | 'reverted' | 'dismissed',
    writer: string | null,
    force: boolean,
  ): Promise<void> {
    const event = state.event!;
    const kept = force || (current && meaningful(current.api));
    const baseline = kept ? current : state.baseline;
    const newest = kept ? ((await newestVersion(this.s.database.db, node.id))?.id ?? null) : state.safeVersionId;
    await this.store(node, { baseline, uiWorkPending: false, event: null, safeVersionId: newest });
    await this.resolved(node, event, status, writer);
  }

  /** Says an event ended: in the activity feed and on the owner's live lanes. */
  private async resolved(node: SavedNode, event: GuardEvent, status: string, writer: string | null): Promise<void> {
    await this.record(node, `data-loss-${status}`, writer, null);
    await this.notify(node, 'resolved', { id: event.id, status });
  }

  private async record(node: SavedNode, kind: string, writer: string | null, client: string | null) {
    await recordActivity(this.s.database.db, this.line(node, kind, writer, client)).catch((err) =>
      console.error('recording activity failed:', err),
    );
  }

  private line(node: SavedNode, kind: string, writer: string | null, client: string | null): ActivityRow {
    return {
      ownerId: node.owner_id,
      at: this.s.clock.now().toISOString(),
      kind,
      nodeId: node.id,
      nodeType: 'site',
      path: childPathOf(node),
      writer,
      client,
    };
  }

  private notify(node: SavedNode, action: 'raised' | 'resolved', data: unknown): Promise<unknown> {
    const note: DataLossNote = {
      type: 'notification',
      nodeId: node.id,
      msgType: 'data-loss',
      msg: action === 'raised' ? 'Saved data overwritten' : 'Data guard resolved',
      action,
      data,
    };
    // The panel's answers wait for this document's guard work: this waits for Redis only while it is connected.
    return publishSoon(this.s, channels.document(node.id), note, 'a data-loss note');
  }

  private async clientEvent(node: SavedNode, e: GuardEvent, bytes: Buffer, current: Island): Promise<ClientEvent> {
    const { preview, droppedAdditions } = buildPreview(e.recoverable.api, current?.api);
    return {
      id: e.id,
      firstDetectedAt: e.firstDetectedAt,
      lastWriteAt: e.lastWriteAt,
      lossSummary: e.lossSummary,
      fieldCount: preview.length,
      preview,
      droppedAdditions,
      restorable: await this.canRestore(node, e, bytes),
      canRevert: await this.canRevert(node, e),
      status: 'pending',
    };
  }

  /** The page revert would write back: the event's version, when it holds the destroyed data (never a page that
   *  lost it too: an event noticed after such writes). Null when there is none; Deferred when the pool cannot
   *  tell now (busy, or the extraction failed). */
  private async revertTarget(node: SavedNode, e: GuardEvent): Promise<Buffer | null> {
    if (e.revertVersionId === null || !(await isVersionOf(this.s.database.db, e.revertVersionId, node.id))) return null;
    const bytes = await this.versionBytes(e.revertVersionId);
    if (!bytes) return null;
    const island = await this.islandOf(bytes, sha256(bytes));
    // An extraction that failed (a worker lost, a timeout) cannot tell either: not a no.
    if (island === undefined) throw new Deferred();
    return lossUndone(classify(e.recoverable, island)) ? bytes : null;
  }

  /** Whether revert would bring the data back (remembered per event). */
  private async canRevert(node: SavedNode, e: GuardEvent): Promise<boolean> {
    const known = this.revertable.get(e.id);
    if (known !== undefined) return known;
    let ok: boolean;
    try {
      ok = (await this.revertTarget(node, e)) !== null;
    } catch {
      // The pool could not tell now (busy, or a worker lost): no for this answer, asked again on the next one.
      return false;
    }
    if (this.revertable.size > 256) this.revertable.clear();
    this.revertable.set(e.id, ok);
    return ok;
  }

  /** The page with the destroyed data written back, when that round-trips (the restore's dry run). A list the
   *  loss emptied entirely takes its item's markup from the version that holds the data (the revert target). */
  private async restored(node: SavedNode, e: GuardEvent, bytes: Buffer): Promise<Buffer | null> {
    if (bytes.length > MAX_RESTORE_BYTES) return null;
    const page = bytes.toString('utf8');
    let html = await withData(page, e.recoverable.api);
    if (html === null) {
      const earlier = await this.revertTarget(node, e).catch(() => null);
      if (earlier) html = await withData(page, e.recoverable.api, earlier.toString('utf8'));
    }
    if (html === null) return null;
    const out = Buffer.from(html, 'utf8');
    const island = await this.islandOf(out, sha256(out));
    if (island === undefined) throw new Deferred();
    return island && stableJson(island.api) === stableJson(e.recoverable.api) ? out : null;
  }

  /** Whether a restore would work on these bytes (remembered per event and bytes). */
  private async canRestore(node: SavedNode, e: GuardEvent, bytes: Buffer): Promise<boolean> {
    const key = `${e.id}:${sha256(bytes)}`;
    const known = this.restorable.get(key);
    if (known !== undefined) return known;
    let ok: boolean;
    try {
      ok = (await this.restored(node, e, bytes)) !== null;
    } catch (err) {
      if (!(err instanceof Deferred)) throw err;
      return false; // asked again on the next answer
    }
    if (this.restorable.size > 256) this.restorable.clear();
    this.restorable.set(key, ok);
    return ok;
  }

  /** GET /_/data-loss: the pending event of a document the caller may resolve, or null. An event whose data is
   *  back on the page ends here; a page seen for the first time with data starts being protected. */
  pending(node: SavedNode): Promise<ClientEvent | null> {
    this.flush(node.id);
    return this.serial(node.id, async () => {
      // What the writes before this look owe is checked first, whichever process made them.
      if (!(await this.settled(node.id))) return null;
      const content = await this.currentContent(node.id);
      if (!content) return null;
      const row = await guardRow(this.s.database.db, node.id);
      const state = stateOf(row);
      if (!state.event && state.baseline) return null;
      const current = await this.islandOf(content.bytes, content.checksum).catch(() => undefined);
      if (current === undefined) return null;
      if (!state.event) {
        if (current && meaningful(current.api)) {
          const newest = (await newestVersion(this.s.database.db, node.id))?.id ?? null;
          await this.store(node, { ...state, baseline: current, safeVersionId: newest });
        }
        return null;
      }
      if (lossUndone(classify(state.event.recoverable, current))) {
        await this.clear(node, state, current, 'restored', null, false);
        return null;
      }
      return this.clientEvent(node, state.event, content.bytes, current);
    });
  }

  /** Runs a document's owed checks now (inside its serial queue); false when some are still owed (the pool
   *  could not take them): then nothing may be concluded from the page as it is. */
  private settled(nodeId: number): Promise<boolean> {
    return this.runOwed(nodeId);
  }

  private async currentContent(nodeId: number): Promise<{ bytes: Buffer; checksum: string } | null> {
    const row = await storedContent(this.s.database.db, nodeId);
    return row?.checksum ? { bytes: Buffer.from(row.html), checksum: row.checksum } : null;
  }

  /** POST /_/data-loss/<id>: the owner's choice. Restore and revert are saves through THE pipeline (`save`,
   *  the caller's: it carries who saves); the event ends with the state the choice leaves. */
  resolve(
    node: SavedNode,
    id: string | null,
    choice: Choice,
    writer: string | null,
    save: (bytes: Buffer, ifMatch: string) => Promise<unknown>,
  ): Promise<{ ok: true; choice: Choice; status: string }> {
    this.flush(node.id);
    return this.serial(node.id, async () => {
      await this.runOwed(node.id);
      const state = stateOf(await guardRow(this.s.database.db, node.id));
      const e = state.event;
      if (!e) throw new KilnError(404, 'No pending data-loss event', 'not-found');
      if (id !== null && id !== e.id)
        throw new KilnError(409, 'Event id mismatch (already resolved?)', 'event-mismatch');
      const content = await this.currentContent(node.id);
      if (!content) throw new KilnError(404, 'No pending data-loss event', 'not-found');
      let after: Buffer = content.bytes;
      if (choice === 'restore') {
        const out = await this.restored(node, e, content.bytes).catch(busyError);
        const refusal = 'Data could not be restored onto the current page; use Revert.';
        if (!out) throw new KilnError(422, refusal, 'not-restorable');
        after = out;
      } else if (choice === 'revert') {
        const target = await this.revertTarget(node, e).catch(busyError);
        if (target === null)
          throw new KilnError(
            422,
            'No whole-file backup holding this data is available to revert to; restore it, or pick a version in the history.',
            'not-restorable',
          );
        after = target;
      }
      if (choice !== 'dismiss') await save(after, content.checksum);
      const island = await this.islandOf(after, sha256(after)).catch(() => undefined);
      await this.clear(node, state, island ?? null, STATUS[choice], writer, choice === 'dismiss');
      if (choice === 'dismiss') await this.relayDismissal(node, e);
      return { ok: true as const, choice, status: STATUS[choice] };
    });
  }

  /** A dismissal here reaches the owner's desktop clients, which clear their own warning for the same data. */
  private relayDismissal(node: SavedNode, e: GuardEvent): Promise<unknown> {
    return publishSoon(
      this.s,
      channels.account(node.owner_id),
      {
        type: 'control',
        senderKey: null,
        envelope: {
          type: 'data-loss/dismiss',
          v: 1,
          payload: { fileKey: childPathOf(node), recoverableDataHash: islandHash(e.recoverable), nodeId: node.id },
        },
      },
      'a data-loss dismissal',
    );
  }

  /** A `data-loss/dismiss` from one of the owner's devices: dismisses the pending event when it is about the same
   *  data (the hash of the island the device holds); anything else is left alone. */
  dismissFromDevice(node: SavedNode, recoverableDataHash: string, writer: string | null): Promise<boolean> {
    this.flush(node.id);
    return this.serial(node.id, async () => {
      await this.runOwed(node.id);
      const state = stateOf(await guardRow(this.s.database.db, node.id));
      if (!state.event || islandHash(state.event.recoverable) !== recoverableDataHash) return false;
      const content = await this.currentContent(node.id);
      const island = content ? await this.islandOf(content.bytes, content.checksum).catch(() => undefined) : null;
      await this.clear(node, state, island ?? null, 'dismissed', writer, true);
      return true;
    });
  }
}

/** The next check of a document's owed writes (oldest first): the first, and the ones right after it that came the
 *  same way (all a person's, all a page script's, all sync writes …), as one write from the state before the first
 *  to the state after the last, so a burst of autosaves costs one extraction. Writes that came different ways are
 *  checked apart (a person's additions then a sync write's clobber must not cancel out), and the owner's deliberate
 *  writes are never merged: they change what is protected. */
function takeBatch(owed: OwedCheck[]): OwedCheck[] {
  const prov = (c: OwedCheck) =>
    provenanceOf({
      kind: c.by_kind as SavedBy['kind'],
      accountId: null,
      writer: null,
      trigger: c.by_trigger as SavedBy['trigger'],
    });
  const first = prov(owed[0]);
  if (first === 'deliberate' || first === 'new') return owed.slice(0, 1);
  let n = 1;
  while (n < owed.length && prov(owed[n]) === first) n++;
  return owed.slice(0, n);
}

/** The pool could not tell now (Deferred): the owner is asked to try again. */
function busyError(err: unknown): never {
  if (err instanceof Deferred) throw new KilnError(503, 'The server is busy; try again shortly.', 'busy');
  throw err;
}

function stateOf(row: GuardRow | undefined): State {
  return {
    baseline: row?.baseline ? (JSON.parse(row.baseline) as Island) : null,
    uiWorkPending: row?.ui_work_pending === 1,
    event: row?.event ? (JSON.parse(row.event) as GuardEvent) : null,
    safeVersionId: row?.safe_version_id ?? null,
  };
}

function rowOf(state: State): GuardRow {
  return {
    baseline: state.baseline ? JSON.stringify(state.baseline) : null,
    ui_work_pending: state.uiWorkPending ? 1 : 0,
    event_id: state.event?.id ?? null,
    event: state.event ? JSON.stringify(state.event) : null,
    event_at: state.event ? new Date(state.event.firstDetectedAt).toISOString() : null,
    safe_version_id: state.safeVersionId,
  };
}

/** Drops events older than 30 days (the hourly sweep): the loss is taken as accepted; the page is protected
 *  again from its next write or visit. */
export function sweepOldGuardEvents(s: GuardPorts): Promise<void> {
  const now = s.clock.now();
  return sweepGuardEvents(s.database.db, new Date(now.getTime() - EVENT_DAYS * DAY).toISOString(), now.toISOString());
}
