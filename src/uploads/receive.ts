// POST /_/upload's use case: a file into the caller's tree, or a team's it manages. Where it goes: on a
// document host, the folder of the page the Page-URL names (the table's `upload` on that page); on the main app,
// a folder id (the table's `upload` on the folder) or the top level of the caller's tree or a team's (the team's
// `manage` row), optionally in place of an upload of that folder (the dashboard's "Replace").
import type { Ctx } from '../context.ts';
import type { Row } from '../store/schema.ts';
import { authorizeActor } from '../access/authorize.ts';
import { treeOwner } from '../nodes/manage.ts';
import { KilnError, notFound, unauthorized } from '../errors.ts';
import { findTeam } from '../teams/teams.ts';
import { childPathOf } from '../nodes/find.ts';
import { storeUpload, storeUploadInPlaceOf } from './upload.ts';

type NodeRow = Row<'nodes'>;

export type UploadPlace =
  /** A document host: the page's path on it. */
  | { page: string }
  /** The main app: a folder id (0: the top level), a team's id for its top level, an upload to replace. */
  | { parentId: number; ownerId?: number; replaces?: number };

interface Folder {
  ownerId: number;
  parentId: number;
  parentPath: string;
  replaces?: NodeRow;
}

async function folderOf(ctx: Ctx, place: UploadPlace): Promise<Folder> {
  if ('page' in place) {
    if (ctx.caller.host === null) throw notFound();
    const page = await ctx.nodes.open({ ownerId: ctx.caller.host, path: place.page }, 'upload');
    return { ownerId: page.owner_id, parentId: page.parent_id, parentPath: page.path };
  }
  const actor = authorizeActor(ctx.caller, null, 'upload');
  let folder: Folder;
  if (place.parentId === 0) {
    // The top level of the caller's tree, or of a team's: its owners and editors; a viewer is told so; to anyone
    // else it is not there (the tree's question, `treeOwner`).
    const owner = await treeOwner(ctx, place.ownerId ?? actor.accountId);
    folder = { ownerId: owner.id, parentId: 0, parentPath: '' };
  } else {
    const node = await ctx.nodes.open(place.parentId, 'upload', 'folder');
    folder = { ownerId: node.owner_id, parentId: node.id, parentPath: childPathOf(node) };
  }
  if (place.replaces === undefined) return folder;
  // Only an upload of that same folder and tree can be replaced; anything else answers like a missing file.
  const old = await ctx.nodes.open(place.replaces, 'manage', 'upload').catch(() => undefined);
  if (!old || old.owner_id !== folder.ownerId || old.parent_id !== folder.parentId)
    throw notFound('No such file to replace in that folder.');
  return { ...folder, replaces: old };
}

/** Nobody signed in uploads anything, and is told so before the body is read: a share guest of the page the
 *  headers name (a document host's) gets the table's refusal for it (403, as an app user); anyone else, and a
 *  page that is not there for them (missing or private: one answer), 401 `login-required`. A signed-in caller
 *  passes here and is judged with the place the body names (`receiveUpload`). */
export async function refuseNobody(ctx: Ctx, page: string | undefined): Promise<void> {
  if (ctx.caller.actor) return;
  if (page !== undefined && ctx.caller.host !== null)
    await ctx.nodes.open({ ownerId: ctx.caller.host, path: page }, 'upload').catch((err: unknown) => {
      if (!(err instanceof KilnError && err.status === 404)) throw err;
    });
  throw unauthorized();
}

/** Stores the file where `place` says; answers its node, whether it replaced one, and whose host serves it. */
export async function receiveUpload(
  ctx: Ctx,
  input: { place: UploadPlace; fileName: string; bytes: Buffer; writer?: string; agent?: string },
): Promise<{ node: NodeRow; replaced: boolean; hostUsername: string }> {
  const actor = ctx.caller.actor;
  if (!actor) throw unauthorized();
  const { replaces, ...folder } = await folderOf(ctx, input.place);
  // A credential narrowed to a folder puts nothing outside it (a top-level folder is the tree's, not a node).
  ctx.nodes.assertPlace(folder.ownerId, folder.parentPath ? `${folder.parentPath}/${input.fileName}` : input.fileName);
  // A team's files count against the team's plan and are served on its host.
  const team = folder.ownerId === actor.accountId ? undefined : await findTeam(ctx, folder.ownerId);
  const upload = {
    ...folder,
    plan: team?.plan ?? actor.plan,
    fileName: input.fileName,
    bytes: input.bytes,
    // The activity feed says who uploaded: from the browser, or an agent (its own writer).
    by: { accountId: actor.accountId, writer: input.writer ?? actor.writer, agent: input.agent },
  };
  const node = replaces ? await storeUploadInPlaceOf(ctx, { ...upload, replaces }) : await storeUpload(ctx, upload);
  return { node, replaced: !!replaces, hostUsername: team?.username ?? actor.username };
}
