// A node by its path, and the path a folder's children get: below src/nodes/tree.ts's use cases, so the members
// of the services (the guard, the AI edit handler) and the document host's reads use them without importing those.
import type { Database } from '../store/db.ts';
import type { NodeRow } from '../store/schema.ts';

/** A node's row, as the doors name it (they import nothing from src/store/). */
export type { NodeRow };
import { splitPath } from '../core/names.ts';
import { ownerNodesNamed } from '../store/nodes.ts';

/** The node at a relative path like `a/b/c.html` in an account's tree (case-insensitive, like names),
 *  or undefined. No access check: callers authorize (a private node must answer like a missing one). */
export async function findByPath(
  s: { database: Database },
  ownerId: number,
  relPath: string,
): Promise<NodeRow | undefined> {
  const parts = splitPath(relPath.replace(/^\/+/, ''));
  if (typeof parts === 'string') return undefined;
  const folderKey = parts.slice(0, -1).join('/').normalize('NFC').toLowerCase();
  const rows = await ownerNodesNamed(s.database.db, ownerId, parts[parts.length - 1].normalize('NFC'));
  return rows.find((r) => r.path.toLowerCase() === folderKey);
}

/** The path children of `folder` get: `a/b` for folder `b` in `a`; '' for the top level (null). */
export function childPathOf(folder: { path: string; name: string } | null | undefined): string {
  if (!folder) return '';
  return folder.path ? `${folder.path}/${folder.name}` : folder.name;
}
