// Who saves and which node, as the save pipeline (src/save/pipeline.ts) and the data-clobber guard
// (src/guard/guard.ts, which the pipeline calls) both name them: below both, so the guard does not import the pipeline.

export type SaveKind =
  | 'create'
  | 'starter'
  | 'browser'
  | 'editor'
  | 'sync'
  | 'restore'
  | 'instance'
  | 'upload-edit'
  | 'import'
  | 'agent';

/** Who is writing. `writer` identifies one tab/session or one sync key, for `changedBy`. */
export interface SavedBy {
  kind: SaveKind;
  accountId: number | null;
  writer: string | null;
  /** Browser saves: whether a person's gesture caused it (`Save-Trigger`), for the data-clobber guard. */
  trigger?: 'user' | 'auto' | null;
  /** A share-link guest's save (no account): the versions list and the activity feed name it as one. */
  shareGuest?: boolean;
  /** An agent's write (over MCP: kind `agent`, or `create` for a document it makes): how the versions list and
   *  the activity feed name it, "<client> via <grant>" (e.g. "Claude Code via sync key hcsk_1234567…"). */
  agent?: string;
  /** The writer also sent its editor snapshot on the live lane (a sync write with `snapshotHtml`): editing tabs
   *  took the change in already. */
  snapshotSent?: boolean;
}

/** A writer's name (`changedElsewhereBy`) inside a sentence: "a sync tool", "Claude Code via …". */
export const inSentence = (by: string): string => (/^(A|An|The) /.test(by) ? by[0].toLowerCase() + by.slice(1) : by);

/** Who the open editing tabs of a document are told changed it (`ChangedElsewhere`), or null: a browser tab's save
 *  (its peers get its snapshots; the saver would be told of its own save) or a new document (no tab has it). */
export function changedElsewhereBy(by: { kind: string; agent?: string | null; snapshotSent?: boolean }): string | null {
  if (by.snapshotSent) return null;
  switch (by.kind) {
    case 'agent':
      return by.agent ?? 'An agent';
    case 'sync':
      return 'A sync tool';
    case 'editor':
      return 'The code editor';
    case 'restore':
      return 'A version restore';
    default:
      return null;
  }
}

/** How the versions list and the activity feed record an agent's change: `agent:<name>` (the name rides with the
 *  kind: versions keep no other field for it). */
export const agentRecorded = (agent: string): string => `agent:${agent}`;

/** How the versions list and the activity feed record a save's source: its kind, `share` for a guest, and
 *  `agent:<name>` for an agent. */
export const recordedKind = (by: SavedBy): string =>
  by.shareGuest ? 'share' : by.agent ? agentRecorded(by.agent) : by.kind;

/** The kind and the agent's name of a recorded kind (`recordedKind`'s inverse). */
export function recordedSource(recorded: string): { kind: string; agent: string | null } {
  return recorded.startsWith('agent:') ? { kind: 'agent', agent: recorded.slice(6) } : { kind: recorded, agent: null };
}

/** `changedElsewhereBy` for a stored version, from its recorded kind (`saved_by_kind`). */
export function changedElsewhereByRecorded(recorded: string): string | null {
  return changedElsewhereBy(recordedSource(recorded));
}

/** The node fields the after-save steps need. */
export interface SavedNode {
  id: number;
  owner_id: number;
  path: string;
  name: string;
}
