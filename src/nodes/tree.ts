// The node tree: sites (documents), folders and uploads of one account. Use cases only — no HTTP here,
// so the dashboard and the sync API share them. Every use case takes `(ctx, input)`: the caller (nodes only
// through `ctx.nodes.open`) and plain inputs; it returns node rows and throws KilnError with the status the
// spec names.
//
// Rules kept here:
// - `parent_id` is 0 at top level; `path` is the ancestor folder path ('' at top level, e.g. `a/b`),
//   kept exact for every descendant when a folder is renamed or moved (one transaction).
// - Document (site) names are unique across ALL accounts; folders and uploads among the siblings of
//   one owner. A name is never shared by two siblings of any type, so a URL path names one node.
// - Folders nest at most `limits.folderDepth` levels; sites per account are capped by plan.
// - A site's first HTML is written by the save pipeline inside the creating transaction.
// - Every change is published on the owner's account channel after it commits (sync streams hear
//   the dashboard's changes too): node-saved for created documents (through the pipeline's
//   afterContentChange, which also compiles the stylesheet) and folders, node-renamed / node-moved
//   with full old and new paths, node-deleted for every deleted node.
import { firstVersionKinds } from '../store/versions.ts';
import type { Services } from '../services.ts';
import type { Ctx } from '../context.ts';
import type { Executor, NodeRow, Tx, Visibility } from '../store/schema.ts';
import { childPathOf, findByPath } from './find.ts';
import type { WritePorts } from '../store/transaction.ts';
import { KilnError, badRequest, conflict, notFound } from '../errors.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { DAY, limits } from '../limits.ts';
import { assertSiteQuota } from '../billing/plans.ts';
import { isDocumentName, isGlobalDocumentName, nodeNameProblem, splitPath } from '../core/names.ts';
import { writeDocument } from '../save/pipeline.ts';
import { agentRecorded } from '../save/saved.ts';
import { publishAccountEvent, publishNodeSaved, publishVisibilityChanged } from '../events/publish.ts';
import { inTransaction, type AfterCommit } from '../store/transaction.ts';
import type { NodeEvent } from '../events/bus.ts';
import { starterDocument, type Starter } from './starters.ts';
import { newNodeRow } from './rows.ts';
import { treeOwner, type TreeCtx } from './manage.ts';
import { contextOf } from '../context.ts';
import { SYSTEM } from '../access/caller.ts';
import {
  childNamed,
  trashNodes,
  rememberRedirect,
  forgetRedirect,
  foldersOf,
  insertNode,
  nodeById,
  nodesOf,
  siteNameClash,
  setChildrenPath,
  siblingNamed,
  updateNode,
} from '../store/nodes.ts';

export type { NodeRow, Visibility };

/** Options of the changing use cases. */
export interface ChangeOptions {
  /** Opaque writer id (session or sync key), carried by the published events; default: the caller's. */
  writer?: string | null;
  /** An agent changes it: how the activity feed names it, as its saves ("<client> via <grant>"). */
  agent?: string;
  /** A precondition checked inside the transaction once the node is loaded (e.g. the sync API's
   *  expected structure version); throwing aborts the change. */
  expect?: (trx: Tx, node: NodeRow) => Promise<void>;
}

export interface CreateNodeInput {
  /** The account whose tree receives the node (the actor itself, or a team it owns or edits). */
  ownerId: number;
  /** Parent folder id; 0 for top level. */
  parentId: number;
  type: 'site' | 'folder';
  name: string;
  /** Initial HTML of a site (through the save pipeline, as every write); a starter when absent. */
  html?: string | Buffer;
  /** The starter a site without `html` begins from (default: the blank self-saving page). */
  starter?: Starter;
  /** Opaque writer id (session or sync key) recorded with the first version. */
  writer?: string | null;
  /** An agent makes it: how its first version is named ("<client> via <grant>", src/save/saved.ts). */
  agent?: string;
}

/** What the changing use cases change: the node, and their options. */
export interface RenameInput extends ChangeOptions {
  nodeId: number;
  name: string;
}
export interface MoveInput extends ChangeOptions {
  nodeId: number;
  /** The folder it goes into; 0: the top level. */
  parentId: number;
  /** A new name on the way; absent, null or '': it keeps its name. */
  name?: string | null;
}
export interface DeleteInput extends ChangeOptions {
  nodeId: number;
  /** A folder that holds anything goes only with this, and then with everything below it. */
  cascade?: boolean;
}

export interface CreatePathInput {
  ownerId: number;
  /** Relative path such as `folder/sub/name.html`; missing folders are created. */
  path: string;
  /** Type of the last segment; by default a site when it ends in .html/.htmlclay, else a folder. */
  type?: 'site' | 'folder';
  /** Folder the path starts in (0 = top level). */
  parentId?: number;
  html?: string | Buffer;
  starter?: Starter;
  writer?: string | null;
  agent?: string;
}

const NO_SUCH_NODE = 'No such file or folder.';
/** How long a renamed or moved document's old address redirects to it. */
export const REDIRECT_DAYS = 30;
const TYPE_WORD: Record<NodeRow['type'], string> = { site: 'document', folder: 'folder', upload: 'file' };

// ------------------------------------------------------------------ reading

/** One node by id, or undefined. No access check: callers authorize. */
export function getNode(s: Services, nodeId: number): Promise<NodeRow | undefined> {
  return nodeById(s.database.db, nodeId);
}

/** Every node of an account's tree the caller may change (treeOwner), ordered by path then name (folders are
 *  listed before what they hold). */
export async function listTree(ctx: TreeCtx, { ownerId }: { ownerId: number }): Promise<NodeRow[]> {
  await treeOwner(ctx, ownerId);
  return nodesOf(ctx.database.db, ownerId, { ordered: true });
}

export { childPathOf, findByPath };

// ------------------------------------------------------------------ creating

/** Creates a site or folder in one transaction; a site gets its first version and content. The caller manages
 *  the folder it goes in (`ctx.nodes.open`), or at the top level the tree (treeOwner). */
export async function createNode(ctx: Ctx, input: CreateNodeInput): Promise<NodeRow> {
  const at = await placeToManage(ctx, input.ownerId, input.parentId);
  ctx.nodes.assertPlace(input.ownerId, joinPath(at, String(input.name ?? '')));
  const now = ctx.clock.now().toISOString();
  const by = { ...input, writer: writerOf(ctx, input.writer) };
  return treeWrite(ctx, (trx, after) => createIn(ctx, trx, actorIdOf(ctx, input.ownerId), by, now, after));
}

/** The caller may add to this folder of the owner's tree (0: its top level). Returns the path its children get
 *  ('' at the top level). */
async function placeToManage(ctx: Ctx, ownerId: number, parentId: number | undefined): Promise<string> {
  if (parentId && Number.isSafeInteger(parentId) && parentId > 0) {
    const parent = await ctx.nodes.open(parentId, 'manage');
    if (parent.owner_id === ownerId) return childPathOf(parent);
  }
  await treeOwner(ctx, ownerId);
  return '';
}

const joinPath = (folder: string, name: string) => (folder ? `${folder}/${name}` : name);

/** The account a change is recorded as made by: the caller, or (Kiln itself) the tree's owner. */
const actorIdOf = (ctx: Pick<Ctx, 'caller'>, ownerId: number) => ctx.caller.actor?.accountId ?? ownerId;

/** The writer a change is published with: the one named, else the caller's session or key. */
const writerOf = (ctx: Pick<Ctx, 'caller'>, writer: string | null | undefined) =>
  writer !== undefined ? writer : (ctx.caller.actor?.writer ?? null);

/** A new account's home page (`index.html`, from the site starter), so its host answers from the first
 *  visit. */
export function createHomePage(s: Services, accountId: number, writer: string | null): Promise<NodeRow> {
  // Kiln makes it (recorded as the account's own first version).
  return createNode(contextOf(s, SYSTEM), {
    ownerId: accountId,
    parentId: 0,
    type: 'site',
    name: 'index.html',
    starter: 'site',
    writer,
  });
}

/** Creates `a/b/name.html` (or a folder), creating missing folders on the way, all in one transaction. */
export async function createPath(ctx: Ctx, given: CreatePathInput): Promise<NodeRow> {
  const { names, type } = pathNames(given);
  const at = await placeToManage(ctx, given.ownerId, given.parentId);
  ctx.nodes.assertPlace(given.ownerId, joinPath(at, names.join('/')));
  const input = { ...given, writer: writerOf(ctx, given.writer) };
  const [s, actorId] = [ctx, actorIdOf(ctx, input.ownerId)];
  const now = s.clock.now().toISOString();
  return treeWrite(s, async (trx, after) => {
    const plan = await existingFolders(trx, input.ownerId, input.parentId ?? 0, names.slice(0, -1));
    let parentId = plan.parentId;
    for (const folderName of plan.missing) {
      const folder = {
        ownerId: input.ownerId,
        parentId,
        type: 'folder' as const,
        name: folderName,
        writer: input.writer,
        agent: input.agent,
      };
      parentId = (await createIn(s, trx, actorId, folder, now, after)).id;
    }
    const leaf = { ...input, parentId, type, name: names[names.length - 1] };
    return createIn(s, trx, actorId, leaf, now, after);
  });
}

/** What createPath would answer for this path, without writing anything: the same name, depth, quota
 *  and clash rules (the New-document form asks as a name is typed). Returns the path it would make. */
export async function checkNewPath(ctx: Ctx, input: CreatePathInput): Promise<string> {
  const { names, type } = pathNames(input);
  const name = names[names.length - 1];
  const s = ctx;
  const { db } = s.database;
  await placeToManage(ctx, input.ownerId, input.parentId);
  const plan = await existingFolders(db, input.ownerId, input.parentId ?? 0, names.slice(0, -1));
  const parent = await loadParent(db, input.ownerId, plan.parentId);
  const depth = depthOf(childPathOf(parent)) + plan.missing.length;
  assertDepth(depth + (type === 'folder' ? 1 : 0));
  // Inside folders still to be made nothing has a name yet: only the names unique beyond a folder clash.
  if (plan.missing.length === 0)
    await assertNameFree(db, { ownerId: input.ownerId, parentId: plan.parentId, type, name, parent });
  else if (type === 'site') await assertSiteNameFree(db, input.ownerId, name);
  if (type === 'site') await assertSiteQuota(s, db, input.ownerId);
  return [childPathOf(parent), ...plan.missing, name].filter(Boolean).join('/');
}

/** A create path's names (NFC), each checked against the naming rules, and the last one's type. */
function pathNames(input: CreatePathInput): { names: string[]; type: 'site' | 'folder' } {
  const parts = splitPath(String(input.path ?? '').replace(/^\//, ''));
  if (typeof parts === 'string') throw badRequest(parts, 'invalid-path');
  const names = parts.map((p) => p.normalize('NFC'));
  const type = input.type ?? (isDocumentName(names[names.length - 1]) ? 'site' : 'folder');
  for (const [i, n] of names.entries()) {
    const problem = nodeNameProblem(n, i === names.length - 1 ? type : 'folder');
    if (problem) throw badRequest(`${problem} (in "${n}")`, 'invalid-name');
  }
  return { names, type };
}

/** Walks `folders` down from `parentId`: the deepest one that exists, and the names still to be made
 *  below it. A name on the way that is not a folder answers 409. */
async function existingFolders(trx: Executor, ownerId: number, parentId: number, folders: string[]) {
  let at = parentId;
  for (const [i, folderName] of folders.entries()) {
    const existing = await childNamed(trx, ownerId, at, folderName);
    if (!existing) return { parentId: at, missing: folders.slice(i) };
    if (existing.type !== 'folder')
      throw conflict(`"${existing.name}" is a ${TYPE_WORD[existing.type]}, not a folder.`, 'name-conflict');
    at = existing.id;
  }
  return { parentId: at, missing: [] as string[] };
}

/** Creates a site or folder inside the caller's transaction (a sync create of a nested path makes its
 *  folders and its file in one). The caller has asked the access table already, once, for the tree or the
 *  folder it creates in (createNode and createPath: `placeToManage`; a sync create: its scope and the parent
 *  `ctx.nodes` opened; an import: `treeOwner`; a collection: its folder opened for `manage`). `known`: the
 *  caller has also loaded the parent folder and found the name free in this transaction (a sync create,
 *  src/sync/create.ts, whose own clash rules are stricter: it reuses or refuses every name it finds), so neither
 *  is asked again; the unique indexes still stop a concurrent creator (nameConflict: 409). */
export async function createIn(
  s: Services,
  trx: Tx,
  actorId: number,
  input: CreateNodeInput,
  now: string,
  after: AfterCommit,
  known?: { parent: NodeRow | null },
): Promise<NodeRow> {
  if (input.type !== 'site' && input.type !== 'folder')
    throw badRequest('Type must be "site" or "folder".', 'invalid-type');
  const name = String(input.name ?? '').normalize('NFC');
  assertValidName(name, input.type);
  const parent = known ? known.parent : await loadParent(trx, input.ownerId, input.parentId);
  const path = childPathOf(parent);
  if (input.type === 'folder') assertDepth(depthOf(path) + 1);
  if (!known)
    await assertNameFree(trx, { ownerId: input.ownerId, parentId: parent?.id ?? 0, type: input.type, name, parent });
  if (input.type === 'site') await assertSiteQuota(s, trx, input.ownerId);
  const node = await insertNode(
    trx,
    newNodeRow({ ownerId: input.ownerId, parentId: parent?.id ?? 0, type: input.type, name, path, now }),
  );
  if (input.type !== 'site') {
    after.push(() =>
      publishNodeSaved(
        s,
        node,
        { checksum: null, size: 0, modifiedAt: now },
        { writer: input.writer, client: clientOf(input.agent) },
      ),
    );
    return node;
  }
  const bytes =
    input.html === undefined
      ? starterDocument(input.starter ?? 'blank', name, { aiEdit: s.aiEdit.on })
      : Buffer.isBuffer(input.html)
        ? input.html
        : Buffer.from(String(input.html), 'utf8');
  const written = await writeDocument(s, trx, after, {
    nodeId: node.id,
    bytes,
    // A page made from a starter says so: until its owner saves it, an import may take its place.
    by: {
      kind: input.html === undefined ? 'starter' : 'create',
      accountId: actorId,
      writer: input.writer ?? null,
      ...(input.agent ? { agent: input.agent } : {}),
    },
  });
  return {
    ...node,
    checksum: written.checksum,
    size: written.size,
    modified_at: now,
    saved_by_account_id: actorId,
    saved_by_writer: input.writer ?? null,
  };
}

// ------------------------------------------------------------------ changing

/** Renames a node in place; a folder's descendants get their new path in the same transaction. */
export async function renameNode(ctx: Ctx, input: RenameInput): Promise<NodeRow & { oldName: string }> {
  const s = ctx;
  const opts = { ...input, writer: writerOf(ctx, input.writer) };
  const name = String(input.name ?? '').normalize('NFC');
  const opened = await ctx.nodes.open(input.nodeId, 'manage');
  return treeWrite(s, async (trx, after) => {
    const node = await stillThere(trx, opened);
    await opts.expect?.(trx, node);
    if (name === node.name) return { ...node, oldName: node.name };
    assertValidName(name, node.type);
    ctx.nodes.assertPlace(node.owner_id, joinPath(node.path, name));
    const parent = node.parent_id === 0 ? null : await loadParent(trx, node.owner_id, node.parent_id);
    await assertNameFree(trx, {
      ownerId: node.owner_id,
      parentId: node.parent_id,
      type: node.type,
      name,
      parent,
      exceptId: node.id,
    });
    const to = { parent_id: node.parent_id, path: node.path, name };
    return { ...(await place(s, trx, after, node, to, opts)), oldName: node.name };
  });
}

/** Puts a node at its new parent, path and name; a folder's descendants get their new paths; the
 *  rename or move event goes out after the commit. */
async function place(
  s: Services,
  trx: Tx,
  after: AfterCommit,
  node: NodeRow,
  to: { parent_id: number; path: string; name: string },
  by: Pick<ChangeOptions, 'writer' | 'agent'>,
): Promise<NodeRow> {
  const updated = await updateNode(trx, node.id, { ...to, name_key: to.name.toLowerCase() });
  if (node.type === 'folder') await rewriteDescendantPaths(trx, updated);
  // Put into a private folder (a collection's records/), it became private: its visitors' streams end.
  if (updated.visibility !== node.visibility)
    after.push(() => publishVisibilityChanged(s, updated, updated.visibility));
  // A document's old address leads to it for 30 days (links already shared keep working).
  if (node.type === 'site' && childPathOf(node) !== childPathOf(updated)) {
    const expiresAt = new Date(s.clock.now().getTime() + REDIRECT_DAYS * DAY).toISOString();
    await rememberRedirect(trx, { ownerId: node.owner_id, fromPath: childPathOf(node), nodeId: node.id, expiresAt });
    await forgetRedirect(trx, node.owner_id, childPathOf(updated));
  }
  after.push(() => publishMoved(s, node, updated, by));
  return updated;
}

/** Moves a node into another folder (0 = top level), optionally renaming it; a folder's descendants
 *  get their new paths in the same transaction. A folder cannot move into itself or below itself. */
export async function moveNode(ctx: Ctx, input: MoveInput): Promise<NodeRow> {
  const s = ctx;
  const opts = { ...input, writer: writerOf(ctx, input.writer) };
  const [targetParentId, newName] = [input.parentId, input.name];
  const opened = await ctx.nodes.open(input.nodeId, 'manage');
  return treeWrite(s, async (trx, after) => {
    const node = await stillThere(trx, opened);
    await opts.expect?.(trx, node);
    const name = newName == null || newName === '' ? node.name : String(newName).normalize('NFC');
    if (name !== node.name) assertValidName(name, node.type);
    const target = await loadParent(trx, node.owner_id, targetParentId);
    if (node.type === 'folder' && target) {
      // Walk up from the target: meeting the folder itself means the move would make a loop.
      for (
        let cur: NodeRow | null = target;
        cur;
        cur = cur.parent_id === 0 ? null : await loadParent(trx, node.owner_id, cur.parent_id)
      ) {
        if (cur.id === node.id)
          throw badRequest('A folder cannot be moved into itself or into one of its own subfolders.', 'move-into-self');
      }
    }
    const path = childPathOf(target);
    ctx.nodes.assertPlace(node.owner_id, joinPath(path, name));
    if (node.type === 'folder') assertDepth(depthOf(path) + 1 + (await subtreeHeight(trx, node)));
    if ((target?.id ?? 0) === node.parent_id && name === node.name) return node;
    await assertNameFree(trx, {
      ownerId: node.owner_id,
      parentId: target?.id ?? 0,
      type: node.type,
      name,
      parent: target,
      exceptId: node.id,
    });
    return place(s, trx, after, node, { parent_id: target?.id ?? 0, path, name }, opts);
  });
}

/** Makes a document or upload public or private. A private one answers 404 to all but its owner, and
 *  its open saved-lane streams of people who may not view it close (`visibility-changed` on the
 *  document's channel and the account's, heard by every process). */
export async function setVisibility(
  ctx: Ctx,
  { nodeId, visibility }: { nodeId: number; visibility: Visibility },
): Promise<NodeRow> {
  const s = ctx;
  if (visibility !== 'public' && visibility !== 'private')
    throw badRequest('Visibility must be "public" or "private".', 'invalid-visibility');
  const opened = await ctx.nodes.open(nodeId, 'manage');
  return treeWrite(s, async (trx, after) => {
    const node = await stillThere(trx, opened);
    if (node.type === 'folder')
      throw badRequest(
        'Folders have no visibility of their own; set it on the documents and files inside.',
        'invalid-visibility',
      );
    if (node.visibility === visibility) return node;
    const parent = visibility === 'public' ? await loadParent(trx, node.owner_id, node.parent_id) : null;
    if (parent?.visibility === 'private')
      throw badRequest(
        `What is in "${childPathOf(parent)}" is private (a collection's records are its owner's alone): move it out first.`,
        'invalid-visibility',
      );
    after.push(() => publishVisibilityChanged(s, node, visibility));
    return updateNode(trx, node.id, { visibility });
  });
}

/** Deletes a node: it goes to the trash with its content and versions (src/nodes/trash.ts). A folder
 *  that holds anything needs `cascade`, and then goes with everything below it. Returns what went. */
export async function deleteNode(ctx: Ctx, input: DeleteInput): Promise<NodeRow[]> {
  const s = ctx;
  const opts = { ...input, writer: writerOf(ctx, input.writer) };
  const opened = await ctx.nodes.open(input.nodeId, 'manage');
  return treeWrite(s, async (trx, after) => {
    const node = await stillThere(trx, opened);
    await opts.expect?.(trx, node);
    const below = node.type === 'folder' ? await descendantsOf(trx, node) : [];
    if (below.length > 0 && !opts.cascade) {
      throw new KilnError(
        400,
        `The folder "${node.name}" is not empty (it holds ${below.length} item${below.length === 1 ? '' : 's'}). Delete it together with its contents, or empty it first.`,
        'folder-not-empty',
        { count: below.length },
      );
    }
    const gone = [node, ...below];
    await trashIn(s, trx, after, gone, opts.writer ?? null, opts.agent);
    return gone;
  });
}

/** Puts `gone` (a node first, then what it holds) into the trash in the caller's transaction (src/nodes/trash.ts):
 *  gone for every reader, restorable for 30 days. `agent`: an agent's name, for the activity feed. */
export async function trashIn(
  s: Services,
  trx: Tx,
  after: AfterCommit,
  gone: NodeRow[],
  writer: string | null,
  agent?: string,
) {
  await trashNodes(
    trx,
    gone[0],
    gone.map((n) => n.id),
    s.clock.now().toISOString(),
  );
  // The folder first, then what it held (a client that removes the folder finds the rest gone).
  after.push(() =>
    Promise.all(
      gone.map((n) =>
        publish(
          s,
          n.owner_id,
          { type: 'node-deleted', nodeId: n.id, nodeType: n.type, path: childPathOf(n), writer },
          agent,
        ),
      ),
    ),
  );
}

/** A document made from a starter and never saved since: its one version is the starter it was made from. An
 *  import of the same name puts it in the trash and takes its place (nothing of its owner's is lost). */
export async function isUntouchedStarter(s: Services, node: NodeRow): Promise<boolean> {
  if (node.type !== 'site') return false;
  const versions = await firstVersionKinds(s.database.db, node.id);
  return versions.length === 1 && versions[0].saved_by_kind === 'starter';
}

// ------------------------------------------------------------------ rules

function assertValidName(name: string, type: NodeRow['type']) {
  const problem = nodeNameProblem(name, type);
  if (problem) throw badRequest(problem, 'invalid-name');
}

const depthOf = (path: string) => (path === '' ? 0 : path.split('/').length);

function assertDepth(depth: number) {
  if (depth > limits.folderDepth) {
    throw badRequest(`Folders nest at most ${limits.folderDepth} levels deep.`, 'too-deep');
  }
}

/** The node `ctx.nodes.open` let the caller change, as the transaction sees it now (a concurrent change may
 *  have renamed, moved or deleted it meanwhile). */
async function stillThere(trx: Executor, opened: NodeRow): Promise<NodeRow> {
  const node = await nodeById(trx, opened.id);
  if (!node) throw notFound(NO_SUCH_NODE);
  return node;
}

/** The folder with this id in the owner's tree; null for 0 (top level). */
async function loadParent(trx: Executor, ownerId: number, parentId: number): Promise<NodeRow | null> {
  if (parentId === 0 || parentId === undefined || parentId === null) return null;
  if (!Number.isSafeInteger(parentId) || parentId < 0)
    throw badRequest('The parent folder id must be a whole number (0 for top level).', 'invalid-parent');
  const parent = await nodeById(trx, parentId);
  if (!parent || parent.owner_id !== ownerId) throw notFound('No such folder.');
  if (parent.type !== 'folder')
    throw badRequest(`"${parent.name}" is a ${TYPE_WORD[parent.type]}, not a folder.`, 'invalid-parent');
  return parent;
}

/** 409 when the name is taken: by any sibling (any type), or for a site anywhere in Kiln. */
async function assertNameFree(
  trx: Executor,
  o: {
    ownerId: number;
    parentId: number;
    type: NodeRow['type'];
    name: string;
    parent: NodeRow | null;
    exceptId?: number;
  },
) {
  const sibling = await siblingNamed(trx, o.ownerId, o.parentId, o.name, o.exceptId);
  if (sibling) {
    const where = o.parent ? `The folder "${o.parent.name}"` : 'The top level';
    throw conflict(`${where} already has a ${TYPE_WORD[sibling.type]} named "${sibling.name}".`, 'name-conflict');
  }
  if (o.type === 'site') await assertSiteNameFree(trx, o.ownerId, o.name, o.exceptId);
}

/** A document name unique beyond its folder clashes with no other live document in its scope. */
async function assertSiteNameFree(trx: Executor, ownerId: number, name: string, exceptId?: number) {
  if (!isGlobalDocumentName(name)) return;
  const site = await siteNameClash(trx, ownerId, name, exceptId);
  if (!site) return;
  if (site.owner_id !== ownerId) {
    throw conflict(
      `The document name "${name}" belongs to another account. Document names are unique across this Kiln; choose another name.`,
      'name-taken-elsewhere',
    );
  }
  throw conflict(
    `You already have a document named "${site.name}"${site.path ? ` in "${site.path}"` : ''}. Document names are unique across all your folders.`,
    'name-conflict',
  );
}

/** Every node below a folder (any depth), from the owner's rows. */
async function descendantsOf(trx: Executor, folder: NodeRow): Promise<NodeRow[]> {
  const all = await nodesOf(trx, folder.owner_id);
  const byParent = new Map<number, NodeRow[]>();
  for (const n of all) {
    const list = byParent.get(n.parent_id);
    if (list) list.push(n);
    else byParent.set(n.parent_id, [n]);
  }
  const out: NodeRow[] = [];
  const stack = [folder.id];
  while (stack.length) {
    for (const child of byParent.get(stack.pop()!) ?? []) {
      out.push(child);
      if (child.type === 'folder') stack.push(child.id);
    }
  }
  return out;
}

/** How many folder levels sit below `folder` (0 when it holds no folders). */
async function subtreeHeight(trx: Executor, folder: NodeRow): Promise<number> {
  const base = depthOf(childPathOf(folder));
  let height = 0;
  for (const d of await descendantsOf(trx, folder)) {
    if (d.type === 'folder') height = Math.max(height, depthOf(childPathOf(d)) - base);
  }
  return height;
}

/** After a folder got a new name or place: every folder below it gives its children the new path.
 *  One UPDATE per folder in the subtree, walking down from the folder. */
export async function rewriteDescendantPaths(trx: Executor, folder: NodeRow) {
  const folders = await foldersOf(trx, folder.owner_id);
  const stack: Array<{ id: number; childPath: string }> = [{ id: folder.id, childPath: childPathOf(folder) }];
  while (stack.length) {
    const { id, childPath } = stack.pop()!;
    await setChildrenPath(trx, folder.owner_id, id, childPath);
    for (const f of folders) if (f.parent_id === id) stack.push({ id: f.id, childPath: `${childPath}/${f.name}` });
  }
}

/** A tree change whose unique index a concurrent writer won answers 409 `name-conflict`. */
export function nameConflict(err: unknown): never {
  if (isUniqueViolation(err)) throw conflict('That name was just taken; choose another.', 'name-conflict');
  throw err;
}

/** A tree change through the one transaction door (src/store/transaction.ts); a name taken meanwhile is 409. */
export function treeWrite<T>(s: WritePorts, fn: (trx: Tx, after: AfterCommit) => Promise<T>): Promise<T> {
  return inTransaction(s, fn).catch(nameConflict);
}

// ------------------------------------------------------------------ events

/** The activity feed's client of a tree change: an agent's name (as its saves record it), else the writer's own. */
const clientOf = (agent: string | undefined) => (agent ? agentRecorded(agent) : undefined);

function publish(s: Services, ownerId: number, event: NodeEvent, agent?: string) {
  return publishAccountEvent(s, ownerId, event, clientOf(agent));
}

/** node-moved when the parent changed (a move, possibly with a new name), node-renamed otherwise. */
function publishMoved(s: Services, before: NodeRow, after: NodeRow, by: Pick<ChangeOptions, 'writer' | 'agent'>) {
  const oldPath = childPathOf(before);
  const newPath = childPathOf(after);
  if (oldPath === newPath) return Promise.resolve();
  const type = before.parent_id !== after.parent_id ? 'node-moved' : 'node-renamed';
  return publish(
    s,
    after.owner_id,
    {
      type,
      nodeId: after.id,
      nodeType: after.type,
      oldPath,
      newPath,
      writer: by.writer ?? null,
    },
    by.agent,
  );
}
