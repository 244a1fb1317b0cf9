// Broadcasting an editor snapshot: the `live` lane of the document (browser editors), and — for a
// sync write with `snapshotHtml` + `senderId` — a `live-sync` frame on the owner's sync streams.
// Nothing is written. Saves publish through the save pipeline (node-saved + the `saved` lane).
import type { Services } from '../services.ts';
import { channels } from './bus.ts';

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
export async function broadcastSnapshot(s: Services, snap: Snapshot): Promise<number> {
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
