// The sync API's tree changes: rename, move and delete through src/nodes/tree.ts, guarded by the
// protocol-2 structure version (or If-Match).
import type { Services } from '../services.ts';
import { KilnError } from '../errors.ts';
import { ifMatchHolds, type IfMatch } from '../core/conditional.ts';
import { deleteNode, moveNode, renameNode, type ChangeOptions } from '../nodes/tree.ts';
import { assertCanWrite, type SyncCtx, type SyncScope } from './scope.ts';
import {
  assertConditional,
  freshWireNode,
  fullPath,
  markSynced,
  run,
  scopedFolder,
  scopedNode,
  versionOf,
} from './wire.ts';

/** The expected-version check of rename, move and delete, run inside their transaction. A stale
 *  `expectedVersion` is 409 `node-changed`; an `If-Match` must name the current structure version
 *  or (files) the current etag, else 412. Both leave everything unchanged. */
function expectVersion(s: Services, expected: string | null, ifMatch: IfMatch): ChangeOptions['expect'] {
  if (expected === null && ifMatch.kind !== 'tags') return undefined;
  return async (trx, node) => {
    // Hold the node while deciding, so two conditional changes cannot both pass.
    await s.database.lock.row(trx, 'nodes', node.id);
    const current = await versionOf(trx, node);
    if (expected !== null && expected !== current) {
      throw new KilnError(
        409,
        `"${node.name}" changed on the server since you last listed it; refresh it and try again.`,
        'node-changed',
        {
          structureVersion: current,
          etag: node.checksum,
        },
      );
    }
    if (!ifMatchHolds(ifMatch, current, node.checksum)) {
      throw new KilnError(412, `"${node.name}" changed on the server since you last listed it.`, 'conflict', {
        etag: node.checksum,
        structureVersion: current,
      });
    }
  };
}

// ------------------------------------------------------------------ structure

export interface StructureInput {
  nodeId: number;
  /** Protocol 2's precondition: the node's `structureVersion` as last listed; null: none. */
  expectedVersion: string | null;
  ifMatch: IfMatch;
}

function structureOptions(s: Services, scope: SyncScope, input: StructureInput): ChangeOptions {
  const expected = input.expectedVersion;
  assertConditional(
    scope,
    expected !== null || input.ifMatch.kind !== 'none',
    'expectedVersion (the structureVersion from the listing) or If-Match',
  );
  return { writer: scope.actor.writer, expect: expectVersion(s, expected, input.ifMatch) };
}

/** Renames a node in its folder; a folder's descendants get their new paths. */
export async function renameSyncNode(ctx: SyncCtx, input: StructureInput & { newName: string }) {
  const scope = ctx.sync;
  const node = await scopedNode(ctx, input.nodeId, 'manage');
  assertCanWrite(scope);
  const opts = structureOptions(ctx, scope, input);
  const renamed = await run(() => renameNode(ctx, { ...opts, nodeId: node.id, name: input.newName }));
  await markSynced(ctx.database.db, [renamed.id], ctx.clock.now().toISOString());
  const wire = await freshWireNode(ctx, renamed.id);
  return {
    success: true as const,
    nodeId: renamed.id,
    oldName: node.name,
    newName: renamed.name,
    node: wire,
    structureVersion: wire.structureVersion,
  };
}

/** Moves a node to another folder (0 / 'root' = top level), optionally renaming it in the same step. */
export async function moveSyncNode(
  ctx: SyncCtx,
  input: StructureInput & { targetParentId: number; newName: string | null },
) {
  const scope = ctx.sync;
  const node = await scopedNode(ctx, input.nodeId, 'manage');
  assertCanWrite(scope);
  const target = input.targetParentId;
  await scopedFolder(ctx, ctx.database.db, target);
  const opts = structureOptions(ctx, scope, input);
  const moved = await run(() => moveNode(ctx, { ...opts, nodeId: node.id, parentId: target, name: input.newName }));
  await markSynced(ctx.database.db, [moved.id], ctx.clock.now().toISOString());
  const wire = await freshWireNode(ctx, moved.id);
  return {
    success: true as const,
    nodeId: moved.id,
    fromPath: fullPath(node),
    toPath: fullPath(moved),
    oldName: node.name,
    newName: moved.name,
    node: wire,
    structureVersion: wire.structureVersion,
  };
}

/** Deletes a node; a folder that holds anything needs `cascade` (400 `folder-not-empty` otherwise). */
export async function deleteSyncNode(ctx: SyncCtx, input: StructureInput & { cascade: boolean }) {
  const scope = ctx.sync;
  const node = await scopedNode(ctx, input.nodeId, 'manage');
  const opts = structureOptions(ctx, scope, input);
  const gone = await run(() => deleteNode(ctx, { ...opts, nodeId: node.id, cascade: input.cascade }));
  return { success: true as const, nodeId: node.id, type: node.type, deleted: gone.length };
}
