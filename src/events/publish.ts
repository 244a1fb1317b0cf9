// Publishing what happened to a node, from one place (and, beside each change event, the row of the
// account's activity feed: src/store/activity.ts):
// - `publishAccountEvent`: a change of an account's tree on its channel (saved, renamed, moved, deleted).
// - `publishNodeSaved`: a committed change of a document, upload or new folder (the owner's sync
//   streams; for documents also the document's `saved` lane). Never awaited by the writer.
// - `broadcastSnapshot`: an editor snapshot on the document's `live` lane (browser editors), and, for a
//   sync write with `snapshotHtml` + `senderId`, a `live-sync` frame on the owner's sync streams.
//   Nothing is written.
// - `publishSoon` / `publishLive`: an event a request is answered after, which never waits for Redis (below).
import type { Database } from '../store/db.ts';
import type { Clock } from '../clock.ts';
import { channels, type KilnEvent, type LaneEvent, type NodeEvent, type RecordNote, type EventBus } from './bus.ts';
import { recordActivity, type ActivityRow } from '../store/activity.ts';
import { fail } from '../errors.ts';
import { limits } from '../limits.ts';

/** What publishing uses of the services, part by part (the guard publishes here, so this does not import
 *  src/services.ts). */
interface Ports {
  events: EventBus;
  database: Database;
  clock: Clock;
}

/** An event a request's answer follows (a control envelope, the data-clobber guard's note, a share revoked, hosts
 *  changed): while the bus flows the answer waits until the event is out (at most `limits.busAnswerWaitMs`); while
 *  Redis is away, not at all — the event waits in the bus's outbox, behind those before it, and goes out when Redis
 *  returns. Never rejects: a publish the bus refuses (its outbox full) is logged. */
export async function publishSoon(
  s: Pick<Ports, 'events'>,
  channel: string,
  event: KilnEvent,
  what: string,
): Promise<void> {
  const flowing = s.events.flowing();
  const published = s.events.publish(channel, event).catch((err) => {
    console.error(`publishing ${what} failed:`, err);
    return null;
  });
  if (flowing) await settledWithin(published, limits.busAnswerWaitMs);
}

/** A live-only event a request is answered with the id of (a bus message, an editor snapshot): nothing keeps one
 *  for later (no replay), and one may be megabytes, so it never waits in the bus's outbox: while Redis is away the
 *  request is refused at once, 503 `bus-unavailable` with Retry-After. Resolves with the event's id, or null when
 *  the bus has not confirmed it within `limits.busAnswerWaitMs` (it is on its way). */
export async function publishLive(s: Pick<Ports, 'events'>, publish: () => Promise<number>): Promise<number | null> {
  const unavailable = () =>
    fail('bus-unavailable', 'Redis is unreachable for a moment, so this live message was not sent: try again.', {
      retryAfter: limits.redisRetryAfterSeconds,
    });
  if (!s.events.flowing()) throw unavailable();
  let refused = false;
  const published = publish().catch(() => {
    // The bus refused it (its outbox full, or closing).
    refused = true;
    return null;
  });
  const id = await settledWithin(published, limits.busAnswerWaitMs);
  if (refused) throw unavailable();
  return id;
}

/** `p`'s value, or null when it has not settled within `ms`. */
async function settledWithin<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const ACTIVITY: Partial<Record<NodeEvent['type'], string>> = {
  'node-saved': 'saved',
  'node-renamed': 'renamed',
  'node-moved': 'moved',
  'node-deleted': 'deleted',
};

/** The activity feed's line for a change event (null for events the feed does not show). */
export function activityLine(ownerId: number, event: NodeEvent, at: string, client?: string): ActivityRow | null {
  const kind = ACTIVITY[event.type];
  if (!kind || !('nodeType' in event)) return null;
  return {
    ownerId,
    at,
    kind: event.type === 'node-saved' && event.nodeType === 'folder' ? 'created' : kind,
    nodeId: event.nodeId,
    nodeType: event.nodeType,
    path: 'newPath' in event ? event.newPath : 'path' in event ? event.path : '',
    oldPath: 'oldPath' in event ? event.oldPath : null,
    writer: event.writer ?? null,
    client: client ?? null,
  };
}

/** A change of an account's tree: the event on its channel, and a line of its activity feed (unless
 *  the writer put that line in its own transaction: `activityRecorded`). */
export function publishAccountEvent(
  s: Ports,
  ownerId: number,
  event: NodeEvent,
  client?: string,
  activityRecorded = false,
): Promise<unknown> {
  const line = activityRecorded ? null : activityLine(ownerId, event, s.clock.now().toISOString(), client);
  // The activity line is not waited for (a write's answer waits only for its events).
  if (line) void recordActivity(s.database.db, line).catch((err) => console.error('recording activity failed:', err));
  return s.events.publish(channels.account(ownerId), event);
}

/** What an account's hosts serve changed (suspended, disabled, renamed, deleted; a domain gone): every
 *  process forgets those hosts and their kept answers (src/http/hosts.ts, src/http/hot-path.ts), this one
 *  before the change is answered (their `watch`). */
export function publishHostChanged(s: Ports, accountId: number, names: string[] = []): Promise<unknown> {
  return publishSoon(
    s,
    channels.hosts,
    { type: 'host-changed', accountId, names },
    `the change of account ${accountId}'s hosts`,
  );
}

/** A document or upload made public or private: on its channel (its open streams) and its account's
 *  (what every process keeps of the account's public answers, src/http/hot-path.ts). */
export function publishVisibilityChanged(
  s: Ports,
  node: { id: number; owner_id: number },
  visibility: 'public' | 'private',
): Promise<unknown> {
  const event = { type: 'visibility-changed', nodeId: node.id, visibility } as const;
  return Promise.all([
    s.events.publish(channels.document(node.id), event),
    s.events.publish(channels.account(node.owner_id), event),
  ]);
}

/** The node as the event names it. */
export interface PublishedNode {
  id: number;
  owner_id: number;
  path: string;
  name: string;
  type: 'site' | 'folder' | 'upload';
  /** Folders: the parent folder id (0 at top level). */
  parent_id?: number;
}

export interface SavedOptions {
  writer?: string | null;
  html?: string;
  client?: string;
  record?: RecordNote;
  /** The writer recorded the activity line in its transaction (the save pipeline). */
  activityRecorded?: boolean;
  /** Documents: who open editing tabs are told changed it (`ChangedElsewhere`; save/saved.ts changedElsewhereBy). */
  elsewhere?: string | null;
}

/** The node-saved event of a committed change. */
export function nodeSavedEvent(
  node: PublishedNode,
  saved: { checksum: string | null; size: number; modifiedAt: string },
  opts: SavedOptions = {},
): Extract<NodeEvent, { type: 'node-saved' }> {
  return {
    type: 'node-saved',
    nodeId: node.id,
    nodeType: node.type,
    path: node.path ? `${node.path}/${node.name}` : node.name,
    checksum: saved.checksum,
    modifiedAt: saved.modifiedAt,
    size: saved.size,
    ...(opts.html !== undefined ? { content: opts.html } : {}),
    ...(node.type === 'folder' ? { parentId: node.parent_id ?? 0 } : {}),
    writer: opts.writer ?? null,
    ...(opts.record ? { record: opts.record } : {}),
  };
}

/** node-saved on the owner's account channel (and, with `html`, the document's saved lane). Errors
 *  are logged: the change has committed whatever the bus does. */
export function publishNodeSaved(
  s: Ports,
  node: PublishedNode,
  saved: { checksum: string | null; size: number; modifiedAt: string },
  opts: SavedOptions = {},
): Promise<unknown> {
  const event = nodeSavedEvent(node, saved, opts);
  return Promise.all([
    publishAccountEvent(s, node.owner_id, event, opts.client, opts.activityRecorded),
    opts.html !== undefined
      ? s.events.publish(channels.document(node.id), {
          type: 'lane',
          lane: 'saved',
          nodeId: node.id,
          html: opts.html,
          sender: 'server-save',
          ...(saved.checksum ? { checksum: saved.checksum } : {}),
        })
      : null,
    opts.elsewhere
      ? s.events.publish(channels.document(node.id), { type: 'changed-elsewhere', nodeId: node.id, by: opts.elsewhere })
      : null,
  ]).catch((err) => console.error(`publishing the change of ${event.path} failed:`, err));
}

export interface Snapshot {
  node: { id: number; owner_id: number; path: string; name: string };
  html: string;
  /** The editor tab's client id or the device id: clients ignore frames carrying their own. */
  sender: string;
  /** hyperclayjs identity map, relayed as is. */
  identityMap?: unknown;
  /** Also tell the owner's sync tools (`live-sync` frame). */
  toSyncStreams?: boolean;
}

/** Publishes the snapshot; resolves with the live lane frame's `seq`. */
export async function broadcastSnapshot(s: Ports, snap: Snapshot): Promise<number> {
  const { node } = snap;
  const [seq] = await Promise.all([
    s.events.publish(channels.document(node.id), {
      type: 'lane',
      lane: 'live',
      nodeId: node.id,
      html: snap.html,
      sender: snap.sender,
      ...(snap.identityMap !== undefined ? { identityMap: snap.identityMap } : {}),
    }),
    snap.toSyncStreams
      ? s.events.publish(channels.account(node.owner_id), {
          type: 'live-sync',
          nodeId: node.id,
          file: node.path ? `${node.path}/${node.name}` : node.name,
          html: snap.html,
          sender: snap.sender,
        })
      : null,
  ]);
  return seq;
}

/** A document relayed on its `saved` lane only (nothing written): resolves with the frame's `seq`. */
export function relaySaved(s: Ports, node: { id: number }, html: string, sender: string): Promise<number> {
  return s.events.publish(channels.document(node.id), { type: 'lane', lane: 'saved', nodeId: node.id, html, sender });
}

/** A save that changed nothing may be the retry of one whose process committed it and died before its
 *  events went out (a load balancer retries a request whose answer never came). When the document's
 *  newest kept saved-lane event is of other bytes, the events of these are published now, once; when
 *  none is kept, nothing is (a stream that resumes past the replay log gets the stored document). */
export async function republishIfLost(
  s: Ports,
  node: PublishedNode,
  saved: { checksum: string; size: number; modifiedAt: string },
  opts: { writer?: string | null; html: string; client?: string },
): Promise<unknown> {
  const kept = await s.events.replay(channels.document(node.id), 0);
  const last = kept.events
    .map((e) => e.event)
    .filter((e): e is LaneEvent => e.type === 'lane' && e.lane === 'saved')
    .at(-1);
  if (!last || last.checksum === undefined || last.checksum === saved.checksum) return;
  return publishNodeSaved(s, node, saved, opts);
}
