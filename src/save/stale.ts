// A stale tab's save that undoes a change made elsewhere. hyperclayjs saves the whole page without If-Match, so a
// tab opened before an agent's write (or a sync tool's, the code editor's, a restore) and saved after it writes the
// page without that change. The data-clobber guard (src/guard) catches lost data; this catches the rest: after a
// browser save whose previous version was written elsewhere, that change (the previous version against the one
// before it, as a line patch) is applied to the saved page. When it applies and changes the page, the save undid
// it: the page's editing tabs are told who made the change and where to find it, and the activity feed keeps it.
// When it does not apply (the save already has it, or changed the same lines), nothing is said: the versions
// hold both either way. Runs after the save is answered, for browser saves only.
import { reapplied } from '../core/reapply.ts';
import type { Services } from '../services.ts';
import { channels } from '../events/bus.ts';
import { recordActivity } from '../store/activity.ts';
import { versionBefore } from '../store/versions.ts';
import type { Row } from '../store/schema.ts';
import { versionContent } from './history.ts';
import { changedElsewhereByRecorded, type SavedBy, type SavedNode } from './saved.ts';
import { childPathOf } from '../nodes/find.ts';
import { publishSoon } from '../events/publish.ts';
import { limits } from '../limits.ts';

/** Pages above this size are not compared. */
const MAX_BYTES = limits.documentSize;

/** After a browser save (`savedText`, over the version `previous`, as the save's locked read found it: most saves
 *  follow a browser save and end here without a query): whether it undid a change made elsewhere. */
export async function checkStaleSave(
  s: Services,
  node: SavedNode,
  by: SavedBy,
  previous: Pick<Row<'versions'>, 'id' | 'backup_number' | 'saved_by_kind'>,
  savedText: string,
): Promise<void> {
  if (by.kind !== 'browser' || savedText.length > MAX_BYTES) return;
  const db = s.database.db;
  const who = changedElsewhereByRecorded(previous.saved_by_kind);
  if (!who) return;
  const older = await versionBefore(db, node.id, previous.backup_number);
  if (!older) return;
  const [before, elsewhere] = await Promise.all([versionContent(db, older.id), versionContent(db, previous.id)]);
  if (before.bytes.length > MAX_BYTES || elsewhere.bytes.length > MAX_BYTES) return;
  if (!reapplied(before.bytes.toString('utf8'), elsewhere.bytes.toString('utf8'), savedText)) return;
  const version = previous.backup_number;
  await recordActivity(db, {
    ownerId: node.owner_id,
    at: s.clock.now().toISOString(),
    kind: 'stale-save',
    nodeId: node.id,
    nodeType: 'site',
    path: childPathOf(node),
    writer: by.writer,
    client: by.shareGuest ? 'share link' : 'browser',
    detail: JSON.stringify({ undid: who, version }),
  });
  await publishSoon(
    s,
    channels.document(node.id),
    { type: 'stale-save', nodeId: node.id, by: who, version, versionId: previous.id },
    'a stale-save note',
  );
}
