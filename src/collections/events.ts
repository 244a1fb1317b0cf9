// A collection's records as a live stream for its open dashboards: the view over the owner's account
// channel that keeps the changes of `.json` files directly in the collection's records folder, as
// named `collection-record` events `{type, op, id, modifiedAt, seq, data?}` (`op`: create, update,
// save — a file written some other way, e.g. synced — or delete; `data` when the collection API wrote
// it; `seq` = the SSE id, so Last-Event-ID resumes). One view per stream: it follows the folder's path
// through renames and moves of the folders above it.
import type { View } from '../sse/hub.ts';
import { namedEventFrame } from '../sse/stream.ts';

export const RECORD_EVENT = 'collection-record';

/** The record key of a file path directly in `folder`, or null. */
function keyIn(folder: string, path: string): string | null {
  if (!path.startsWith(`${folder}/`)) return null;
  const name = path.slice(folder.length + 1);
  if (name.includes('/') || !/\.json$/i.test(name)) return null;
  return name.slice(0, -5);
}

export function recordsView(recordsPath: string, now: () => Date): View {
  let folder = recordsPath;
  return (e, id) => {
    if ((e.type === 'node-renamed' || e.type === 'node-moved') && e.nodeType === 'folder') {
      if (folder === e.oldPath || folder.startsWith(`${e.oldPath}/`))
        folder = e.newPath + folder.slice(e.oldPath.length);
      return null;
    }
    if (e.type === 'node-saved' && e.nodeType === 'upload') {
      const key = keyIn(folder, e.path);
      if (key === null) return null;
      const frame: Record<string, unknown> = {
        type: RECORD_EVENT,
        op: e.record?.op ?? 'save',
        id: key,
        modifiedAt: e.modifiedAt,
        seq: id,
      };
      if (e.record) frame.data = e.record.data;
      return namedEventFrame(RECORD_EVENT, id, frame);
    }
    if (e.type === 'node-deleted' && e.nodeType === 'upload') {
      const key = keyIn(folder, e.path);
      if (key === null) return null;
      return namedEventFrame(RECORD_EVENT, id, {
        type: RECORD_EVENT,
        op: 'delete',
        id: key,
        modifiedAt: now().toISOString(),
        seq: id,
      });
    }
    return null;
  };
}
