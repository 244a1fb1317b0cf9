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
// The wire form is `sv` + 16 hex characters (a 64-bit digest), e.g. `sv3f0c…`. The digest is a
// fast non-cryptographic one (two multiply-xor lanes): it guards against accidental staleness, not
// against an adversary — a key holder may change the node anyway. Listing 10,000 nodes digests them
// all, so it must cost microseconds, not a SHA per node.

/** What a version is made of (the wire's field names, so listing rows are used as they come). */
export interface VersionedNode {
  id: number;
  parentId: number;
  type: 'site' | 'folder' | 'upload';
  path: string;
  name: string;
  checksum: string | null;
}

/** A database row seen as a VersionedNode. */
export function versioned(n: {
  id: number;
  parent_id: number;
  type: VersionedNode['type'];
  path: string;
  name: string;
  checksum: string | null;
}): VersionedNode {
  return { id: n.id, parentId: n.parent_id, type: n.type, path: n.path, name: n.name, checksum: n.checksum };
}

// The digest's two 32-bit lanes live here while one digest is computed (no allocation per field).
let h1 = 0;
let h2 = 0;

function start() {
  h1 = 0x9e3779b9;
  h2 = 0x85ebca6b;
}
function mixString(text: string) {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x9e3779b1);
    h2 = Math.imul(h2 ^ c, 0x5f356495);
  }
  mixNumber(0x7c); // a separator, so ("ab","c") and ("a","bc") differ
}
function mixNumber(n: number) {
  h1 = Math.imul(h1 ^ (n | 0), 0x9e3779b1);
  h2 = Math.imul(h2 ^ ((n / 0x100000000) | 0), 0x5f356495);
  h1 = Math.imul(h1 ^ (h1 >>> 15), 0x85ebca6b);
  h2 = Math.imul(h2 ^ (h2 >>> 15), 0xc2b2ae35);
}
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
function finish(): string {
  // Final avalanche, each lane folding in the other.
  let a = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b) ^ Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35);
  let b = Math.imul(h2 ^ (h2 >>> 16), 0x85ebca6b) ^ Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
  a ^= a >>> 16;
  b ^= b >>> 16;
  return (
    'sv' +
    HEX[(a >>> 24) & 255] +
    HEX[(a >>> 16) & 255] +
    HEX[(a >>> 8) & 255] +
    HEX[a & 255] +
    HEX[(b >>> 24) & 255] +
    HEX[(b >>> 16) & 255] +
    HEX[(b >>> 8) & 255] +
    HEX[b & 255]
  );
}

/** The fields every version starts with. */
function mixOwn(n: VersionedNode) {
  mixString(n.type);
  mixNumber(n.id);
  mixNumber(n.parentId);
  mixString(n.path);
  mixString(n.name);
}

/** The version of a document or upload. */
export function fileVersion(n: VersionedNode): string {
  start();
  mixOwn(n);
  mixString(n.checksum ?? '');
  return finish();
}

/** Versions of every node of one account's tree (the rows must be the whole tree). One pass:
 *  children are grouped by parent, folders are digested after their children. */
export function structureVersions(rows: readonly VersionedNode[]): Map<number, string> {
  return analyzeTree(rows).versions;
}

/** The versions, and the rows in tree order (every folder before what it holds, depth first),
 *  from one grouping of the rows by parent — no sort. Rows whose parent is missing come last. */
export function analyzeTree<T extends VersionedNode>(
  rows: readonly T[],
): { versions: Map<number, string>; ordered: T[] } {
  const out = new Map<number, string>();
  const children = new Map<number, T[]>();
  for (const n of rows) {
    if (n.type !== 'folder') out.set(n.id, fileVersion(n));
    const list = children.get(n.parentId);
    if (list) list.push(n);
    else children.set(n.parentId, [n]);
  }
  const folderVersion = (f: T): string => {
    const known = out.get(f.id);
    if (known) return known;
    // Iterative post-order: deep trees (or a damaged tree with a cycle) never overflow the stack.
    const stack: Array<{ node: T; expanded: boolean }> = [{ node: f, expanded: false }];
    const visiting = new Set<number>();
    while (stack.length) {
      const top = stack[stack.length - 1];
      const kids = children.get(top.node.id) ?? [];
      if (!top.expanded) {
        top.expanded = true;
        visiting.add(top.node.id);
        for (const k of kids)
          if (k.type === 'folder' && !out.has(k.id) && !visiting.has(k.id)) stack.push({ node: k, expanded: false });
        continue;
      }
      stack.pop();
      const sorted = kids.length > 1 ? kids.slice().sort((a, b) => a.id - b.id) : kids;
      start();
      mixOwn(top.node);
      for (const k of sorted) mixString(out.get(k.id) ?? '');
      out.set(top.node.id, finish());
    }
    return out.get(f.id)!;
  };
  for (const n of rows) if (n.type === 'folder') folderVersion(n);
  // Tree order: depth first from the top level.
  const ordered: T[] = [];
  const placed = new Set<number>();
  const walk: T[] = [...(children.get(0) ?? [])].reverse();
  while (walk.length) {
    const n = walk.pop()!;
    if (placed.has(n.id)) continue;
    placed.add(n.id);
    ordered.push(n);
    const kids = n.type === 'folder' ? children.get(n.id) : undefined;
    if (kids) for (let i = kids.length - 1; i >= 0; i--) walk.push(kids[i]);
  }
  if (ordered.length < rows.length) for (const n of rows) if (!placed.has(n.id)) ordered.push(n);
  return { versions: out, ordered };
}
