import { eventFrame } from './stream.ts';
import type { View } from './hub.ts';
import type { ChangedElsewhere, StaleSave } from '../events/bus.ts';
import { inSentence } from '../save/saved.ts';

/** `GET /_/sync/stream`: the account's file changes, JSON with a `type`. The writer stays private. */
export const syncStreamView: View = (e, id) => {
  switch (e.type) {
    case 'node-saved': {
      const frame: Record<string, unknown> = {
        type: e.type,
        nodeId: e.nodeId,
        nodeType: e.nodeType,
        path: e.path,
        checksum: e.checksum,
        modifiedAt: e.modifiedAt,
        size: e.size,
      };
      if (e.content !== undefined) frame.content = e.content;
      if (e.parentId !== undefined) frame.parentId = e.parentId;
      return eventFrame(id, frame);
    }
    case 'node-renamed':
    case 'node-moved':
      return eventFrame(id, {
        type: e.type,
        nodeId: e.nodeId,
        nodeType: e.nodeType,
        oldPath: e.oldPath,
        newPath: e.newPath,
      });
    case 'node-deleted':
      return eventFrame(id, { type: e.type, nodeId: e.nodeId, nodeType: e.nodeType, path: e.path });
    case 'live-sync':
      return eventFrame(id, { type: e.type, nodeId: e.nodeId, file: e.file, html: e.html, sender: e.sender });
    case 'control':
      return eventFrame(id, { type: 'control', envelope: e.envelope });
    default:
      return null;
  }
};

/** A sync stream opened with a key: its own control envelopes do not come back to it. */
export function syncStreamViewFor(keyId: number): View {
  return (e, id) => (e.type === 'control' && e.senderKey === keyId ? null : syncStreamView(e, id));
}

/** The live-sync lanes: `{html, sender, seq}` (+ `identityMap` on the live lane when the editor sent
 *  one); `seq` is the event id, growing per document. */
function laneView(lane: 'live' | 'saved'): View {
  return (e, id) => {
    if (e.type !== 'lane' || e.lane !== lane) return null;
    const frame: Record<string, unknown> = { html: e.html, sender: e.sender, seq: id };
    if (e.identityMap !== undefined) frame.identityMap = e.identityMap;
    return eventFrame(id, frame);
  };
}

/** A change made elsewhere, as Hyperclay Local words an edit on disk to an editing tab: hyperclayjs shows a
 *  persistent toast, Kiln's toolbar a Reload button. Who made it is named to those who may read the versions. */
function changedElsewhereFrame(e: ChangedElsewhere, id: number, named: boolean) {
  return reloadNotice(e.by, named, id);
}

/** The same notice for a change made before the lane opened, since the tab's page was served: no event of the
 *  channel, so no `id` or `seq` (it moves neither the client's Last-Event-ID nor hyperclayjs's seq watermark). */
export function changedBeforeFrame(by: string, named: boolean): Buffer {
  return reloadNotice(by, named, null);
}

/** The reload notice, with the event's id as its `seq` when it is one. */
function reloadNotice(by: string, named: boolean, id: number | null): Buffer {
  const msg = `${named ? by : 'Someone'} changed this page elsewhere. Reload to see the change.`;
  const notice = { type: 'notification', msgType: 'warning', msg, action: 'reload', persistent: true };
  return eventFrame(id, id === null ? notice : { ...notice, seq: id });
}

/** A save from a tab that had not loaded a change made elsewhere undid it: `data.diff` shows what it lost. */
function staleSaveFrame(e: StaleSave, id: number) {
  const msg = `A save from a tab opened before it undid the change by ${inSentence(e.by)} (version ${e.version}). Compare to bring it back.`;
  const data = { version: e.version, diff: `/_/version/${e.versionId}/diff` };
  return eventFrame(id, {
    type: 'notification',
    msgType: 'warning',
    msg,
    action: 'stale-save',
    persistent: true,
    data,
    seq: id,
  });
}

/** The notifications of a live lane: changes made elsewhere, and for those who may resolve them (the owner, a
 *  team's editors) a stale save that undid one and the data-clobber guard's `{type: 'notification', msgType: 'data-loss', msg, action, data}`.
 *  Alone, this is the `notices` lane (Kiln's toolbar, in an editing tab that has no live sync). */
export function noticesView(owner: boolean): View {
  return (e, id) => {
    if (e.type === 'changed-elsewhere') return changedElsewhereFrame(e, id, owner);
    if (e.type === 'stale-save' && owner) return staleSaveFrame(e, id);
    if (e.type === 'notification' && owner)
      return eventFrame(id, { type: 'notification', msgType: e.msgType, msg: e.msg, action: e.action, data: e.data });
    return null;
  };
}

const liveFrames = laneView('live');
const withNotices =
  (notices: View): View =>
  (e, id) =>
    notices(e, id) ?? liveFrames(e, id);

/** The live lane of a share guest: snapshots, and changes made elsewhere (unnamed). */
export const liveLaneView: View = withNotices(noticesView(false));
/** The live lane of someone who may resolve the document's data-loss events. */
export const liveLaneOwnerView: View = withNotices(noticesView(true));
export const savedLaneView: View = laneView('saved');

/** A lane's view for its holder: `owner` when they may resolve the document's data-loss events. */
export function viewOfLane(lane: 'live' | 'saved' | 'notices', owner: boolean): View {
  if (lane === 'saved') return savedLaneView;
  if (lane === 'notices') return noticesView(owner);
  return owner ? liveLaneOwnerView : liveLaneView;
}

/** Protocol 2 keep-alive: an unnamed data frame, because comments do not count as activity for the
 *  desktop engine's watchdog; both generations ignore the unknown type. */
export const SYNC_PING = Buffer.from(': ping\n\ndata: {"type":"ping"}\n\n');
