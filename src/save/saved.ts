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
  | 'import';

/** Who is writing. `writer` identifies one tab/session or one sync key, for `changedBy`. */
export interface SavedBy {
  kind: SaveKind;
  accountId: number | null;
  writer: string | null;
  /** Browser saves: whether a person's gesture caused it (`Save-Trigger`), for the data-clobber guard. */
  trigger?: 'user' | 'auto' | null;
  /** A share-link guest's save (no account): the versions list and the activity feed name it as one. */
  shareGuest?: boolean;
}

/** The node fields the after-save steps need. */
export interface SavedNode {
  id: number;
  owner_id: number;
  path: string;
  name: string;
}
