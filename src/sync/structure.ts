// Structure versions: the opaque `structureVersion` of the sync API (protocol 2), used as the
// `expectedVersion` precondition of rename, move and delete (stale → 409 `node-changed`).
//
// Derived, never stored, so every writer (dashboard, browser save, sync API, restore) changes it
// without knowing about it:
// - a document or upload: a digest of its id, parent, folder path, name and content checksum. A rename
//   or move changes it, a content change changes it (so a stale client cannot delete an edit it has
//   not seen), and so does renaming or moving a folder above it (its path changes).
// - a folder: a digest of its own id, parent, path and name and of the versions of its children, in id
//   order (a Merkle tree), so it changes whenever anything under it does — a file saved, added,
//   removed, renamed or moved in or out at any depth — as the desktop engine expects.
// The wire form is `sv` + 16 base64url characters (96 bits of SHA-1), e.g. `svQ2x…`.
import crypto from 'node:crypto';

export interface VersionedNode {
  id: number;
  parent_id: number;
  type: 'site' | 'folder' | 'upload';
  path: string;
  name: string;
  checksum: string | null;
}

const oneShot = (crypto as unknown as { hash?: (alg: string, data: string, enc: 'base64url') => string }).hash;
function digest(text: string): string {
  const d = oneShot ? oneShot('sha1', text, 'base64url') : crypto.createHash('sha1').update(text).digest('base64url');
  return 'sv' + d.slice(0, 16);
}

const own = (n: VersionedNode) => `${n.type}|${n.id}|${n.parent_id}|${n.path}|${n.name}`;

/** The version of a document or upload. */
export function fileVersion(n: VersionedNode): string {
  return digest(`${own(n)}|${n.checksum ?? ''}`);
}

/** Versions of every node of one account's tree (the rows must be the whole tree). One pass:
 *  children are grouped by parent, folders are digested after their children. */
export function structureVersions(rows: readonly VersionedNode[]): Map<number, string> {
  const out = new Map<number, string>();
  const children = new Map<number, VersionedNode[]>();
  for (const n of rows) {
    if (n.type !== 'folder') out.set(n.id, fileVersion(n));
    const list = children.get(n.parent_id);
    if (list) list.push(n);
    else children.set(n.parent_id, [n]);
  }
  const folderVersion = (f: VersionedNode): string => {
    const known = out.get(f.id);
    if (known) return known;
    // Iterative post-order: deep trees (or a damaged tree with a cycle) never overflow the stack.
    const stack: Array<{ node: VersionedNode; expanded: boolean }> = [{ node: f, expanded: false }];
    const visiting = new Set<number>();
    while (stack.length) {
      const top = stack[stack.length - 1];
      const kids = children.get(top.node.id) ?? [];
      if (!top.expanded) {
        top.expanded = true;
        visiting.add(top.node.id);
        for (const k of kids) if (k.type === 'folder' && !out.has(k.id) && !visiting.has(k.id)) stack.push({ node: k, expanded: false });
        continue;
      }
      stack.pop();
      const parts = kids
        .slice()
        .sort((a, b) => a.id - b.id)
        .map((k) => out.get(k.id) ?? '');
      out.set(top.node.id, digest(`${own(top.node)}|${parts.join(',')}`));
    }
    return out.get(f.id)!;
  };
  for (const n of rows) if (n.type === 'folder') folderVersion(n);
  return out;
}
