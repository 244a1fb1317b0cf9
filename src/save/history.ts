// Reading versions back: list them, and rebuild one from its snapshot and the diffs after it,
// verified against its SHA-256 contentHash.
import type { Db } from '../store/schema.ts';
import { diffsBetween, snapshotVersion, versionById, versionsOf } from '../store/versions.ts';
import { sha256 } from '../core/checksum.ts';
import { notFound } from '../errors.ts';
import { reconstruct, unpackSnapshot } from './versions.ts';
import { recordedSource } from './saved.ts';

export interface VersionInfo {
  id: number;
  nodeId: number;
  backupNumber: number;
  createdAt: string;
  size: number;
  /** How it was saved (`browser`, `sync`, `agent` …). */
  savedBy: string;
  /** An agent's save: the agent, "<client> via <grant>". */
  savedByAgent?: string;
  savedByUsername: string | null;
  isDiff: boolean;
  contentHash: string;
}

export async function listVersions(db: Db, nodeId: number): Promise<VersionInfo[]> {
  const rows = await versionsOf(db, nodeId);
  return rows.map((r) => {
    const source = recordedSource(r.saved_by_kind);
    return {
      id: r.id,
      nodeId: r.node_id,
      backupNumber: r.backup_number,
      createdAt: r.created_at,
      size: r.size,
      savedBy: source.kind,
      ...(source.agent !== null ? { savedByAgent: source.agent } : {}),
      savedByUsername: r.username,
      isDiff: r.is_diff === 1,
      contentHash: r.content_hash,
    };
  });
}

class CorruptVersionError extends Error {}

/** The exact bytes of a version. Throws CorruptVersionError when reconstruction does not match contentHash. */
export async function versionContent(
  db: Db,
  versionId: number,
): Promise<{ nodeId: number; bytes: Buffer; backupNumber: number }> {
  const v = await versionById(db, versionId);
  if (!v) throw notFound('No such version.');
  let bytes: Buffer;
  if (v.is_diff === 0) {
    bytes = Buffer.from(unpackSnapshot(v.html!));
  } else {
    const snapshot = await snapshotVersion(db, v.snapshot_id!);
    const diffs = await diffsBetween(db, v.node_id, snapshot.backup_number, v.backup_number);
    const text = reconstruct(
      Buffer.from(unpackSnapshot(snapshot.html!)).toString('utf8'),
      diffs.map((d) => d.diff_content!),
    );
    bytes = Buffer.from(text, 'utf8');
  }
  if (sha256(bytes) !== v.content_hash)
    throw new CorruptVersionError(`version ${versionId} does not match its contentHash`);
  return { nodeId: v.node_id, bytes, backupNumber: v.backup_number };
}
