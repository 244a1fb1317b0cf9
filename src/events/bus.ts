// One event bus, two implementations: in-process (default) and Redis pub/sub (REDIS_URL), so that
// every process behind a load balancer delivers every event to every subscriber.
export type Listener = (message: KilnEvent) => void;

export interface EventBus {
  publish(channel: string, message: KilnEvent): Promise<void>;
  /** Returns the unsubscribe function. Listeners run for events from every process. */
  subscribe(channel: string, listener: Listener): () => void;
  close(): Promise<void>;
}

/** Channels: one per account (the sync stream) and one per document (the live-sync lanes). */
export const channels = {
  account: (accountId: number) => `account:${accountId}`,
  document: (nodeId: number) => `doc:${nodeId}`,
};

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
      /** The writer (session or sync key) that caused it. */
      writer?: string | null;
    }
  | { type: 'node-renamed' | 'node-moved'; nodeId: number; nodeType: string; oldPath: string; newPath: string; writer?: string | null }
  | { type: 'node-deleted'; nodeId: number; nodeType: string; path: string; writer?: string | null }
  | { type: 'live-sync'; nodeId: number; file: string; html: string; sender: string };

/** A frame for a document's live-sync lanes. */
export interface LaneEvent {
  type: 'lane';
  lane: 'live' | 'saved';
  nodeId: number;
  html: string;
  sender: string;
}

export type KilnEvent = NodeEvent | LaneEvent;
