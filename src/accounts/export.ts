// Export and import of a whole tree as one zip.
//
// Export streams: documents as stored, uploads byte for byte from the blob store, optionally every
// version of every document (`.kiln/versions/<path>/<n>.html`), and `.kiln/manifest.json` (paths,
// types, checksums, sizes, visibility, app flags). Each entry's bytes are read only when the zip
// writer reaches it, so memory stays flat however large the tree.
//
// Import takes such a zip, or any zip of HTML files and assets (a Hyperclay Local folder, say): every
// declared size is checked first (413 `too-large` naming the entry; see the import section), then every
// name, and a name already taken (in the tree, or a document name elsewhere in Kiln) refuses the whole
// import with the list (409 `name-conflict`, `extra.clashes`); then uploads go to the blob store and the
// whole tree is written in one transaction: all or nothing. An export's versions come along: each
// document is written version by version, oldest first, so its history reads as it did where it was made.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomToken } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { DAY } from '../limits.ts';
// The zip packages are imported by an export or an import (below), not at start: every server loads
// this module (for sweepLastExports), and few ever export or import.
import type yauzl from 'yauzl';
import type { Services } from '../services.ts';
import { contextOf, type Ctx } from '../context.ts';
import { SYSTEM } from '../access/caller.ts';
import { KilnError, badRequest, tooLarge } from '../errors.ts';
import { limits } from '../limits.ts';
import { isDocumentName, isGlobalDocumentName, nodeNameProblem, splitPath } from '../core/names.ts';
import { createIn, isUntouchedStarter, listTree, nameConflict, trashIn } from '../nodes/tree.ts';
import { childPathOf, findByPath } from '../nodes/find.ts';
import type { NodeRow, Plan } from '../store/schema.ts';
import { documentContent } from '../nodes/serve.ts';
import { inTransaction } from '../store/transaction.ts';
import { writeDocument } from '../save/pipeline.ts';
import { listVersions, versionContent } from '../save/history.ts';
import { insertUpload, storeBytes } from '../uploads/upload.ts';
import { childNamed, siteNameClash, updateNode } from '../store/nodes.ts';
import { assertCanEnableApp, assertUploadSize, loadPlanAccount, effectivePlan } from '../billing/plans.ts';

const MANIFEST = '.kiln/manifest.json';
const VERSIONS = '.kiln/versions/';

export interface ManifestEntry {
  path: string;
  type: NodeRow['type'];
  checksum: string | null;
  size: number;
  visibility: 'public' | 'private';
  app: boolean;
}

/** A Readable that produces `load()`'s bytes when first read (so the zip holds one entry at a time). */
function lazy(load: () => Promise<Buffer | Readable | null>): Readable {
  let started = false;
  const out = new Readable({
    read() {
      if (started) return;
      started = true;
      load().then(
        (b) => {
          if (b === null) out.push(null);
          else if (Buffer.isBuffer(b)) {
            out.push(b);
            out.push(null);
          } else
            b.on('data', (c) => out.push(c))
              .on('end', () => out.push(null))
              .on('error', (e) => out.destroy(e));
        },
        (err) => out.destroy(err),
      );
    },
  });
  return out;
}

/** The tree of `ownerId` as a zip stream, when the caller may change that tree (listTree). */
export async function exportTree(ctx: Ctx, input: { ownerId: number; versions?: boolean }): Promise<Readable> {
  const nodes = await listTree(ctx, { ownerId: input.ownerId });
  const { ZipFile } = (await import('yazl')).default;
  const zip = new ZipFile();
  const manifest: ManifestEntry[] = [];
  const mtime = (n: NodeRow) => new Date(n.modified_at);
  for (const n of nodes) {
    const path = childPathOf(n);
    manifest.push({
      path,
      type: n.type,
      checksum: n.checksum,
      size: n.size,
      visibility: n.visibility,
      app: n.enable_signups === 1,
    });
    if (n.type === 'folder') zip.addEmptyDirectory(path, { mtime: mtime(n) });
    else if (n.type === 'site')
      zip.addReadStream(
        lazy(async () => (await documentContent(ctx, n))?.bytes ?? Buffer.alloc(0)),
        path,
        { mtime: mtime(n) },
      );
    else if (n.blob_sha256) {
      const sha = n.blob_sha256;
      zip.addReadStream(
        lazy(async () => (await ctx.blobs.stream(sha)) ?? Buffer.alloc(0)),
        path,
        { mtime: mtime(n) },
      );
    }
    if (input.versions && n.type === 'site') {
      for (const v of await listVersions(ctx.database.db, n.id)) {
        zip.addReadStream(
          lazy(async () => (await versionContent(ctx.database.db, v.id)).bytes),
          `${VERSIONS}${path}/${v.backupNumber}.html`,
          { mtime: new Date(v.createdAt) },
        );
      }
    }
  }
  zip.addBuffer(
    Buffer.from(
      JSON.stringify(
        { format: 'kiln-export', version: 1, exportedAt: ctx.clock.now().toISOString(), nodes: manifest },
        null,
        2,
      ),
    ),
    MANIFEST,
  );
  zip.end();
  return zip.outputStream as Readable;
}

// ------------------------------------------------------------------ import
//
// A zip is hostile until read: a few hundred KB can declare gigabytes (a zip bomb), and a header can lie
// about an entry's size. So the central directory is read first (names and declared sizes only) and
// every declared size is checked before one byte is unpacked (src/limits.ts `zipImport`); then entries
// are unpacked one at a time, each counted as it inflates and stopped as soon as it passes what it
// declared. The zip itself is read from disk by random access, never whole in memory.

/** One file of the zip, as its central directory declares it. */
interface ImportFile {
  entry: yauzl.Entry;
  path: string;
  parts: string[];
  type: 'site' | 'upload';
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`;

const damaged = (e: Error) =>
  e instanceof KilnError ? e : badRequest(`The zip is damaged: ${e.message}`, 'invalid-body');

async function openZip(file: string): Promise<yauzl.ZipFile> {
  const unzip = (await import('yauzl')).default;
  return new Promise((resolve, reject) => {
    // autoClose off: entries are opened after the directory is read; the caller closes.
    unzip.open(
      file,
      { lazyEntries: true, autoClose: false, strictFileNames: false, validateEntrySizes: true },
      (err, zip) =>
        err || !zip ? reject(badRequest('That file is not a zip archive.', 'invalid-body')) : resolve(zip),
    );
  });
}

/** The central directory's entries (no entry is unpacked), at most `zipImport.entries`. */
function listEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  const max = limits.zipImport.entries;
  if (zip.entryCount > max) return Promise.reject(tooLarge(`A zip may hold at most ${max} entries.`));
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('error', (e: Error) => reject(damaged(e)));
    zip.on('end', () => resolve(entries));
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.readEntry();
  });
}

/** An entry's bytes, refused (413 naming it) the moment it unpacks to more than it declared. yauzl's
 *  own check (`validateEntrySizes`) says the same; counting here does not depend on it. */
function unpack(zip: yauzl.ZipFile, entry: yauzl.Entry, name: string): Promise<Buffer> {
  const declared = entry.uncompressedSize;
  const lied = () =>
    tooLarge(`${name} unpacks to more than the ${mb(declared)} its header declares; nothing was imported.`);
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) return reject(damaged(err ?? new Error('unreadable entry')));
      const chunks: Buffer[] = [];
      let count = 0;
      let done = false;
      const stop = (e: Error) => {
        if (done) return;
        done = true;
        stream.destroy();
        reject(e);
      };
      stream.on('data', (c: Buffer) => {
        count += c.length;
        if (count > declared) stop(lied());
        else chunks.push(c);
      });
      stream.on('error', (e: Error) => stop(/too many bytes/.test(e.message) ? lied() : damaged(e)));
      stream.on('end', () => {
        if (done) return;
        done = true;
        resolve(Buffer.concat(chunks, count));
      });
    });
  });
}

/** An earlier version of a document in an export: `.kiln/versions/<path>/<backup number>.html`. */
interface ImportVersion {
  entry: yauzl.Entry;
  path: string;
  n: number;
}

function versionEntry(entry: yauzl.Entry, name: string): ImportVersion | null {
  const m = /^(.+)\/(\d{1,9})\.html$/.exec(name.slice(VERSIONS.length));
  return m ? { entry, path: m[1], n: Number(m[2]) } : null;
}

/** Refuses, before anything is unpacked, an entry larger than its own limit, and a zip whose entries
 *  together pass `zipImport.totalBytes`. No compression ratio is refused: what an entry may unpack to is
 *  bounded by its declared size (checked here against the plan) and counted as it unpacks, so a sparse
 *  image or a mostly empty database file in Kiln's own export imports like any other. */
function checkDeclaredSizes(
  s: Services,
  plan: Plan,
  files: ImportFile[],
  versions: ImportVersion[],
  manifest: yauzl.Entry | undefined,
): void {
  const { totalBytes, manifestBytes } = limits.zipImport;
  let total = 0;
  const sized: Array<{ name: string; entry: yauzl.Entry; max?: number }> = files.map((f) => ({
    name: f.path,
    entry: f.entry,
    max: f.type === 'site' ? limits.documentSize : undefined,
  }));
  for (const v of versions) sized.push({ name: v.entry.fileName, entry: v.entry, max: limits.documentSize });
  if (manifest) sized.push({ name: MANIFEST, entry: manifest, max: manifestBytes });
  for (const { name, entry, max } of sized) {
    const size = entry.uncompressedSize;
    if (max === undefined) {
      try {
        assertUploadSize(s, plan, size);
      } catch (e) {
        if (!(e instanceof KilnError)) throw e;
        throw new KilnError(413, `${name}: ${e.message} Nothing was imported.`, 'too-large', {
          ...e.extra,
          entry: name,
        });
      }
    } else if (size > max)
      throw tooLarge(
        `${name} unpacks to ${mb(size)}; a ${name === MANIFEST ? 'manifest' : 'document'} may be at most ${mb(max)}. Nothing was imported.`,
      );
    total += size;
    if (total > totalBytes)
      throw tooLarge(
        `The zip unpacks to more than ${mb(totalBytes)} (at ${name}); an import takes at most that. Nothing was imported.`,
      );
  }
}

export interface ImportResult {
  documents: number;
  uploads: number;
  folders: number;
  /** Earlier versions of the documents, from an export made with its versions. */
  versions: number;
}

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** What an import brought, in words (the page's message and the command's line). */
export function importedInWords(r: ImportResult): string {
  const history = r.versions ? ` (with ${count(r.versions, 'earlier version')})` : '';
  return `${count(r.documents, 'document')}${history}, ${count(r.uploads, 'file')} and ${count(r.folders, 'folder')}`;
}

/** Imports the zip at `file` into the tree of `ownerId`: all of it, or nothing (see the head of this file). */
export async function importTree(
  ctx: Ctx,
  input: { ownerId: number; file: string; folder?: string },
): Promise<ImportResult> {
  const { ownerId } = input;
  await listTree(ctx, { ownerId }); // the caller may change this tree
  // Recorded as made by the caller, or (Kiln itself, from the shell) by the tree's owner.
  const actorId = ctx.caller.actor?.accountId ?? ownerId;
  const plan = effectivePlan(await loadPlanAccount(ctx, ctx.database.db, ownerId));
  const folder = (input.folder ?? '').trim().replace(/^\/+|\/+$/g, '');
  let into: string[] = [];
  if (folder) {
    const parts = splitPath(folder);
    if (typeof parts === 'string') throw badRequest(`The folder to import into: ${parts}`, 'invalid-path');
    into = parts.map((p) => p.normalize('NFC'));
    const problem = into.map((p) => nodeNameProblem(p, 'folder')).find(Boolean);
    if (problem) throw badRequest(`The folder to import into: ${problem}`, 'invalid-name');
  }
  const zip = await openZip(input.file);
  try {
    return await importEntries(ctx, actorId, ownerId, plan, zip, into);
  } finally {
    zip.close();
  }
}

/** What is taken among the names the zip's files would get under the folder `into` (paths relative
 *  to the account): clashes in words, and the untouched starters that give way. */
async function clashesOf(s: Services, ownerId: number, files: ImportFile[], into: string[]) {
  const clashes: string[] = [];
  /** Untouched starters (a new account's index.html, say) that give way to imported documents of their names. */
  const giveWay: NodeRow[] = [];
  for (const f of files) {
    const name = f.parts[f.parts.length - 1];
    const where = [...into, ...f.parts].join('/');
    const existing = await findByPath(s, ownerId, where);
    if (existing && f.type === 'site' && (await isUntouchedStarter(s, existing))) giveWay.push(existing);
    else if (existing) clashes.push(where);
    else if (f.type === 'site' && isGlobalDocumentName(name)) {
      const clash = await siteNameClash(s.database.db, ownerId, name);
      if (clash)
        clashes.push(
          clash.owner_id === ownerId
            ? `${where} (you have a document of that name in ${clash.path ? `"${clash.path}"` : 'the top level'})`
            : `${where} (another account has a document of that name)`,
        );
    }
  }
  return { clashes, giveWay };
}

/** A new top-level folder name under which nothing of the zip would clash, or undefined. */
async function freeFolderFor(s: Services, ownerId: number, files: ImportFile[]): Promise<string | undefined> {
  for (let n = 1; n <= 20; n++) {
    const name = n === 1 ? 'imported' : `imported-${n}`;
    if (await childNamed(s.database.db, ownerId, 0, name)) continue;
    return (await clashesOf(s, ownerId, files, [name])).clashes.length ? undefined : name;
  }
  return undefined;
}

async function importEntries(
  s: Services,
  actorId: number,
  ownerId: number,
  plan: Plan,
  zip: yauzl.ZipFile,
  into: string[],
): Promise<ImportResult> {
  const files: ImportFile[] = [];
  const folders: string[][] = [];
  let versions: ImportVersion[] = [];
  let manifestEntry: yauzl.Entry | undefined;
  for (const entry of await listEntries(zip)) {
    const name = entry.fileName.replace(/\\/g, '/').replace(/^\/+/, '');
    if (name.startsWith(VERSIONS)) {
      const v = versionEntry(entry, name);
      if (v) versions.push(v);
      continue;
    }
    const skip = name.startsWith('__MACOSX/') || /(^|\/)(\.DS_Store|Thumbs\.db)$/.test(name);
    if (skip) continue;
    if (name === MANIFEST) {
      manifestEntry = entry;
      continue;
    }
    const parts = splitPath(name.endsWith('/') ? name.slice(0, -1) : name);
    if (typeof parts === 'string') throw badRequest(`${name}: ${parts}`, 'invalid-path');
    if (name.endsWith('/')) folders.push(parts);
    else
      files.push({
        entry,
        parts,
        path: parts.join('/'),
        type: isDocumentName(parts[parts.length - 1]) ? 'site' : 'upload',
      });
  }
  if (files.length === 0) throw badRequest('The zip holds no files.', 'invalid-body');
  // Versions of documents the zip holds, oldest first; those of anything else are not imported.
  const sites = new Set(files.filter((f) => f.type === 'site').map((f) => f.path));
  versions = versions.filter((v) => sites.has(v.path)).sort((a, b) => a.n - b.n);
  checkDeclaredSizes(s, plan, files, versions, manifestEntry);
  // Every name next: the rules, then what is taken.
  for (const f of files) {
    const problem =
      nodeNameProblem(f.parts[f.parts.length - 1], f.type) ??
      f.parts
        .slice(0, -1)
        .map((p) => nodeNameProblem(p, 'folder'))
        .find(Boolean);
    if (problem) throw badRequest(`${f.path}: ${problem}`, 'invalid-name');
  }
  const { clashes, giveWay } = await clashesOf(s, ownerId, files, into);
  if (clashes.length) {
    // The one-click way out, offered only when it works: a new folder under which nothing clashes.
    const intoFolder = into.length ? undefined : await freeFolderFor(s, ownerId, files);
    throw new KilnError(
      409,
      `Nothing was imported: ${clashes.length} name${clashes.length === 1 ? ' is' : 's are'} taken: ${clashes.slice(0, 20).join(', ')}${clashes.length > 20 ? ' …' : ''}. Rename or delete ${clashes.length === 1 ? 'it' : 'them'} first${intoFolder ? `, or import into a new folder ("${intoFolder}" is free, and nothing in it would clash)` : ''}.`,
      'name-conflict',
      { clashes, ...(intoFolder ? { intoFolder } : {}) },
    );
  }
  // Unpacked one at a time: the manifest and the documents (each at most 5 MB) first, so that a lying
  // document stops the import before any upload is stored.
  let manifest: ManifestEntry[] = [];
  if (manifestEntry) {
    try {
      const m = JSON.parse((await unpack(zip, manifestEntry, MANIFEST)).toString('utf8'));
      if (Array.isArray(m?.nodes)) manifest = m.nodes;
    } catch (e) {
      if (e instanceof KilnError) throw e;
      // A manifest that does not parse only means no visibility or app flags.
    }
  }
  const html = new Map<string, Buffer>();
  for (const f of files) if (f.type === 'site') html.set(f.path, await unpack(zip, f.entry, f.path));
  /** Each document's contents in the order they were saved, its current content last. */
  const history = new Map<string, Buffer[]>();
  for (const v of versions) {
    const list = history.get(v.path) ?? [];
    list.push(await unpack(zip, v.entry, v.entry.fileName));
    history.set(v.path, list);
  }
  // Upload bytes are durable before any row names them (an aborted import leaves only unnamed blobs);
  // each is dropped once stored, so one upload at most is in memory.
  const stored = new Map<string, Awaited<ReturnType<typeof storeBytes>>>();
  for (const f of files)
    if (f.type === 'upload') stored.set(f.path, await storeBytes(s, plan, await unpack(zip, f.entry, f.path)));
  const flags = new Map(manifest.map((m) => [String(m.path), m]));
  const by = { accountId: actorId, writer: null };
  const now = s.clock.now().toISOString();
  return inTransaction(s, async (trx, after) => {
    const result: ImportResult = { documents: 0, uploads: 0, folders: 0, versions: 0 };
    // An untouched starter goes to the trash (restorable) and the imported document takes its name.
    for (const node of giveWay) await trashIn(s, trx, after, [node], null);
    const folderIds = new Map<string, number>([['', 0]]);
    /** The folder at `parts`, made when missing. */
    const folder = async (parts: string[]): Promise<number> => {
      const key = parts.join('/');
      const known = folderIds.get(key);
      if (known !== undefined) return known;
      const parentId = await folder(parts.slice(0, -1));
      const name = parts[parts.length - 1];
      const existing = await childNamed(trx, ownerId, parentId, name);
      const id =
        existing?.type === 'folder'
          ? existing.id
          : (await createIn(s, trx, actorId, { ownerId, parentId, type: 'folder', name }, now, after)).id;
      if (!existing) result.folders++;
      folderIds.set(key, id);
      return id;
    };
    if (into.length) await folder(into);
    for (const parts of folders) await folder([...into, ...parts]);
    for (const f of files) {
      const name = f.parts[f.parts.length - 1];
      const parentId = await folder([...into, ...f.parts.slice(0, -1)]);
      const parentPath = [...into, ...f.parts.slice(0, -1)].join('/');
      let node: NodeRow;
      if (f.type === 'site') {
        // The first version makes the document; each later one is a save (the versions in between quietly:
        // the last write's event and activity line speak for the import).
        const contents = successive([...(history.get(f.path) ?? []), html.get(f.path)!]);
        node = await createIn(
          s,
          trx,
          actorId,
          { ownerId, parentId, type: 'site', name, html: contents[0] },
          now,
          after,
        );
        const by = { kind: 'import' as const, accountId: actorId, writer: null };
        for (let i = 1; i < contents.length; i++)
          await writeDocument(s, trx, after, {
            nodeId: node.id,
            bytes: contents[i],
            by,
            quiet: i < contents.length - 1,
          });
        result.documents++;
        result.versions += contents.length - 1;
      } else {
        node = await insertUpload(
          s,
          { ownerId, parentId, parentPath, name, stored: stored.get(f.path)!, by, ifTaken: 'refuse' },
          { tx: trx, after },
        );
        result.uploads++;
      }
      const m = flags.get(f.path);
      if (m?.visibility === 'private') await updateNode(trx, node.id, { visibility: 'private' });
      if (m?.app && node.type === 'site') {
        await assertCanEnableApp(s, ownerId, node.id, trx);
        await updateNode(trx, node.id, { enable_signups: 1 });
      }
    }
    return result;
  }).catch(nameConflict);
}

/** The contents without a repeat of the one before (a save of unchanged bytes makes no version). */
function successive(contents: Buffer[]): Buffer[] {
  return contents.filter((b, i) => i === 0 || !b.equals(contents[i - 1]));
}

// ------------------------------------------------------------------ a last export

/** How long the export made before an account is deleted can be downloaded. */
export const LAST_EXPORT_DAYS = 7;

function lastExportFile(s: Services, token: string): string {
  return path.join(s.config.dataDir, 'exports', `${sha256(token)}.zip`);
}

/** Writes the account's whole tree (with versions) to a file before the account is deleted; returns
 *  the secret token of its download link (`/_/export/<token>`, 7 days). The file is complete before
 *  this returns: a deletion that asked for it never happens without it. */
export async function writeLastExport(s: Services, accountId: number): Promise<string> {
  const token = randomToken(32);
  const file = lastExportFile(s, token);
  await mkdir(path.dirname(file), { recursive: true });
  const tree = await exportTree(contextOf(s, SYSTEM), { ownerId: accountId, versions: true });
  await pipeline(tree, createWriteStream(`${file}.part`));
  await rename(`${file}.part`, file);
  return token;
}

/** The file of a last export while its link works, or null. */
export async function lastExport(s: Services, token: string): Promise<string | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const file = lastExportFile(s, token);
  try {
    const st = await stat(file);
    return s.clock.now().getTime() - st.mtimeMs < LAST_EXPORT_DAYS * DAY ? file : null;
  } catch {
    return null;
  }
}

/** Removes last exports older than 7 days (the hourly sweep). */
export async function sweepLastExports(s: Services): Promise<void> {
  const dir = path.join(s.config.dataDir, 'exports');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  const now = s.clock.now().getTime();
  for (const n of names) {
    const f = path.join(dir, n);
    const st = await stat(f).catch(() => null);
    if (st && now - st.mtimeMs >= LAST_EXPORT_DAYS * DAY) await unlink(f).catch(() => {});
  }
}
