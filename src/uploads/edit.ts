// The code editor's doors: a document of the caller's host (`/_/edit?path=`), and the caller's own text uploads
// (`/_/edit/uploads/<username>/<path>` opens one; a save with that Document-URL replaces it). One rule for the
// uploads, whichever door: nobody signed in signs in first, an app user is refused (the table's `edit` row), the
// URL must name the caller's own uploads (and, on a document host, that host's), and the upload itself must pass
// the table's `edit`.
import type { Ctx } from '../context.ts';
import type { Row } from '../store/schema.ts';
import type { IfMatch } from '../core/conditional.ts';
import { authorizeActor, ownUploads } from '../access/authorize.ts';
import { forbidden, notFound } from '../errors.ts';
import { replaceUpload } from './upload.ts';
import { documentContent } from '../nodes/serve.ts';

type NodeRow = Row<'nodes'>;

/** An upload the caller may edit, named as the editor's URL names it; `fits` refuses what the door cannot take
 *  (run once the caller is known to be asking about their own uploads). */
async function ownUploadToEdit(
  ctx: Pick<Ctx, 'caller' | 'nodes'>,
  target: { username: string; path: string },
  fits: () => void = () => {},
): Promise<NodeRow> {
  const { caller } = ctx;
  const actor = authorizeActor(caller, ownUploads(caller.actor), 'edit');
  if (target.username !== actor.username || (caller.host !== null && caller.host !== actor.accountId))
    throw forbidden('You can only edit your own uploads.');
  fits();
  return ctx.nodes.open({ ownerId: actor.accountId, path: target.path }, 'edit', 'upload');
}

/** The editor's view of an upload: the node and its bytes. */
export async function uploadToEdit(
  ctx: Pick<Ctx, 'caller' | 'nodes' | 'blobs'>,
  target: { username: string; path: string },
  fits: () => void,
): Promise<{ node: NodeRow; bytes: Buffer }> {
  const node = await ownUploadToEdit(ctx, target, fits);
  const bytes = await ctx.blobs.get(node.blob_sha256!);
  if (!bytes) throw notFound('The file’s content is missing.');
  return { node, bytes };
}

/** The editor's save of an upload: its new bytes, If-Match honoured. */
export async function saveEditedUpload(
  ctx: Ctx,
  input: { username: string; path: string; bytes: Buffer; ifMatch: IfMatch | null },
): Promise<{ etag: string }> {
  const node = await ownUploadToEdit(ctx, input);
  const actor = ctx.caller.actor!;
  const { node: saved } = await replaceUpload(ctx, {
    node,
    plan: actor.plan,
    bytes: input.bytes,
    by: { kind: 'upload-edit', accountId: actor.accountId, writer: actor.writer },
    ifMatch: input.ifMatch,
  });
  return { etag: saved.checksum ?? '' };
}

/** The editor's view of a document of the caller's host: the node and its bytes (none yet: empty). A share
 *  guest is an app user here: 403, not a sign-in page (the table's `edit`). */
export async function documentToEdit(ctx: Ctx, path: string): Promise<{ node: NodeRow; bytes: Buffer }> {
  if (ctx.caller.host === null) throw notFound();
  const node = await ctx.nodes.open({ ownerId: ctx.caller.host, path }, 'edit', 'site');
  return { node, bytes: (await documentContent(ctx, node))?.bytes ?? Buffer.alloc(0) };
}
