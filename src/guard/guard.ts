// The data-clobber guard: no write silently destroys a page's data. A self-saving page is app and data at once,
// and hyperclayjs saves the whole page without If-Match, so a tab open since yesterday, a page script gone
// wrong or a desktop client writing an old copy can replace what was saved since. After every content change
// (THE save pipeline calls `afterWrite`, whoever wrote) the page's `api` data is extracted (extraction pool,
// within its budgets) and compared with the data the guard protects (the baseline); what counts as destroyed
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
// after 30 days; detection runs after the save is answered (as on hyperclay.com), so the panel polls.
import { isVersionOf } from '../store/versions.ts';
import { randomUUID } from 'node:crypto';
import type { Services } from '../services.ts';
import type { SavedBy, SavedNode } from '../save/pipeline.ts';
import { channels, type DataLossNote } from '../events/bus.ts';
import { guardRow, putGuardRow, sweepGuardEvents, type GuardRow } from '../store/guards.ts';
import { recordActivity } from '../store/activity.ts';
import { storedContent } from '../store/nodes.ts';
import { childPathOf } from '../nodes/tree.ts';
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

export const EVENT_DAYS = 30;
/** How long a document's writes gather before they are checked: a page saving continuously costs at most a few
 *  extractions a second, and hyperclayjs's panel looks 300, 1,200 and 3,000 ms after its save. */
const CHECK_DELAY_MS = 200;
/** Pages larger than this are compared, but not dry-run restored on the main thread (revert still works). */
const MAX_RESTORE_BYTES = 4 * 1024 * 1024;

/** How a write came, as the guard weighs it: Hyperclay's provenances, plus the owner's deliberate acts
 *  (code editor, version restore) and new documents (nothing to compare with). */
export type WriteProvenance = Provenance | 'deliberate' | 'new';

export function provenanceOf(by: SavedBy): WriteProvenance {
  switch (by.kind) {
    case 'sync':
    case 'instance':
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

/** What a write hands the guard: the document, who wrote, the bytes now stored, and the version before. */
export interface GuardedWrite {
  node: SavedNode;
  by: SavedBy;
  bytes: Buffer;
  text: string | null;
  checksum: string;
  /** The version that was current before this write (null for a new document) and its text when this process
   *  had it at hand (undefined: read it from the versions when needed). */
  before: { versionId: number | null; text?: string | null };
}

const TAG_MARK = 'data-rules-name';

/** One guard per process: runs each document's checks one after another, off the save's answer. */
export class DataLossGuard {
  private queues = new Map<number, Promise<unknown>>();
  private restorable = new Map<string, boolean>();
  /** Writes whose check has not been queued, per document, and the timer that queues it: the writes of the
   *  last CHECK_DELAY_MS are checked together (see takeBatch). */
  private waiting = new Map<number, GuardedWrite[]>();
  private timers = new Map<number, NodeJS.Timeout>();
  /** Settles when the guard's extraction in the pool ends (see islandOf). */
  private extracting: Promise<void> = Promise.resolve();

  private s: Pick<Services, 'database' | 'clock' | 'events' | 'extractions'>;
  constructor(s: Pick<Services, 'database' | 'clock' | 'events' | 'extractions'>) {
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

  /** Resolves once every queued check has finished (shutdown, tests). */
  async idle(): Promise<void> {
    for (const id of [...this.timers.keys()]) this.flush(id);
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  /** After a committed content change: compare, and raise or clear an event. Not awaited by the save. */
  afterWrite(w: GuardedWrite): void {
    // A new document has nothing to lose yet: its first save, or its owner's first visit, starts protecting it.
    if (w.text === null || provenanceOf(w.by) === 'new') return;
    // A page that has no rules tag and had none before has nothing to guard (the common case: no read).
    if (!w.text.includes(TAG_MARK) && w.before.text !== undefined && !w.before.text?.includes(TAG_MARK)) return;
    const id = w.node.id;
    const waiting = this.waiting.get(id) ?? [];
    waiting.push(w);
    this.waiting.set(id, waiting);
    if (!this.timers.has(id))
      this.timers.set(
        id,
        setTimeout(() => this.flush(id), CHECK_DELAY_MS),
      );
  }

  /** Queues the check of a document's waiting writes: when their delay is over, or at once when someone asks
   *  about the document (the panel, a resolution, a device), so an answer always follows the writes before it. */
  private flush(id: number): void {
    const timer = this.timers.get(id);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(id);
    const waiting = this.waiting.get(id) ?? [];
    this.waiting.delete(id);
    void this.serial(id, async () => {
      for (let batch = takeBatch(waiting); batch; batch = takeBatch(waiting)) await this.check(batch);
    }).catch((err) => console.error('data-loss guard failed:', err));
  }

  /** The island of some bytes: `{api}` data, null when the page has no api rules tag, undefined when it cannot be
   *  read (bad rules, over budget): the guard then does nothing (it fails open, never blocking a write). */
  private async islandOf(bytes: Buffer, checksum: string): Promise<Island | undefined> {
    if (!bytes.includes(TAG_MARK)) return null;
    // One guard extraction at a time in the whole process: the data API's readers never queue behind a burst.
    const turn = this.extracting;
    let done = () => {};
    this.extracting = new Promise<void>((r) => (done = r));
    await turn;
    const reply = await this.s.extractions
      .run({ checksum, bytes, rules: { kind: 'api' } })
      .catch(() => null)
      .finally(done);
    if (!reply) return undefined;
    if (reply.result.ok) return { api: reply.result.data };
    return reply.result.code === 'no-rules-tag' ? null : undefined;
  }

  private async check(w: GuardedWrite): Promise<void> {
    const { s } = this;
    const prov = provenanceOf(w.by);
    const current = await this.islandOf(w.bytes, w.checksum);
    if (current === undefined) return;
    const row = await guardRow(s.database.db, w.node.id);
    const state = stateOf(row);
    if (!row && current === null) return;
    if (!state.baseline && prov !== 'new' && w.before.versionId !== null) {
      // First sight of this page's data: protect what it had before this write.
      const text = w.before.text !== undefined ? w.before.text : await this.versionText(w.before.versionId);
      if (text) {
        const earlier = await this.islandOf(Buffer.from(text, 'utf8'), sha256(text));
        if (earlier && meaningful(earlier.api)) state.baseline = earlier;
      }
    }
    if (!state.baseline) {
      if (!current || !meaningful(current.api)) return;
      return this.store(w.node, { ...state, baseline: current, uiWorkPending: false });
    }
    const now = s.clock.now().getTime();
    if (state.event) {
      const d = classify(state.event.recoverable, current);
      if (lossUndone(d)) return this.clear(w.node, state, current, 'restored', w.by.writer, false);
      if (prov !== 'deliberate' && prov !== 'new' && shouldFire(prov, state.uiWorkPending, state.baseline, current, d))
        state.event.lastWriteAt = now;
      if (prov === 'external') state.uiWorkPending = false;
      return this.store(w.node, state);
    }
    const d = classify(state.baseline, current);
    if (prov !== 'deliberate' && prov !== 'new' && shouldFire(prov, state.uiWorkPending, state.baseline, current, d)) {
      const event: GuardEvent = {
        id: randomUUID(),
        recoverable: { api: state.baseline.api },
        revertVersionId: w.before.versionId,
        firstDetectedAt: now,
        lastWriteAt: now,
        lossSummary: lossSummary(prov, d),
      };
      if (prov === 'external') state.uiWorkPending = false;
      await this.store(w.node, { ...state, event });
      await this.record(w.node, 'data-loss', w.by.writer, w.by.kind);
      const client = await this.clientEvent(w.node, event, w.bytes, current);
      await this.notify(w.node, 'raised', client);
      return;
    }
    if (prov === 'ui-gestured' || prov === 'deliberate') {
      // A person's save blesses the data; nothing to write when it is what is protected already.
      if (state.uiWorkPending && stableJson(current) === stableJson(state.baseline)) return;
      await this.store(w.node, { ...state, baseline: current, uiWorkPending: true });
    } else if (prov === 'external' && state.uiWorkPending) await this.store(w.node, { ...state, uiWorkPending: false });
  }

  private async versionText(versionId: number): Promise<string | null> {
    try {
      return (await versionContent(this.s.database.db, versionId)).bytes.toString('utf8');
    } catch {
      return null;
    }
  }

  private async store(node: SavedNode, state: State): Promise<void> {
    const now = this.s.clock.now().toISOString();
    await putGuardRow(this.s.database.db, node.id, node.owner_id, rowOf(state), now);
  }

  /** Ends the pending event; the data now on the page becomes what is protected. */
  private async clear(
    node: SavedNode,
    state: State,
    current: Island,
    status: 'restored' | 'reverted' | 'dismissed',
    writer: string | null,
    force: boolean,
  ): Promise<void> {
    const id = state.event!.id;
    const baseline = force || (current && meaningful(current.api)) ? current : state.baseline;
    await this.store(node, { baseline, uiWorkPending: false, event: null });
    await this.record(node, `data-loss-${status}`, writer, null);
    await this.notify(node, 'resolved', { id, status });
  }

  private async record(node: SavedNode, kind: string, writer: string | null, client: string | null) {
    await recordActivity(this.s.database.db, {
      ownerId: node.owner_id,
      at: this.s.clock.now().toISOString(),
      kind,
      nodeId: node.id,
      nodeType: 'site',
      path: childPathOf(node),
      writer,
      client,
    }).catch((err) => console.error('recording activity failed:', err));
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
      restorable: await this.canRestore(e, bytes),
      canRevert: e.revertVersionId !== null && (await this.versionExists(e.revertVersionId, node.id)),
      status: 'pending',
    };
  }

  private async versionExists(id: number, nodeId: number): Promise<boolean> {
    return isVersionOf(this.s.database.db, id, nodeId);
  }

  /** The page with the destroyed data written back, when that round-trips (the restore's dry run). */
  private async restored(e: GuardEvent, bytes: Buffer): Promise<Buffer | null> {
    if (bytes.length > MAX_RESTORE_BYTES) return null;
    const html = await withData(bytes.toString('utf8'), e.recoverable.api);
    if (html === null) return null;
    const out = Buffer.from(html, 'utf8');
    const island = await this.islandOf(out, sha256(out));
    return island && stableJson(island.api) === stableJson(e.recoverable.api) ? out : null;
  }

  /** Whether a restore would work on these bytes (remembered per event and bytes). */
  private async canRestore(e: GuardEvent, bytes: Buffer): Promise<boolean> {
    const key = `${e.id}:${sha256(bytes)}`;
    let ok = this.restorable.get(key);
    if (ok === undefined) {
      ok = (await this.restored(e, bytes)) !== null;
      if (this.restorable.size > 256) this.restorable.clear();
      this.restorable.set(key, ok);
    }
    return ok;
  }

  /** GET /_/data-loss: the pending event of a document the caller may resolve, or null. An event whose data is
   *  back on the page ends here; a page seen for the first time with data starts being protected. */
  pending(node: SavedNode): Promise<ClientEvent | null> {
    this.flush(node.id);
    return this.serial(node.id, async () => {
      const content = await this.currentContent(node.id);
      if (!content) return null;
      const row = await guardRow(this.s.database.db, node.id);
      const state = stateOf(row);
      if (!state.event && state.baseline) return null;
      const current = await this.islandOf(content.bytes, content.checksum);
      if (current === undefined) return null;
      if (!state.event) {
        if (current && meaningful(current.api)) await this.store(node, { ...state, baseline: current });
        return null;
      }
      if (lossUndone(classify(state.event.recoverable, current))) {
        await this.clear(node, state, current, 'restored', null, false);
        return null;
      }
      return this.clientEvent(node, state.event, content.bytes, current);
    });
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
      const state = stateOf(await guardRow(this.s.database.db, node.id));
      const e = state.event;
      if (!e) throw new KilnError(404, 'No pending data-loss event', 'not-found');
      if (id !== null && id !== e.id)
        throw new KilnError(409, 'Event id mismatch (already resolved?)', 'event-mismatch');
      const content = await this.currentContent(node.id);
      if (!content) throw new KilnError(404, 'No pending data-loss event', 'not-found');
      let after: Buffer = content.bytes;
      if (choice === 'restore') {
        const out = await this.restored(e, content.bytes);
        const refusal = 'Data could not be restored onto the current page; use Revert.';
        if (!out) throw new KilnError(422, refusal, 'not-restorable');
        after = out;
      } else if (choice === 'revert') {
        const text = e.revertVersionId === null ? null : await this.versionText(e.revertVersionId);
        if (text === null)
          throw new KilnError(422, 'No whole-file backup is available to revert to.', 'not-restorable');
        after = Buffer.from(text, 'utf8');
      }
      if (choice !== 'dismiss') await save(after, content.checksum);
      const island = await this.islandOf(after, sha256(after));
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
      const state = stateOf(await guardRow(this.s.database.db, node.id));
      if (!state.event || islandHash(state.event.recoverable) !== recoverableDataHash) return false;
      const content = await this.currentContent(node.id);
      const island = content ? await this.islandOf(content.bytes, content.checksum) : null;
      await this.clear(node, state, island ?? null, 'dismissed', writer, true);
      return true;
    });
  }
}

/** The next check of a document's gathered writes: the first, and the ones right after it that came the same way
 *  (all a person's, all a page script's, all sync writes …), as one write from the state before the first to the
 *  state after the last, so a burst of autosaves costs one extraction. Writes that came different ways are checked
 *  apart (a person's additions then a sync write's clobber must not cancel out), and the owner's deliberate writes
 *  are never merged: they change what is protected. Null when none is left. */
function takeBatch(waiting: GuardedWrite[]): GuardedWrite | null {
  const first = waiting.shift();
  if (!first) return null;
  const prov = provenanceOf(first.by);
  if (prov === 'deliberate' || prov === 'new') return first;
  let batch = first;
  while (waiting.length > 0 && provenanceOf(waiting[0].by) === prov)
    batch = { ...waiting.shift()!, before: first.before };
  return batch;
}

function stateOf(row: GuardRow | undefined): State {
  return {
    baseline: row?.baseline ? (JSON.parse(row.baseline) as Island) : null,
    uiWorkPending: row?.ui_work_pending === 1,
    event: row?.event ? (JSON.parse(row.event) as GuardEvent) : null,
  };
}

function rowOf(state: State): GuardRow {
  return {
    baseline: state.baseline ? JSON.stringify(state.baseline) : null,
    ui_work_pending: state.uiWorkPending ? 1 : 0,
    event_id: state.event?.id ?? null,
    event: state.event ? JSON.stringify(state.event) : null,
    event_at: state.event ? new Date(state.event.firstDetectedAt).toISOString() : null,
  };
}

/** Drops events older than 30 days (the hourly sweep): the loss is taken as accepted; the page is protected
 *  again from its next write or visit. */
export function sweepOldGuardEvents(s: Services): Promise<void> {
  const now = s.clock.now();
  return sweepGuardEvents(s.database.db, new Date(now.getTime() - EVENT_DAYS * DAY).toISOString(), now.toISOString());
}
