// Export and import of a whole tree as one zip.
//
// Export streams: documents as stored, uploads byte for byte from the blob store, optionally every
// version of every document (`.kiln/versions/<path>/<n>.html`), and `.kiln/manifest.json` (paths,
// types, checksums, sizes, visibility, app flags). Each entry's bytes are read only when the zip
// writer reaches it, so memory stays flat however large the tree.
//
// Import takes such a zip, or any zip of HTML files and assets (a Hyperclay Local folder, say): every
// name is checked first, and a name already taken (in the tree, or a document name elsewhere in Kiln)
// refuses the whole import with the list (409 `name-conflict`, `extra.clashes`); then uploads go to
// the blob store and the whole tree is written in one transaction: all or nothing.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomToken } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { DAY } from '../limits.ts';
import yazl from 'yazl';
import yauzl from 'yauzl';
import type { Services } from '../services.ts';
import { KilnError, badRequest, tooLarge } from '../errors.ts';
import { limits } from '../limits.ts';
import { isDocumentName, isGlobalDocumentName, nodeNameProblem, splitPath } from '../core/names.ts';
import { childPathOf, createIn, findByPath, listTree, runWrite, type NodeRow } from '../nodes/tree.ts';
import { documentContent } from '../nodes/serve.ts';
import { listVersions, versionContent } from '../save/history.ts';
import { insertUpload, storeBytes } from '../uploads/upload.ts';
import { childNamed, otherSiteNamed, updateNode } from '../store/nodes.ts';
import { assertCanEnableApp, loadPlanAccount, effectivePlan } from '../billing/plans.ts';

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

/** The tree of `ownerId` as a zip stream (the caller checked the actor may manage it). */
export async function exportTree(
  s: Services,
  actorId: number,
  ownerId: number,
  opts: { versions?: boolean } = {},
): Promise<Readable> {
  const nodes = await listTree(s, actorId, ownerId);
  const zip = new yazl.ZipFile();
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
        lazy(async () => (await documentContent(s, n))?.bytes ?? Buffer.alloc(0)),
        path,
        { mtime: mtime(n) },
      );
    else if (n.blob_sha256) {
      const sha = n.blob_sha256;
      zip.addReadStream(
        lazy(async () => (await s.blobs.stream(sha)) ?? Buffer.alloc(0)),
        path,
        { mtime: mtime(n) },
      );
    }
    if (opts.versions && n.type === 'site') {
      for (const v of await listVersions(s.database.db, n.id)) {
        zip.addReadStream(
          lazy(async () => (await versionContent(s.database.db, v.id)).bytes),
          `${VERSIONS}${path}/${v.backupNumber}.html`,
          { mtime: new Date(v.createdAt) },
        );
      }
    }
  }
  zip.addBuffer(
    Buffer.from(
      JSON.stringify(
        { format: 'kiln-export', version: 1, exportedAt: s.clock.now().toISOString(), nodes: manifest },
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

interface ImportFile {
  path: string;
  parts: string[];
  bytes: Buffer;
}

/** Most entries one import takes. */
const MAX_ENTRIES = 10_000;

function readZip(buffer: Buffer): Promise<{ files: ImportFile[]; folders: string[][]; manifest: ManifestEntry[] }> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, strictFileNames: false, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(badRequest('That file is not a zip archive.', 'invalid-body'));
      const files: ImportFile[] = [];
      const folders: string[][] = [];
      let manifest: ManifestEntry[] = [];
      let total = 0;
      let count = 0;
      const fail = (e: Error) => {
        zip.close();
        reject(e instanceof KilnError ? e : badRequest(`The zip is damaged: ${e.message}`, 'invalid-body'));
      };
      zip.on('error', fail);
      zip.on('end', () => resolve({ files, folders, manifest }));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (++count > MAX_ENTRIES) return fail(tooLarge(`A zip may hold at most ${MAX_ENTRIES} entries.`));
        const name = entry.fileName.replace(/\\/g, '/').replace(/^\/+/, '');
        const skip =
          name.startsWith(VERSIONS) || name.startsWith('__MACOSX/') || /(^|\/)(\.DS_Store|Thumbs\.db)$/.test(name);
        if (skip) return zip.readEntry();
        if (name.endsWith('/')) {
          const parts = splitPath(name.slice(0, -1));
          if (typeof parts === 'string') return fail(badRequest(`${name}: ${parts}`, 'invalid-path'));
          folders.push(parts);
          return zip.readEntry();
        }
        total += entry.uncompressedSize;
        if (entry.uncompressedSize > limits.documentSize * 40 || total > limits.body.jsonSyncAndUpload * 4)
          return fail(tooLarge('The zip unpacks to more than an import takes.'));
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(e ?? new Error('unreadable entry'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', fail);
          stream.on('end', () => {
            const bytes = Buffer.concat(chunks);
            if (name === MANIFEST) {
              try {
                const m = JSON.parse(bytes.toString('utf8'));
                if (Array.isArray(m?.nodes)) manifest = m.nodes;
              } catch {
                // A manifest that does not parse only means no visibility or app flags.
              }
            } else {
              const parts = splitPath(name);
              if (typeof parts === 'string') return fail(badRequest(`${name}: ${parts}`, 'invalid-path'));
              files.push({ path: parts.join('/'), parts, bytes });
            }
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

export interface ImportResult {
  documents: number;
  uploads: number;
  folders: number;
}

/** Imports a zip into the tree of `ownerId`: all of it, or nothing (see the head of this file). */
export async function importTree(s: Services, actorId: number, ownerId: number, zip: Buffer): Promise<ImportResult> {
  await listTree(s, actorId, ownerId); // the actor may manage this tree (else 400 not-owner)
  const { files, folders, manifest } = await readZip(zip);
  if (files.length === 0) throw badRequest('The zip holds no files.', 'invalid-body');
  const plan = effectivePlan(await loadPlanAccount(s, s.database.db, ownerId));
  // Every name first: the rules, then what is taken.
  const clashes: string[] = [];
  for (const f of files) {
    const name = f.parts[f.parts.length - 1];
    const type = isDocumentName(name) ? 'site' : 'upload';
    const problem =
      nodeNameProblem(name, type) ??
      f.parts
        .slice(0, -1)
        .map((p) => nodeNameProblem(p, 'folder'))
        .find(Boolean);
    if (problem) throw badRequest(`${f.path}: ${problem}`, 'invalid-name');
    if (type === 'site' && f.bytes.length > limits.documentSize)
      throw tooLarge(`${f.path} is larger than a document may be.`);
    if (await findByPath(s, ownerId, f.path)) clashes.push(f.path);
    else if (type === 'site' && isGlobalDocumentName(name) && (await otherSiteNamed(s.database.db, name)))
      clashes.push(`${f.path} (a document of that name exists elsewhere in Kiln)`);
  }
  if (clashes.length)
    throw new KilnError(
      409,
      `Nothing was imported: ${clashes.length} name${clashes.length === 1 ? ' is' : 's are'} taken: ${clashes.slice(0, 20).join(', ')}${clashes.length > 20 ? ' …' : ''}. Rename or delete them first.`,
      'name-conflict',
      { clashes },
    );
  // Upload bytes are durable before any row names them (an aborted import leaves only unnamed blobs).
  const stored = new Map<string, Awaited<ReturnType<typeof storeBytes>>>();
  for (const f of files)
    if (!isDocumentName(f.parts[f.parts.length - 1])) stored.set(f.path, await storeBytes(s, plan, f.bytes));
  const flags = new Map(manifest.map((m) => [String(m.path), m]));
  const by = { accountId: actorId, writer: null };
  const now = s.clock.now().toISOString();
  return runWrite(s, async (trx, after) => {
    const result: ImportResult = { documents: 0, uploads: 0, folders: 0 };
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
    for (const parts of folders) await folder(parts);
    for (const f of files) {
      const name = f.parts[f.parts.length - 1];
      const parentId = await folder(f.parts.slice(0, -1));
      const parentPath = f.parts.slice(0, -1).join('/');
      let node: NodeRow;
      if (isDocumentName(name)) {
        node = await createIn(s, trx, actorId, { ownerId, parentId, type: 'site', name, html: f.bytes }, now, after);
        result.documents++;
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
  });
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
  await pipeline(await exportTree(s, accountId, accountId, { versions: true }), createWriteStream(`${file}.part`));
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
