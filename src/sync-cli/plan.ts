// The reconcile plan of `kiln sync`, `push` and `pull`: pure. From three views of the files — the local
// folder, the account's listing and what both were at the last sync (the base, from .kiln/state.json) —
// it decides what to send, fetch, move, delete or keep as a conflict. Paths are relative, `/`-separated,
// NFC. The rules, per path (L local checksum, R remote checksum, B the base's two checksums; "changed"
// means different from the base):
//   - only one side changed: that side's state goes to the other (content, or a delete — into a trash);
//   - both changed to the same bytes, or both new with the same bytes: recorded, nothing moves;
//   - both changed differently (or both new, differently): a conflict — sync keeps both copies, push and
//     pull skip the file and say so (except with no base at all: push/pull then make the target like the
//     source, each overwrite conditional on what was just listed, and pull keeps the local copy in the trash);
//   - deleted on one side, changed on the other: the change wins (the file comes back); nothing is lost.
// Renames and moves: a node whose id now lists at another path moved remotely; a base file missing locally
// whose unchanged bytes appear at a new local path moved locally. Both are sent as moves, so versions
// stay with the document. Without a base (push/pull --prune), a file only on one side and a file with the
// same checksum only on the other are one file moved.

export type FileType = 'site' | 'upload';
export type Mode = 'sync' | 'push' | 'pull';

export interface LocalFile {
  sum: string;
  size: number;
}
export interface RemoteFile {
  id: number;
  sum: string;
  size: number;
  type: FileType;
  /** The listing's structureVersion: the precondition of a move or delete. */
  version: string;
}
/** What a file was at the last sync: its node, and its checksum on each side (a host may rewrite what
 *  it stores, e.g. re-indent a page, so the two can differ). */
export interface BaseFile {
  id: number;
  local: string;
  remote: string;
}

export interface PlanInput {
  mode: Mode;
  prune: boolean;
  local: ReadonlyMap<string, LocalFile>;
  remote: ReadonlyMap<string, RemoteFile>;
  base: ReadonlyMap<string, BaseFile>;
  /** Files the server refused (name rules, limits): their local checksum then. Not sent again until changed. */
  skipped: ReadonlyMap<string, string>;
}

export type Action =
  /** Create (no id) or overwrite a node with the local bytes; `ifMatch`: the remote checksum it replaces. */
  | { op: 'upload'; rel: string; id?: number; ifMatch?: string; local: string; size: number }
  /** Write the node's bytes at `rel`; the local file must still be `expectLocal` (null: absent). `trash`:
   *  the local file is not on the server, so it goes to .kiln/trash first. */
  | {
      op: 'download';
      rel: string;
      id: number;
      remote: string;
      size: number;
      expectLocal: string | null;
      trash: boolean;
    }
  /** Both changed: the local copy moves aside to a conflict name, then the remote bytes come down. */
  | { op: 'conflict'; rel: string; id: number; remote: string; size: number; expectLocal: string }
  | { op: 'remote-move'; from: string; to: string; id: number; version: string }
  | { op: 'local-move'; from: string; to: string; id: number }
  | { op: 'remote-delete'; rel: string; id: number; version: string; remote: string }
  | { op: 'local-delete'; rel: string; expectLocal: string }
  /** Both sides already agree: the base is (re)written. */
  | { op: 'record'; rel: string; base: BaseFile }
  /** Gone from both sides: the base entry goes. */
  | { op: 'forget'; rel: string }
  /** Push/pull: changed on both sides since the last sync; nothing is written. */
  | { op: 'both-changed'; rel: string };

export function typeOf(rel: string): FileType {
  return /\.(html|htmlclay)$/i.test(rel) ? 'site' : 'upload';
}

const parentOf = (rel: string) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');

/** The name a conflict copy is kept under: `dir/name (conflict <who> <date>).ext`, e.g.
 *  `notes (conflict laptop 2026-11-27 17-05).html` (no characters a host or file system refuses). */
export function conflictName(
  rel: string,
  who: string,
  at: Date,
  taken: (rel: string) => boolean = () => false,
): string {
  const dir = parentOf(rel);
  const leaf = rel.slice(dir ? dir.length + 1 : 0);
  const dot = leaf.lastIndexOf('.');
  const stem = dot > 0 ? leaf.slice(0, dot) : leaf;
  const ext = dot > 0 ? leaf.slice(dot) : '';
  const safeWho =
    who
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'here';
  const iso = at.toISOString();
  const date = `${iso.slice(0, 10)} ${iso.slice(11, 13)}-${iso.slice(14, 16)}`;
  for (let n = 1; ; n++) {
    const tag = n === 1 ? '' : ` ${n}`;
    const name = `${stem} (conflict ${safeWho} ${date}${tag})${ext}`;
    const full = dir ? `${dir}/${name}` : name;
    if (!taken(full)) return full;
  }
}

/** The plan, in the order it should run: moves first (so what follows sees the new paths), then
 *  content, then deletes. */
export function plan(input: PlanInput): Action[] {
  const { mode, prune } = input;
  const local = new Map(input.local);
  const remote = new Map(input.remote);
  const base = new Map(input.base);
  const moves: Action[] = [];
  const content: Action[] = [];
  const deletes: Action[] = [];
  const records: Action[] = [];
  const toLocal = mode !== 'push';
  const toRemote = mode !== 'pull';

  // 1. Remote moves, by node id (sync and pull).
  const remoteById = new Map<number, string>();
  for (const [rel, r] of remote) remoteById.set(r.id, rel);
  for (const [from, b] of [...base]) {
    const to = remoteById.get(b.id);
    if (to === undefined || to === from || !toLocal) continue;
    const target = base.get(to);
    if (target && target.id !== b.id) continue; // another known file is there: leave both to the path rules
    const l = local.get(from);
    const lTo = local.get(to);
    if (!l && lTo && lTo.sum === remote.get(to)!.sum) {
      // Already moved here too (a run stopped before it wrote its state).
      base.delete(from);
      base.set(to, { ...b, local: lTo.sum });
      continue;
    }
    if (l && !lTo) {
      moves.push({ op: 'local-move', from, to, id: b.id });
      local.delete(from);
      local.set(to, l);
    }
    // Either way the base follows the node; the path rules decide the content (a local file left at `from`
    // is then new there).
    base.delete(from);
    base.set(to, b);
  }

  // 2. Local moves: a base file gone locally, its node unchanged at its place, and exactly one new local
  //    file with the bytes it had (sync and push).
  if (toRemote) {
    const newLocal = new Map<string, string[]>();
    for (const [rel, l] of local) {
      if (base.has(rel) || remote.has(rel)) continue;
      const list = newLocal.get(l.sum);
      if (list) list.push(rel);
      else newLocal.set(l.sum, [rel]);
    }
    for (const [from, b] of [...base]) {
      const r = remote.get(from);
      if (local.has(from) || !r || r.id !== b.id || r.sum !== b.remote) continue;
      const candidates = newLocal.get(b.local);
      if (candidates?.length !== 1) continue;
      const to = candidates[0];
      newLocal.delete(b.local);
      moves.push({ op: 'remote-move', from, to, id: b.id, version: r.version });
      remote.delete(from);
      remote.set(to, r);
      base.delete(from);
      base.set(to, b);
    }
  }

  // 3. Without a base, push/pull --prune: a file only on the source and one with the same bytes only on
  //    the target are one file, moved.
  if (prune && mode !== 'sync') {
    const onlyTarget = new Map<string, string[]>();
    const targetSide = mode === 'push' ? remote : local;
    const sourceSide = mode === 'push' ? local : remote;
    for (const [rel, f] of targetSide) {
      if (sourceSide.has(rel) || base.has(rel)) continue;
      const list = onlyTarget.get(f.sum);
      if (list) list.push(rel);
      else onlyTarget.set(f.sum, [rel]);
    }
    for (const [rel, f] of [...sourceSide]) {
      if (targetSide.has(rel) || base.has(rel)) continue;
      const list = onlyTarget.get(f.sum);
      if (list?.length !== 1) continue;
      const from = list[0];
      onlyTarget.delete(f.sum);
      if (mode === 'push') {
        const r = remote.get(from)!;
        moves.push({ op: 'remote-move', from, to: rel, id: r.id, version: r.version });
        remote.delete(from);
        remote.set(rel, r);
      } else {
        const r = remote.get(rel)!;
        moves.push({ op: 'local-move', from, to: rel, id: r.id });
        const l = local.get(from)!;
        local.delete(from);
        local.set(rel, l);
      }
    }
  }

  // 4. Path by path.
  const paths = new Set<string>([...local.keys(), ...remote.keys(), ...base.keys()]);
  for (const rel of [...paths].sort()) {
    const l = local.get(rel);
    const r = remote.get(rel);
    const b = base.get(rel);
    const skippedAt = input.skipped.get(rel);
    const upload = (ifMatch?: string): Action | null =>
      !toRemote || (l && skippedAt === l.sum)
        ? null
        : { op: 'upload', rel, id: r?.id, ifMatch, local: l!.sum, size: l!.size };
    const download = (trash: boolean): Action | null =>
      toLocal
        ? { op: 'download', rel, id: r!.id, remote: r!.sum, size: r!.size, expectLocal: l?.sum ?? null, trash }
        : null;
    const push = (a: Action | null, list = content) => {
      if (a) list.push(a);
    };

    if (!b) {
      if (l && r) {
        if (l.sum === r.sum) records.push({ op: 'record', rel, base: { id: r.id, local: l.sum, remote: r.sum } });
        else if (mode === 'sync')
          content.push({ op: 'conflict', rel, id: r.id, remote: r.sum, size: r.size, expectLocal: l.sum });
        else if (mode === 'push') push(upload(r.sum));
        else push(download(true));
      } else if (l) {
        if (mode !== 'pull') push(upload());
        else if (prune) deletes.push({ op: 'local-delete', rel, expectLocal: l.sum });
      } else if (r) {
        if (mode === 'push')
          push(prune ? { op: 'remote-delete', rel, id: r.id, version: r.version, remote: r.sum } : null, deletes);
        else push(download(false));
      }
      continue;
    }

    const lChanged = l ? l.sum !== b.local : false;
    const rChanged = r ? r.id !== b.id || r.sum !== b.remote : false;
    if (l && r) {
      if (!lChanged && !rChanged) continue;
      if (lChanged && !rChanged) push(upload(r.sum));
      else if (!lChanged && rChanged) push(download(false));
      else if (l.sum === r.sum) records.push({ op: 'record', rel, base: { id: r.id, local: l.sum, remote: r.sum } });
      else if (mode === 'sync')
        content.push({ op: 'conflict', rel, id: r.id, remote: r.sum, size: r.size, expectLocal: l.sum });
      else content.push({ op: 'both-changed', rel });
    } else if (r) {
      // Gone locally.
      if (rChanged) push(download(false));
      else if (mode === 'sync' || (mode === 'push' && prune))
        deletes.push({ op: 'remote-delete', rel, id: r.id, version: r.version, remote: r.sum });
      else if (mode === 'pull') push(download(false));
    } else if (l) {
      // Gone remotely.
      if (lChanged) push(upload());
      else if (mode === 'sync' || (mode === 'pull' && prune))
        deletes.push({ op: 'local-delete', rel, expectLocal: l.sum });
      else if (mode === 'push') push(upload());
    } else {
      records.push({ op: 'forget', rel });
    }
  }
  return [...moves, ...content, ...deletes, ...records];
}

/** A transfer a run was about to make (written to the state before it starts): `to` the side written,
 *  `local`/`remote` the checksums both sides hold once it is done, `id` the node. When a run is killed
 *  after the transfer and before its state, the next run finds the written side holding exactly those
 *  bytes and takes them as synced (so a later edit of the other copy is an edit, not a conflict). */
export interface Pending {
  to: 'local' | 'remote';
  id: number | null;
  local: string;
  remote: string;
}

/** The base with the pending transfers that landed folded in. */
export function withPending(
  base: ReadonlyMap<string, BaseFile>,
  pending: ReadonlyMap<string, Pending>,
  local: ReadonlyMap<string, LocalFile>,
  remote: ReadonlyMap<string, RemoteFile>,
): Map<string, BaseFile> {
  const out = new Map(base);
  for (const [rel, p] of pending) {
    const r = remote.get(rel);
    const l = local.get(rel);
    if (p.to === 'remote' && r && r.sum === p.remote) out.set(rel, { id: r.id, local: p.local, remote: p.remote });
    if (p.to === 'local' && l && l.sum === p.local && p.id !== null)
      out.set(rel, { id: p.id, local: p.local, remote: p.remote });
  }
  return out;
}

// ------------------------------------------------------------------ folders

/** Folder changes after the files: empty folders are kept in step too. `localDirs`/`remoteDirs`: the
 *  folders each side has now (after the file actions); `baseDirs`: those both had at the last sync. */
export type FolderAction =
  | { op: 'mkdir-local'; rel: string }
  | { op: 'mkdir-remote'; rel: string }
  | { op: 'rmdir-local'; rel: string }
  | { op: 'rmdir-remote'; rel: string; id: number; version: string };

export function planFolders(input: {
  mode: Mode;
  prune: boolean;
  localDirs: ReadonlySet<string>;
  remoteDirs: ReadonlyMap<string, { id: number; version: string }>;
  baseDirs: ReadonlySet<string>;
}): FolderAction[] {
  const { mode, prune, localDirs, remoteDirs, baseDirs } = input;
  const out: FolderAction[] = [];
  const removals: FolderAction[] = [];
  for (const [rel, r] of remoteDirs) {
    if (localDirs.has(rel)) continue;
    const deletedLocally = baseDirs.has(rel);
    if (mode === 'sync' ? !deletedLocally : mode === 'pull') out.push({ op: 'mkdir-local', rel });
    else if (mode === 'sync' || prune) removals.push({ op: 'rmdir-remote', rel, id: r.id, version: r.version });
  }
  for (const rel of localDirs) {
    if (remoteDirs.has(rel)) continue;
    const deletedRemotely = baseDirs.has(rel);
    if (mode === 'sync' ? !deletedRemotely : mode === 'push') out.push({ op: 'mkdir-remote', rel });
    else if (mode === 'sync' || prune) removals.push({ op: 'rmdir-local', rel });
  }
  out.sort((a, b) => a.rel.localeCompare(b.rel));
  // Deepest first, so a parent is empty when its turn comes.
  removals.sort((a, b) => b.rel.split('/').length - a.rel.split('/').length || b.rel.localeCompare(a.rel));
  return [...out, ...removals];
}

export { parentOf };
