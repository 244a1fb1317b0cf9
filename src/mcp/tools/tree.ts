// The tools that change the tree: create_document, rename_document, move_document, delete_document (to the trash,
// restorable 30 days) and upload_file. Each calls the tree's own use cases (src/nodes/tree.ts, src/uploads/), which
// open every node through the access table and keep a narrowed credential inside its folder; the agent is the
// writer its changes are published with.
import { z } from 'zod';
import type { Ctx } from '../../context.ts';
import type { NodeRow } from '../../store/schema.ts';
import { tool, type AgentInfo } from '../tool.ts';
import { KilnError, badRequest } from '../../errors.ts';
import { createPath, deleteNode, moveNode, renameNode, type ChangeOptions } from '../../nodes/tree.ts';
import { STARTERS, type Starter } from '../../nodes/starters.ts';
import { receiveUpload } from '../../uploads/receive.ts';
import { replaceUpload } from '../../uploads/upload.ts';
import { exactly } from '../../core/conditional.ts';
import { findTeam } from '../../teams/teams.ts';
import { assertDocumentBytes } from '../../save/root-html.ts';
import { isDocumentName } from '../../core/names.ts';
import { agentChange, agentSavedBy } from '../agent.ts';
import {
  accountField,
  accountNamed,
  cleanPath,
  describe,
  etagField,
  nodeAt,
  nodeShape,
  pathField,
  whoChanged,
  type Reached,
} from './common.ts';

const STARTER_NAMES = Object.keys(STARTERS) as [Starter, ...Starter[]];

/** The folder at `path` of the account (made, with the folders above it, when missing); null: the top level. */
async function folderAt(ctx: Ctx, account: Reached, path: string, agent: AgentInfo): Promise<NodeRow | null> {
  const clean = cleanPath(path);
  if (!clean) return null;
  try {
    return (await nodeAt(ctx, { account: account.username, path: clean }, 'view', 'folder')).node;
  } catch (err) {
    if (!(err instanceof KilnError) || err.status !== 404) throw err;
    return createPath(ctx, { ownerId: account.id, path: clean, type: 'folder', ...agentChange(ctx.caller, agent) });
  }
}

/** An etag precondition of a tree change, checked inside its transaction (a folder has none: any etag fails). */
function expecting(etag: string | undefined): ChangeOptions['expect'] {
  if (etag === undefined) return undefined;
  return async (_trx, node) => {
    if (node.checksum !== etag)
      throw new KilnError(412, `"${node.name}" changed since you read it.`, 'conflict', { etag: node.checksum });
  };
}

export const createDocument = tool({
  name: 'create_document',
  title: 'Create a document',
  description:
    'Creates a document (an HTML page) at a path, with the HTML you give or from a starter (blank, notes, site, app, contact); missing folders are made. Document names end in .html and are unique across Kiln. Example: {"path": "projects/roadmap.html", "starter": "notes"}',
  input: z.object({
    account: accountField,
    path: pathField('projects/roadmap.html'),
    html: z.string().min(1).max(6_000_000).optional().describe('The page, with its <html> element.'),
    starter: z.enum(STARTER_NAMES).optional().describe('A starter page, when no html is given (default blank).'),
  }),
  output: nodeShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx, input, agent) {
    const account = await accountNamed(ctx, input.account);
    let html: Buffer | undefined;
    if (input.html !== undefined) assertDocumentBytes((html = Buffer.from(input.html, 'utf8')));
    const node = await createPath(ctx, {
      ownerId: account.id,
      path: cleanPath(input.path),
      type: 'site',
      ...(html ? { html } : { starter: input.starter ?? 'blank' }),
      ...agentChange(ctx.caller, agent),
    });
    return describe(ctx, node, account);
  },
});

export const renameDocument = tool({
  name: 'rename_document',
  title: 'Rename a document, file or folder',
  description:
    'Gives a document, file or folder a new name in its folder (a document’s old address redirects to it for 30 days). Example: {"path": "notes/draft.html", "newName": "final.html"}',
  input: z.object({
    account: accountField,
    path: pathField('notes/draft.html'),
    newName: z.string().min(1).max(255).describe('The new name only, not a path.'),
    etag: etagField.optional(),
  }),
  output: nodeShape.extend({ oldPath: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input, agent) {
    if (input.newName.includes('/'))
      throw badRequest('newName is a name, not a path: use move_document to move.', 'invalid-name');
    const { node, account } = await nodeAt(ctx, input, 'manage');
    const renamed = await renameNode(ctx, {
      nodeId: node.id,
      name: input.newName,
      ...agentChange(ctx.caller, agent),
      expect: expecting(input.etag),
    });
    return { ...describe(ctx, renamed, account), oldPath: cleanPath(input.path) };
  },
});

export const moveDocument = tool({
  name: 'move_document',
  title: 'Move a document, file or folder',
  description:
    'Moves a document, file or folder into another folder of the same account ("" for the top level; a missing folder is made), optionally renaming it. Example: {"path": "draft.html", "toFolder": "archive/2026"}',
  input: z.object({
    account: accountField,
    path: pathField('draft.html'),
    toFolder: z.string().max(1024).describe('The folder it goes into, e.g. "archive/2026"; "" for the top level.'),
    newName: z.string().min(1).max(255).optional(),
    etag: etagField.optional(),
  }),
  output: nodeShape.extend({ oldPath: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input, agent) {
    const { node, account } = await nodeAt(ctx, input, 'manage');
    const target = await folderAt(ctx, account, input.toFolder, agent);
    const moved = await moveNode(ctx, {
      nodeId: node.id,
      parentId: target?.id ?? 0,
      name: input.newName ?? null,
      ...agentChange(ctx.caller, agent),
      expect: expecting(input.etag),
    });
    return { ...describe(ctx, moved, account), oldPath: cleanPath(input.path) };
  },
});

export const deleteDocument = tool({
  name: 'delete_document',
  title: 'Delete a document, file or folder (to the trash)',
  description:
    'Moves a document, file or folder to the account’s trash, where its owner can restore it for 30 days (with its versions). A folder that holds anything needs recursive: true. Example: {"path": "old/notes.html"}',
  input: z.object({
    account: accountField,
    path: pathField('old/notes.html'),
    recursive: z.boolean().default(false).describe('Delete a folder with everything in it.'),
    etag: etagField.optional(),
  }),
  output: z.object({
    path: z.string(),
    kind: z.enum(['document', 'folder', 'file']),
    deleted: z.number().describe('How many documents, files and folders went to the trash.'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input, agent) {
    const { node, account } = await nodeAt(ctx, input, 'manage');
    const gone = await deleteNode(ctx, {
      nodeId: node.id,
      cascade: input.recursive,
      ...agentChange(ctx.caller, agent),
      expect: expecting(input.etag),
    });
    return { path: cleanPath(input.path), kind: describe(ctx, node, account).kind, deleted: gone.length };
  },
});

/** The bytes an upload_file call sends: its text, or its base64. */
function uploadBytes(input: { text?: string; base64?: string }): Buffer {
  if ((input.text === undefined) === (input.base64 === undefined))
    throw badRequest('Give the file as text or as base64 (one of them).', 'invalid-content');
  if (input.text !== undefined) return Buffer.from(input.text, 'utf8');
  if (!/^[A-Za-z0-9+/_\-\s]*={0,2}\s*$/.test(input.base64!))
    throw badRequest('base64 is not base64.', 'invalid-content');
  return Buffer.from(input.base64!, 'base64');
}

/** New bytes for an existing file, under the etag the caller read it at. */
async function replaceFile(
  ctx: Ctx,
  node: NodeRow,
  account: Reached,
  bytes: Buffer,
  etag: string | undefined,
  by: ReturnType<typeof agentSavedBy>,
) {
  if (etag === undefined)
    throw new KilnError(
      428,
      'This file exists: pass its etag (list_documents) to replace it.',
      'precondition-required',
    );
  const plan = (await findTeam(ctx, account.id))?.plan ?? ctx.caller.actor!.plan;
  const { node: n } = await whoChanged(ctx, node.id, () =>
    replaceUpload(ctx, { node, plan, bytes, by: { ...by, kind: 'agent' }, ifMatch: exactly(etag) }),
  );
  return n;
}

export const uploadFile = tool({
  name: 'upload_file',
  title: 'Upload a file',
  description:
    'Puts a file (CSS, JavaScript, JSON, an image …) at a path beside the documents, as text or as base64, within the plan’s file size; missing folders are made. Replacing an existing file needs its etag. Documents (.html) are made with create_document instead. Example: {"path": "assets/style.css", "text": "body { color: navy }"}',
  input: z.object({
    account: accountField,
    path: pathField('assets/style.css'),
    text: z.string().optional().describe('The content as text (UTF-8).'),
    base64: z.string().optional().describe('Or the content as base64 (binary files).'),
    etag: etagField.optional().describe('The etag of the file this replaces.'),
  }),
  output: nodeShape.extend({ replaced: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, input, agent) {
    const path = cleanPath(input.path);
    // A document is no upload (as on POST /_/upload): it is made and saved through the save pipeline.
    if (isDocumentName(path.split('/').pop() ?? '') || /\.htm$/i.test(path))
      throw new KilnError(415, 'HTML documents are not uploads: make them with create_document.', 'unsupported-type');
    const bytes = uploadBytes(input);
    const account = await accountNamed(ctx, input.account);
    const existing = await nodeAt(ctx, input, 'save', 'upload').catch((err) => {
      if (err instanceof KilnError && err.status === 404) return null;
      throw err;
    });
    const by = agentSavedBy(ctx.caller, agent);
    if (existing)
      return {
        ...describe(ctx, await replaceFile(ctx, existing.node, account, bytes, input.etag, by), account),
        replaced: true,
      };
    const slash = path.lastIndexOf('/');
    const folder = await folderAt(ctx, account, slash === -1 ? '' : path.slice(0, slash), agent);
    const { node } = await receiveUpload(ctx, {
      place: { parentId: folder?.id ?? 0, ownerId: account.id },
      fileName: path.slice(slash + 1),
      bytes,
      ...agentChange(ctx.caller, agent),
    });
    return { ...describe(ctx, node, account), replaced: false };
  },
});
