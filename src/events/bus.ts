// One event bus, two implementations: in-process (default, memory.ts) and Redis pub/sub (REDIS_URL,
// redis.ts), so that every process behind a load balancer delivers every event to every subscriber.
//
// Every published event gets an id, unique and growing per channel — across processes (Redis assigns
// it) and across restarts (it is Date.now()-based: max(now × 1000, last + 1)). Streams send it as the
// SSE `id:` and as the live-sync `seq`. Each channel keeps a short, bounded replay log so that a
// stream that reconnects with `Last-Event-ID` gets what it missed.
import { limits } from '../limits.ts';

/** `id` is the event's place in its channel (see above). */
export type Listener = (message: KilnEvent, id: number) => void;

export interface Envelope {
  id: number;
  event: KilnEvent;
}

export interface Replay {
  /** Events with an id above the one asked for, oldest first. */
  events: Envelope[];
  /** False when events after the asked id exist but are no longer (or were never) kept. */
  complete: boolean;
  /** The channel's newest id (0 when nothing was published recently). */
  lastId: number;
}

export interface EventBus {
  /** Publishes to every subscriber of the channel in every process; resolves with the event's id. */
  publish(channel: string, message: KilnEvent): Promise<number>;
  /** Returns the unsubscribe function. Listeners run for events from every process, each event once. */
  subscribe(channel: string, listener: Listener): () => void;
  /** A cache's listener: runs for the channel's events from every process and, in the process that
   *  publishes one, at once (before the bus has it), so what a change made stale is gone before the
   *  change is answered. It may run twice for one event: it must only forget. */
  watch(channel: string, forget: (event: KilnEvent) => void): () => void;
  /** Resolves once the subscription of this process to the channel is active (events published
   *  afterwards reach its listeners). Call after `subscribe`. */
  subscribed(channel: string): Promise<void>;
  /** The kept events of a channel with an id above `afterId`. */
  replay(channel: string, afterId: number): Promise<Replay>;
  /** True when the bus can publish now (Redis answers); for `/_/ready`. */
  reachable(): Promise<boolean>;
  /** True when a publish goes out at once (in process; Redis connected with nothing waiting): a write's
   *  answer then waits for its events (src/store/transaction.ts). */
  flowing(): boolean;
  /** A number that changes when another process may have committed a change whose events never reach this bus:
   *  the `kiln` command line on this process's SQLite database publishes on a bus of its own (what the memory
   *  bus is given at start, src/server.ts). Redis: always 0 (every process publishes there). */
  outsideChanges(): number;
  close(): Promise<void>;
}

/** Channels: one per account (the sync stream), one per document (the live-sync lanes), and one for
 *  revoked grants and changed roles (src/events/revocations.ts) that every process's stream hub and hot path
 *  listen to. */
export const channels = {
  account: (accountId: number) => `account:${accountId}`,
  document: (nodeId: number) => `doc:${nodeId}`,
  revocations: 'revocations',
  /** A document host's message bus (`/_/bus`, src/bus): one per account, all its page channels on it. */
  bus: (accountId: number) => `bus:${accountId}`,
  /** Hosts that changed (an account suspended, disabled, renamed or deleted; a domain removed): every
   *  process's host cache listens. */
  hosts: 'hosts',
};

/** Whether a channel's replay log keeps an event of this many serialized bytes. Bus messages are live
 *  only (their frames carry no id and nothing replays them), so none is kept. */
export function keptInReplayLog(channel: string, bytes: number): boolean {
  return bytes <= replayLog.maxEventBytes && !channel.startsWith('bus:');
}

/** A change to an account's files. `path` values are full paths (`folder/name.html`). */
export type NodeEvent =
  | {
      type: 'node-saved';
      nodeId: number;
      nodeType: 'site' | 'folder' | 'upload';
      path: string;
      checksum: string | null;
      modifiedAt: string;
      size: number;
      /** Inline HTML for sites. */
      content?: string;
      /** Folders: the parent folder id (0 at top level). */
      parentId?: number;
      /** The writer (session or sync key) that caused it. Never sent to clients. */
      writer?: string | null;
      /** A collection record written through the collection API: what changed, for open collection
       *  dashboards (src/collections). Not on the sync stream. */
      record?: RecordNote;
    }
  | {
      type: 'node-renamed' | 'node-moved';
      nodeId: number;
      nodeType: string;
      oldPath: string;
      newPath: string;
      writer?: string | null;
    }
  | { type: 'node-deleted'; nodeId: number; nodeType: string; path: string; writer?: string | null }
  /** An editor snapshot relayed to the account's sync tools (`file` = full path with extension). */
  | { type: 'live-sync'; nodeId: number; file: string; html: string; sender: string };

/** A collection record's change as its collection's API made it. */
export interface RecordNote {
  op: 'create' | 'update';
  data: unknown;
}

/** A frame for a document's live-sync lanes. */
export interface LaneEvent {
  type: 'lane';
  lane: 'live' | 'saved';
  nodeId: number;
  html: string;
  sender: string;
  /** Opaque identity map of the hyperclayjs editor, relayed as is. */
  identityMap?: unknown;
  /** Saved lane, after a save: the stored bytes' checksum (never sent; see republishIfLost). */
  checksum?: string;
}

/** Share access to a document was revoked (sharing disabled or the token regenerated): streams
 *  opened on the strength of a share token close. Shown by no view. */
export interface ShareRevokedEvent {
  type: 'share-revoked';
  nodeId: number;
}

/** A document was made public or private: saved-lane streams of people who may not view a private
 *  document close when it turns private. Shown by no view. */
export interface VisibilityChangedEvent {
  type: 'visibility-changed';
  nodeId: number;
  visibility: 'public' | 'private';
}

/** Rights that open streams may depend on ended (`session:<id>`, `key:<id>`, `member:<team>:<person>`;
 *  src/events/revocations.ts). Published on `channels.revocations`. Shown by no view. */
export interface GrantRevokedEvent {
  type: 'grant-revoked';
  grants: string[];
}

/** A team member's role changed in a way that ends no grant (a viewer made an editor or an owner, an owner made
 *  an editor): what every process keeps of that person's answers on the team's host goes (src/http/hot-path.ts).
 *  Published on `channels.revocations`. Shown by no view. */
export interface RoleChangedEvent {
  type: 'role-changed';
  teamId: number;
  personId: number;
}

/** The data-clobber guard raised or ended an event (src/guard/guard.ts): a `notification` frame on the live lanes
 *  of those who may resolve it, which hyperclayjs turns into `hyperclay:notification`. */
export interface DataLossNote {
  type: 'notification';
  nodeId: number;
  msgType: 'data-loss';
  msg: string;
  action: 'raised' | 'resolved';
  data: unknown;
}

/** A document changed by a writer other than a browser tab (an agent, a sync tool, the code editor, a version
 *  restore): a tab in edit mode does not take the saved lane in (a morph with the stored page could strip its
 *  editing state), so its live lane is told, as Hyperclay Local tells it of an edit on disk: a `notification` frame
 *  with `action: 'reload'` (hyperclayjs's persistent toast, Kiln's toolbar's Reload). `by` names the writer for
 *  those who may read the versions list. */
export interface ChangedElsewhere {
  type: 'changed-elsewhere';
  nodeId: number;
  by: string;
}

/** A browser save undid a change made elsewhere (src/save/stale.ts): the page's editing tabs of those who may read
 *  the versions are told who made it and which version holds it. */
export interface StaleSave {
  type: 'stale-save';
  nodeId: number;
  by: string;
  /** The version (its number and id) that holds the undone change. */
  version: number;
  versionId: number;
}

/** A control-lane envelope for an account's devices (`POST /_/sync/control`, or Kiln's own dismissal): a
 *  `control` frame on its sync streams, except those of the key that sent it (`senderKey`, null for Kiln). */
export interface ControlEvent {
  type: 'control';
  envelope: unknown;
  senderKey: number | null;
}

/** A message on a document host's bus (src/bus): `envelope` goes to the host's subscribers of `channel`
 *  as it is. */
export interface BusMessage {
  type: 'bus';
  channel: string;
  envelope: BusEnvelope;
}

/** The bus's wire envelope (hyperclayjs 1.38 ai-edit.js, @panphora/hyper-wire); subscribers get it with
 *  `seq`, the event's id on the bus channel (src/bus/bus.ts busFrame). */
export interface BusEnvelope {
  channel: string;
  type: string;
  v: number;
  payload: unknown;
  sender: string;
  origin: string;
}

/** What a host serves changed: every process forgets the account's hosts it knows and these names
 *  (src/http/hosts.ts), so the next request reads them again. Shown by no view. */
export interface HostChangedEvent {
  type: 'host-changed';
  accountId: number;
  names: string[];
}

export type KilnEvent =
  | HostChangedEvent
  | BusMessage
  | NodeEvent
  | LaneEvent
  | ShareRevokedEvent
  | VisibilityChangedEvent
  | GrantRevokedEvent
  | RoleChangedEvent
  | DataLossNote
  | ChangedElsewhere
  | StaleSave
  | ControlEvent;

/** How long and how much each channel's replay log keeps. */
export const replayLog = {
  /** Newest events kept per channel. */
  events: 32,
  /** Kept events expire this long after the channel's last publish. */
  ttlMs: 5 * 60_000,
  /** Events larger than this (serialized) are not kept; a replay over them is incomplete. */
  maxEventBytes: 1024 * 1024,
  /** In-process bus: all channels' kept events together stay under this many bytes. */
  maxTotalBytes: limits.memory.replayLog,
} as const;

/** The next id of a channel: Date.now()-based so it keeps growing across restarts, and strictly
 *  above the last one. Microsecond-scale: 1,000 ids per millisecond before it runs ahead of the clock. */
export function nextId(last: number, nowMs: number): number {
  return Math.max(nowMs * 1000, last + 1);
}
