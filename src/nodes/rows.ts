// The one shape of a new node row: every writer names only what differs from the defaults.
import type { NewRow, NodesTable } from '../store/schema.ts';

export interface NewNode {
  ownerId: number;
  parentId: number;
  type: NodesTable['type'];
  name: string;
  /** Ancestor folder path ('' at top level). */
  path: string;
  now: string;
}

export function newNodeRow(n: NewNode, over: Partial<NewRow<'nodes'>> = {}): NewRow<'nodes'> {
  return {
    owner_id: n.ownerId,
    parent_id: n.parentId,
    type: n.type,
    name: n.name,
    name_key: n.name.toLowerCase(),
    path: n.path,
    visibility: 'public',
    enable_signups: 0,
    share_token: null,
    share_enabled: 0,
    forbid_framing: 0,
    source_node_id: null,
    checksum: null,
    size: 0,
    content_type: null,
    blob_sha256: null,
    created_at: n.now,
    modified_at: n.now,
    last_synced_at: null,
    saved_by_account_id: null,
    saved_by_writer: null,
    trashed_at: null,
    trash_root: null,
    trashed_parent_id: null,
    ...over,
  };
}
