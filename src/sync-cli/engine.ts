// `kiln sync` / `push` / `pull`: runs the plan (plan.ts) against the folder (local.ts) and the account
// (api.ts), pass after pass until there is nothing left to do; then, for `sync` without --once, watches
// both sides (the folder through chokidar, the account through its change stream with resume) and
// reconciles again after each change. Every pass lists the account and scans the folder afresh, so a
// missed event, a restart or a kill -9 only ever costs one more pass.
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { limits } from '../limits.ts';
import { SyncApi, SyncRefusal, Stopped, Unreachable, type WireNode } from './api.ts';
import { LocalFolder, checksumOf, emptyState, lockFolder, readState, writeState, type SyncState } from './local.ts';
import { type Output, kb } from './output.ts';
import {
  type Action,
  type BaseFile,
  type FolderAction,
  type Mode,
  type RemoteFile,
  conflictName,
  parentOf,
  plan,
  planFolders,
  typeOf,
  withPending,
} from './plan.ts';

/** Exit codes (README "kiln sync"). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  /** Done, but some files were left: refused by the server, or (push/pull) changed on both sides. */
  leftOut: 3,
  unreachable: 4,
  refused: 5,
} as const;

export interface EngineOptions {
  dir: string;
  url: string;
  key: string;
  team: string | null;
  mode: Mode;
  prune: boolean;
  dryRun: boolean;
  watch: boolean;
  out: Output;
  signal: AbortSignal;
}

interface Remote {
  files: Map<string, RemoteFile>;
  dirs: Map<string, { id: number; version: string }>;
  /** Document names (lower case) → where they are: names are unique beyond a folder on Kiln. */
  siteNames: Map<string, string>;
}

/** Index pages may repeat in every folder (src/core/names.ts SIBLING_UNIQUE_NAMES). */
const SIBLING_NAMES = new Set(['index.html', 'index.htmlclay', 'submission-form.html', 'dashboard.html']);

function remoteOf(nodes: WireNode[]): Remote {
  const files = new Map<string, RemoteFile>();
  const dirs = new Map<string, { id: number; version: string }>();
  const siteNames = new Map<string, string>();
  for (const n of nodes) {
    const rel = (n.path ? `${n.path}/${n.name}` : n.name).normalize('NFC');
    const version = n.structureVersion ?? '';
    if (n.type === 'folder') dirs.set(rel, { id: n.id, version });
    else {
      files.set(rel, { id: n.id, sum: String(n.etag ?? n.checksum ?? ''), size: n.size, type: n.type, version });
      if (n.type === 'site') siteNames.set(n.name.toLowerCase(), rel);
    }
  }
  return { files, dirs, siteNames };
}

function unsafePath(rel: string): boolean {
  return (
    rel.startsWith('/') ||
    rel.includes('\\') ||
    rel.includes('\0') ||
    rel.split('/').some((p) => p === '' || p === '.' || p === '..')
  );
}

/** A file refused for good (until it changes): the server's words are shown, nothing is retried. */
function isFinalRefusal(err: SyncRefusal): boolean {
  if (err.status === 401) return false;
  if (err.status === 404 && err.code === 'node-not-found') return false;
  if (err.status === 409 && (err.code === 'node-changed' || err.code === 'account-changed')) return false;
  if (err.status === 412) return false;
  return err.status >= 400 && err.status < 500;
}

export class SyncEngine {
  private readonly o: EngineOptions;
  private readonly api: SyncApi;
  private readonly local: LocalFolder;
  private state!: SyncState;
  private readonly who = os.hostname().split('.')[0] || 'here';
  private leftOut = 0;
  private conflicts = 0;
  private changes = 0;
  private dirty = true;
  private wake: (() => void) | null = null;
  private stateTimer: NodeJS.Timeout | null = null;
  private stateWrite: Promise<void> = Promise.resolve();
  private folderIds = new Map<string, Promise<number>>();
  private reported = new Set<string>();
  private offline = false;
  /** Creates held back one pass (see pass()). */
  private deferred = new Set<string>();

  constructor(o: EngineOptions) {
    this.o = o;
    this.local = new LocalFolder(o.dir);
    this.api = new SyncApi({
      url: o.url,
      key: o.key,
      signal: o.signal,
      giveUpAfterMs: o.watch ? Number.POSITIVE_INFINITY : limits.syncClient.onceGiveUpMs,
      onRetry: (why, waitMs) => {
        if (!this.offline) {
          this.offline = true;
          this.o.out.emit(
            { event: 'retry', reason: why, waitMs },
            `… ${why}; retrying (changes are kept and sent later)`,
            {
              toErr: true,
            },
          );
        } else this.o.out.emit({ event: 'retry', reason: why, waitMs }, null);
      },
      onBack: () => {
        this.offline = false;
        this.o.out.emit({ event: 'online' }, '… reached the server again; catching up', { toErr: true });
      },
    });
  }

  get requests(): number {
    return this.api.requests;
  }

  async run(): Promise<number> {
    const out = this.o.out;
    let unlock: (() => Promise<void>) | null = null;
    if (!this.o.dryRun) {
      const lock = await lockFolder(this.local);
      if (typeof lock === 'number') {
        out.emit(
          { event: 'error', code: 'busy', pid: lock },
          `kiln: another kiln run (pid ${lock}) is syncing ${this.local.dir}`,
          { toErr: true },
        );
        return EXIT.usage;
      }
      unlock = lock;
    }
    try {
      return await this.runLocked();
    } finally {
      await unlock?.();
    }
  }

  private async runLocked(): Promise<number> {
    const out = this.o.out;
    try {
      this.state = (await readState(this.local)) ?? emptyState(this.o.url, this.o.team);
      this.state.url = this.o.url;
      this.state.team = this.o.team;
      try {
        await this.api.bind(this.o.team ?? undefined);
      } catch (err) {
        // The key, the team or the plan refused: nothing a retry changes.
        if (err instanceof SyncRefusal && err.status < 500) {
          out.emit(
            { event: 'error', status: err.status, code: err.code, msg: err.message },
            `kiln: ${err.message}${err.code ? ` (${err.code})` : ''}`,
            { toErr: true },
          );
          return EXIT.refused;
        }
        throw err;
      }
      if (this.state.accountId !== null && this.api.accountId !== null && this.state.accountId !== this.api.accountId) {
        out.emit(
          { event: 'error', code: 'account-changed' },
          `kiln: this folder was synced with another account (id ${this.state.accountId}); use a fresh folder.`,
          { toErr: true },
        );
        return EXIT.usage;
      }
      this.state.accountId = this.api.accountId;
      out.emit(
        {
          event: 'start',
          mode: this.o.mode,
          account: this.api.username,
          base: this.api.base,
          protocol: this.api.protocol,
        },
        null,
      );
      await this.catchUp(true);
      if (this.o.dryRun || !this.o.watch || this.o.signal.aborted) return this.finish();
      await this.watch();
      return this.finish();
    } catch (err) {
      await this.saveState(true).catch(() => {});
      if (err instanceof Stopped) return this.finish();
      if (err instanceof Unreachable) {
        out.emit({ event: 'error', code: 'unreachable', msg: err.message }, `kiln: gave up: ${err.message}`, {
          toErr: true,
        });
        return EXIT.unreachable;
      }
      if (err instanceof SyncRefusal) {
        out.emit(
          { event: 'error', status: err.status, code: err.code, msg: err.message },
          `kiln: ${err.message}${err.code ? ` (${err.code})` : ''}`,
          { toErr: true },
        );
        return [401, 402, 403].includes(err.status) ? EXIT.refused : EXIT.error;
      }
      out.emit({ event: 'error', msg: (err as Error).message }, `kiln: ${(err as Error).stack ?? err}`, {
        toErr: true,
      });
      return EXIT.error;
    }
  }

  private async finish(): Promise<number> {
    if (!this.o.dryRun && this.state) await this.saveState(true);
    const code = this.leftOut > 0 ? EXIT.leftOut : EXIT.ok;
    this.o.out.emit(
      {
        event: 'done',
        changes: this.changes,
        conflicts: this.conflicts,
        leftOut: this.leftOut,
        requests: this.api.requests,
      },
      this.o.watch && !this.o.dryRun
        ? 'stopped; the folder’s state is saved'
        : this.o.dryRun
          ? null
          : `${this.leftOut ? 'done' : 'in step'}: ${this.changes} change${this.changes === 1 ? '' : 's'}${this.conflicts ? `, ${this.conflicts} conflict${this.conflicts === 1 ? '' : 's'} (both copies kept)` : ''}${this.leftOut ? `, ${this.leftOut} file${this.leftOut === 1 ? '' : 's'} left out (see above)` : ''}`,
      { toErr: true },
    );
    return code;
  }

  /** Passes until one finds nothing to do (at most a few: a conflict copy is sent by the next one). */
  private async catchUp(first = false): Promise<void> {
    for (let i = 0; i < 5 && !this.o.signal.aborted; i++) {
      this.dirty = false;
      const did = await this.pass(first && i === 0);
      if ((did === 0 && !this.dirty) || this.o.dryRun) break;
    }
  }

  // ---------------------------------------------------------------- one pass

  private async pass(firstSync: boolean): Promise<number> {
    const o = this.o;
    const remote = remoteOf(await this.api.list());
    const scan = await this.local.scan();
    // What the folder leaves out is left alone on the account too (never fetched, never deleted), and a
    // path a host should never send (`..`, absolute, backslashes) is never written.
    for (const rel of [...remote.files.keys()])
      if (unsafePath(rel) || this.local.ignored(rel)) {
        if (unsafePath(rel))
          this.once(`unsafe:${rel}`, { event: 'skip', path: rel, reason: 'unsafe' }, `· ${rel}: unsafe path`);
        remote.files.delete(rel);
      }
    for (const rel of [...remote.dirs.keys()])
      if (unsafePath(rel) || this.local.ignored(rel, true)) remote.dirs.delete(rel);
    for (const l of scan.links)
      this.once(`link:${l}`, { event: 'skip', path: l, reason: 'symlink' }, `· ${l}: a symbolic link, not followed`);
    const pending = new Map(Object.entries(this.state.pending));
    const base = withPending(new Map(Object.entries(this.state.files)), pending, scan.files, remote.files);
    const skipped = new Map<string, string>();
    for (const [rel, s] of Object.entries(this.state.skipped)) {
      if (scan.files.get(rel)?.sum === s.sum) skipped.set(rel, s.sum);
      else delete this.state.skipped[rel];
    }
    this.state.files = Object.fromEntries(base);
    this.state.pending = {};
    const actions = plan({ mode: o.mode, prune: o.prune, local: scan.files, remote: remote.files, base, skipped });
    const folderActions = planFolders({
      mode: o.mode,
      prune: o.prune,
      localDirs: scan.dirs,
      remoteDirs: remote.dirs,
      baseDirs: new Set(this.state.dirs),
    });
    // Folders both have are synced.
    this.state.dirs = [...scan.dirs].filter((d) => remote.dirs.has(d));
    if (o.dryRun) {
      for (const a of actions) this.describe(a, true);
      for (const f of folderActions) this.describeFolder(f, true);
      this.leftOut += actions.filter((a) => a.op === 'both-changed').length;
      return actions.length + folderActions.length;
    }
    // A scan is not a snapshot: a file moved while it runs can show at both names (its old one read
    // before the rename, its new one after) or at neither (the old folder listed before, the new one not
    // yet). So a new file with the bytes of a synced file still there (a copy, or such a move), and a
    // synced file gone from the folder (a delete, or such a move), are sent one pass later: by then a move
    // shows as one, and goes as a move (the document keeps its versions).
    const stillThere = new Set<string>();
    for (const [rel, b] of base) if (scan.files.has(rel)) stillThere.add(b.local);
    const keyOf = (a: Action): string | null => {
      if (a.op === 'upload' && a.id === undefined && stillThere.has(a.local)) return `new\n${a.rel}\n${a.local}`;
      if (a.op === 'remote-delete' && base.has(a.rel)) return `gone\n${a.rel}\n${a.remote}`;
      return null;
    };
    const deferred = new Set<string>();
    for (const a of actions) {
      const key = keyOf(a);
      if (key === null || this.deferred.has(key)) continue;
      deferred.add(key);
      this.dirty = true;
    }
    this.deferred = deferred;
    const work = actions.filter((a) => {
      if (a.op === 'record' || a.op === 'forget') return false;
      const key = keyOf(a);
      return key === null || !deferred.has(key);
    });
    // What each transfer is about to make both sides hold (see plan.ts withPending).
    for (const a of work) {
      if (a.op === 'upload')
        this.state.pending[a.rel] = { to: 'remote', id: a.id ?? null, local: a.local, remote: a.local };
      if (a.op === 'download' || a.op === 'conflict')
        this.state.pending[a.rel] = { to: 'local', id: a.id, local: a.remote, remote: a.remote };
    }
    for (const [rel, d] of remote.dirs) this.folderIds.set(rel, Promise.resolve(d.id));
    if (work.length) await this.saveState();

    const transfers = work.filter((a) => a.op === 'upload' || a.op === 'download' || a.op === 'conflict');
    if (firstSync)
      o.out.startBar(
        transfers.length,
        transfers.reduce((n, a) => n + ((a as { size: number }).size ?? 0), 0),
      );
    let done = 0;
    const runOne = async (a: Action) => {
      if (o.signal.aborted) return;
      try {
        if (await this.apply(a, remote)) done++;
      } catch (err) {
        if (err instanceof SyncRefusal && err.status === 401) throw err;
        if (err instanceof Stopped || err instanceof Unreachable) throw err;
        if (err instanceof SyncRefusal && isFinalRefusal(err)) this.refused(a, err);
        else if (err instanceof SyncRefusal)
          this.dirty = true; // changed meanwhile: the next pass sees it
        else throw err;
      } finally {
        if (a.op === 'upload' || a.op === 'download' || a.op === 'conflict') {
          delete this.state.pending[a.rel];
          o.out.tick(a.size);
        }
        this.saveSoon();
      }
    };
    // Moves one by one (paths depend on each other), transfers a few at a time, deletes last.
    for (const a of work) if (a.op === 'remote-move' || a.op === 'local-move') await runOne(a);
    await pool(transfers, limits.syncClient.transfers, runOne);
    for (const a of work)
      if (a.op === 'remote-delete' || a.op === 'local-delete' || a.op === 'both-changed') await runOne(a);
    for (const a of actions) {
      if (a.op === 'record') this.state.files[a.rel] = a.base;
      if (a.op === 'forget') delete this.state.files[a.rel];
    }
    o.out.endBar();
    for (const f of folderActions) {
      if (o.signal.aborted) break;
      if (await this.applyFolder(f).catch((err) => this.folderFailed(f, err))) done++;
    }
    await this.saveState();
    return done;
  }

  private refused(a: Action, err: SyncRefusal) {
    const rel = 'rel' in a ? a.rel : a.to;
    this.leftOut++;
    if (a.op === 'upload') this.state.skipped[rel] = { sum: a.local, msg: err.message };
    this.o.out.emit(
      { event: 'skip', path: rel, op: a.op, status: err.status, code: err.code, msg: err.message },
      `! skipped ${rel}: ${err.message}`,
    );
  }

  private once(key: string, e: { event: string; [k: string]: unknown }, text: string) {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.o.out.emit(e, text, { verboseOnly: true });
  }

  /** Runs one action; true when it changed something. */
  private async apply(a: Action, remote: Remote): Promise<boolean> {
    const o = this.o;
    const files = this.state.files;
    switch (a.op) {
      case 'upload': {
        const bytes = await this.local.read(a.rel).catch(() => null);
        if (!bytes || checksumOf(bytes) !== a.local) return this.again();
        const type = typeOf(a.rel);
        if (a.id !== undefined) {
          try {
            const r = await this.api.write(a.id, type, bytes, a.ifMatch ?? '');
            files[a.rel] = { id: a.id, local: a.local, remote: r.etag };
          } catch (err) {
            if (!(err instanceof SyncRefusal) || err.status !== 412) throw err;
            return this.rejected(a, a.id);
          }
          this.changed({ event: 'upload', path: a.rel, bytes: bytes.length }, `↑ ${a.rel} (${kb(bytes.length)})`);
          return true;
        }
        const leaf = a.rel.slice(a.rel.lastIndexOf('/') + 1);
        const elsewhere =
          type === 'site' && !SIBLING_NAMES.has(leaf.toLowerCase()) && remote.siteNames.get(leaf.toLowerCase());
        if (elsewhere && elsewhere !== a.rel)
          throw new SyncRefusal(
            409,
            'name-conflict',
            `a document named "${leaf}" is already at "${elsewhere}" (document names are unique beyond their folder)`,
          );
        const parentId = await this.remoteFolder(parentOf(a.rel));
        const node = await this.api.create(type, leaf, parentId, bytes);
        const at = (node.path ? `${node.path}/${node.name}` : node.name).normalize('NFC');
        if (at !== a.rel) throw new SyncRefusal(409, 'name-conflict', `the server put it at "${at}"`);
        files[a.rel] = { id: node.id, local: a.local, remote: String(node.etag ?? node.checksum) };
        this.changed(
          { event: 'upload', path: a.rel, bytes: bytes.length, created: true },
          `↑ ${a.rel} (new, ${kb(bytes.length)})`,
        );
        return true;
      }
      case 'download':
        return this.download(a.rel, a.id, a.expectLocal, a.trash);
      case 'conflict': {
        if ((await this.local.current(a.rel)) !== a.expectLocal) return this.again();
        return this.keepBoth(a.rel, a.id);
      }
      case 'local-move': {
        if (!(await this.local.move(a.from, a.to))) return this.again();
        this.moveBase(a.from, a.to);
        this.changed(
          { event: 'move', from: a.from, path: a.to, side: 'local' },
          `→ ${a.from} → ${a.to} (moved on Kiln)`,
        );
        return true;
      }
      case 'remote-move': {
        const toParent = parentOf(a.to);
        const leaf = a.to.slice(toParent ? toParent.length + 1 : 0);
        if (parentOf(a.from) === toParent) await this.api.rename(a.id, leaf, a.version);
        else await this.api.move(a.id, await this.remoteFolder(toParent), leaf, a.version);
        this.moveBase(a.from, a.to);
        this.changed({ event: 'move', from: a.from, path: a.to, side: 'remote' }, `→ ${a.from} → ${a.to} (on Kiln)`);
        return true;
      }
      case 'remote-delete': {
        try {
          await this.api.remove(a.id, a.version);
        } catch (err) {
          if (!(err instanceof SyncRefusal && err.status === 404)) throw err;
        }
        delete files[a.rel];
        this.changed({ event: 'delete', path: a.rel, side: 'remote' }, `✕ ${a.rel} (into Kiln’s trash)`);
        return true;
      }
      case 'local-delete': {
        if ((await this.local.current(a.rel)) !== a.expectLocal) return this.again();
        const where = await this.local.trash(a.rel);
        delete files[a.rel];
        this.changed({ event: 'delete', path: a.rel, side: 'local', trash: where }, `✕ ${a.rel} (into ${where})`);
        return true;
      }
      case 'both-changed':
        this.leftOut++;
        o.out.emit(
          { event: 'conflict', path: a.rel, kept: null },
          `! ${a.rel} changed on both sides since the last sync: left as it is (run kiln sync to keep both)`,
        );
        return false;
      default:
        return false;
    }
  }

  /** A conditional write refused: either our own earlier write (an answer lost on the way), or someone
   *  else's change: sync keeps both, push leaves it. */
  private async rejected(a: Extract<Action, { op: 'upload' }>, id: number): Promise<boolean> {
    const now = await this.api.content(id).catch(() => null);
    if (now && now.sum === a.local) {
      this.state.files[a.rel] = { id, local: a.local, remote: now.sum };
      return true;
    }
    if (this.o.mode === 'sync') return this.keepBoth(a.rel, id);
    this.leftOut++;
    this.o.out.emit(
      { event: 'conflict', path: a.rel, kept: null },
      `! ${a.rel} changed on Kiln meanwhile: not overwritten (run kiln sync to keep both)`,
    );
    return false;
  }

  /** The local copy moves aside under a conflict name (sent as a new file by the next pass), and the
   *  server's copy comes down in its place. */
  private async keepBoth(rel: string, id: number): Promise<boolean> {
    const files = await this.local.scan().then((s) => s.files);
    const aside = conflictName(rel, this.who, new Date(), (p) => files.has(p));
    if (!(await this.local.move(rel, aside))) return this.again();
    this.conflicts++;
    this.o.out.emit(
      { event: 'conflict', path: rel, kept: aside },
      `! conflict: ${rel} changed on both sides; Kiln’s copy is at ${rel}, yours is kept as ${aside}`,
    );
    delete this.state.files[rel];
    return this.download(rel, id, null, false);
  }

  private async download(rel: string, id: number, expectLocal: string | null, trash: boolean): Promise<boolean> {
    const got = await this.api.content(id);
    let expect = expectLocal;
    if (trash && expect !== null) {
      if ((await this.local.current(rel)) !== expect) return this.again();
      await this.local.trash(rel);
      expect = null;
    }
    if (!(await this.local.writeAtomic(rel, got.bytes, expect))) return this.again();
    this.state.files[rel] = { id, local: checksumOf(got.bytes), remote: got.sum };
    this.changed({ event: 'download', path: rel, bytes: got.bytes.length }, `↓ ${rel} (${kb(got.bytes.length)})`);
    return true;
  }

  private moveBase(from: string, to: string) {
    const b = this.state.files[from];
    if (!b) return;
    delete this.state.files[from];
    this.state.files[to] = b;
  }

  private again(): boolean {
    this.dirty = true;
    return false;
  }

  private changed(e: { event: string; [k: string]: unknown }, text: string) {
    this.changes++;
    this.o.out.emit(e, text);
  }

  /** The id of a folder on the server, created (with its parents) when missing. */
  private remoteFolder(rel: string): Promise<number> {
    if (!rel) return Promise.resolve(0);
    const known = this.folderIds.get(rel);
    if (known) return known;
    const made = (async () => {
      const parent = await this.remoteFolder(parentOf(rel));
      const node = await this.api.create('folder', rel.slice(rel.lastIndexOf('/') + 1), parent);
      return node.id;
    })();
    this.folderIds.set(rel, made);
    made.catch(() => this.folderIds.delete(rel));
    return made;
  }

  private async applyFolder(f: FolderAction): Promise<boolean> {
    switch (f.op) {
      case 'mkdir-local':
        await this.local.mkdirs(this.local.abs(f.rel));
        this.o.out.emit({ event: 'mkdir', path: f.rel, side: 'local' }, null);
        return true;
      case 'mkdir-remote':
        await this.remoteFolder(f.rel);
        this.o.out.emit({ event: 'mkdir', path: f.rel, side: 'remote' }, null);
        return true;
      case 'rmdir-local':
        if (!(await this.local.rmdirIfEmpty(f.rel))) return false;
        this.o.out.emit({ event: 'rmdir', path: f.rel, side: 'local' }, `✕ ${f.rel}/`);
        return true;
      case 'rmdir-remote': {
        // Its version changed with every file the pass moved out of it: read it again.
        const fresh = remoteOf(await this.api.list());
        const d = fresh.dirs.get(f.rel);
        if (!d || [...fresh.files.keys(), ...fresh.dirs.keys()].some((p) => p.startsWith(`${f.rel}/`))) return false;
        await this.api.remove(d.id, d.version);
        this.folderIds.delete(f.rel);
        this.o.out.emit({ event: 'rmdir', path: f.rel, side: 'remote' }, `✕ ${f.rel}/ (on Kiln)`);
        return true;
      }
    }
  }

  private folderFailed(f: FolderAction, err: unknown): false {
    if (err instanceof Stopped || err instanceof Unreachable) throw err;
    if (err instanceof SyncRefusal && err.status === 401) throw err;
    this.o.out.emit(
      { event: 'skip', path: f.rel, op: f.op, msg: (err as Error).message },
      `! ${f.rel}/: ${(err as Error).message}`,
      { verboseOnly: true },
    );
    return false;
  }

  private describe(a: Action, dry: boolean) {
    const w = dry ? 'would ' : '';
    const texts: Record<Action['op'], () => string | null> = {
      upload: () => `${w}upload ${(a as { rel: string }).rel}`,
      download: () => `${w}download ${(a as { rel: string }).rel}`,
      conflict: () => `${w}keep both copies of ${(a as { rel: string }).rel} (changed on both sides)`,
      'remote-move': () => `${w}move ${(a as { from: string }).from} → ${(a as { to: string }).to} on Kiln`,
      'local-move': () => `${w}move ${(a as { from: string }).from} → ${(a as { to: string }).to} here`,
      'remote-delete': () => `${w}delete ${(a as { rel: string }).rel} on Kiln (into its trash)`,
      'local-delete': () => `${w}delete ${(a as { rel: string }).rel} here (into .kiln/trash)`,
      record: () => null,
      forget: () => null,
      'both-changed': () => `${(a as { rel: string }).rel} changed on both sides: would be left as it is`,
    };
    const text = texts[a.op]();
    if (text === null) return;
    const { op, ...rest } = a as Action & Record<string, unknown>;
    this.o.out.emit({ event: 'plan', op, ...rest }, text);
  }

  private describeFolder(f: FolderAction, dry: boolean) {
    const w = dry ? 'would ' : '';
    const side = f.op.endsWith('local') ? 'here' : 'on Kiln';
    this.o.out.emit(
      { event: 'plan', op: f.op, path: f.rel },
      `${w}${f.op.startsWith('mkdir') ? 'create' : 'remove'} folder ${f.rel}/ ${side}`,
    );
  }

  // ---------------------------------------------------------------- state

  /** Writes the state soon (at most every few hundred ms while a pass runs). */
  private saveSoon() {
    if (this.stateTimer) return;
    this.stateTimer = setTimeout(() => {
      this.stateTimer = null;
      void this.saveState().catch(() => {});
    }, 200);
  }

  private saveState(durable = false): Promise<void> {
    if (this.stateTimer) {
      clearTimeout(this.stateTimer);
      this.stateTimer = null;
    }
    const snapshot = JSON.parse(JSON.stringify(this.state)) as SyncState;
    // A failed write (a full disk) fails its caller, never the writes after it.
    this.stateWrite = this.stateWrite.catch(() => {}).then(() => writeState(this.local, snapshot, durable));
    return this.stateWrite;
  }

  // ---------------------------------------------------------------- watching

  private poke = () => {
    this.dirty = true;
    this.wake?.();
  };

  private async watch(): Promise<void> {
    const o = this.o;
    const { watch } = await import('chokidar');
    const dir = this.local.dir;
    const watcher = watch(dir, {
      ignoreInitial: true,
      followSymlinks: false,
      ignored: (p: string, stats?: { isDirectory(): boolean }) => {
        // Only paths inside the folder are ours to judge.
        if (p === dir || !p.startsWith(dir + path.sep)) return false;
        const rel = p
          .slice(dir.length + 1)
          .split(path.sep)
          .join('/')
          .normalize('NFC');
        return this.local.ignored(rel, stats?.isDirectory() ?? false) || this.local.ignored(`${rel}/`, true);
      },
    });
    watcher.on('all', () => this.poke());
    watcher.on('error', (err) =>
      o.out.emit({ event: 'warning', msg: String(err) }, `… watcher: ${err}`, { toErr: true }),
    );
    const streamDone = this.followStream();
    const timer = setInterval(this.poke, limits.syncClient.fullPassMs);
    o.out.emit(
      { event: 'watching', path: dir },
      `watching ${dir} and ${this.api.username || 'the account'} (Ctrl-C stops)`,
      {
        toErr: true,
      },
    );
    try {
      while (!o.signal.aborted) {
        if (!this.dirty) {
          await new Promise<void>((resolve) => {
            this.wake = resolve;
            o.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          this.wake = null;
          if (o.signal.aborted) break;
          // Let a burst of saves settle into one pass.
          await sleep(limits.syncClient.debounceMs);
        }
        try {
          await this.catchUp();
        } catch (err) {
          if (err instanceof Stopped) break;
          // A refused key ends the run; anything else (a file busy, a refusal mid-pass) is told and tried
          // again by a later pass.
          if (err instanceof SyncRefusal && (err.status === 401 || err.status === 402 || err.status === 403)) throw err;
          o.out.emit({ event: 'warning', msg: (err as Error).message }, `… ${(err as Error).message}; trying again`, {
            toErr: true,
          });
          this.dirty = true;
          await sleep(limits.syncClient.backoffMaxMs, undefined, { signal: o.signal }).catch(() => {});
        }
      }
    } finally {
      clearInterval(timer);
      await watcher.close();
      await streamDone;
    }
  }

  /** The account's change stream: every change (and every reconnect, which may have missed some) asks
   *  for a pass. Resumes with Last-Event-ID; a `resync` frame also asks for a pass. */
  private async followStream(): Promise<void> {
    const o = this.o;
    let wait: number = limits.syncClient.backoffMs;
    while (!o.signal.aborted) {
      const ctl = new AbortController();
      const onAbort = () => ctl.abort();
      o.signal.addEventListener('abort', onAbort, { once: true });
      let silence: NodeJS.Timeout | undefined;
      const heard = () => {
        clearTimeout(silence);
        silence = setTimeout(() => ctl.abort(), limits.syncClient.streamSilenceMs);
      };
      try {
        const headers = this.api.headers({ accept: 'text/event-stream' });
        if (this.state.lastEventId) headers['last-event-id'] = this.state.lastEventId;
        const res = await fetch(`${this.api.origin}${this.api.base}/stream`, { headers, signal: ctl.signal });
        if (res.status === 401 || res.status === 403) {
          o.out.emit(
            { event: 'error', status: res.status },
            `kiln: the change stream refused the key (${res.status})`,
            {
              toErr: true,
            },
          );
          return;
        }
        if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
        heard();
        wait = limits.syncClient.backoffMs;
        this.poke(); // whatever happened while it was closed
        let buf = '';
        const decoder = new TextDecoder();
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          heard();
          buf += decoder.decode(chunk, { stream: true });
          let end = buf.indexOf('\n\n');
          while (end >= 0) {
            this.frame(buf.slice(0, end));
            buf = buf.slice(end + 2);
            end = buf.indexOf('\n\n');
          }
        }
      } catch {
        // Closed or unreachable: open again after a while.
      } finally {
        clearTimeout(silence);
        o.signal.removeEventListener('abort', onAbort);
      }
      if (o.signal.aborted) return;
      await sleep(wait, undefined, { signal: o.signal }).catch(() => {});
      wait = Math.min(wait * 2, limits.syncClient.backoffMaxMs);
    }
  }

  private frame(text: string) {
    let id: string | undefined;
    const data: string[] = [];
    for (const line of text.split('\n')) {
      if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (id) this.state.lastEventId = id;
    if (!data.length) return;
    let msg: { type?: string } = {};
    try {
      msg = JSON.parse(data.join('\n'));
    } catch {
      return;
    }
    const type = msg.type ?? 'live-sync';
    if (type.startsWith('node-') || type === 'resync' || type === 'account-changed') this.poke();
  }
}

async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async () => {
    while (next < items.length && failed === null) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  if (failed !== null) throw failed;
}

export type { BaseFile };
