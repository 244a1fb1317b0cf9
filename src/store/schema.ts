// Row types of the database, shared by SQLite and PostgreSQL.
// Booleans are stored as 0/1 integers and times as ISO 8601 UTC text, so both databases
// hold the same values and text ordering is time ordering.
import type { Generated, Insertable, Kysely, Selectable, Transaction } from 'kysely';

export type Flag = 0 | 1;
export type AccountKind = 'person' | 'team';
export type AccountType = 'dev' | 'app_user';
export type Plan = 'free' | 'personal' | 'maker';
export type NodeType = 'site' | 'folder' | 'upload';
export type TeamRole = 'owner' | 'editor' | 'viewer';

export interface AccountsTable {
  id: Generated<number>;
  kind: AccountKind;
  /** Lowercase; the document host `<username>.<root_domain>`. Shared by people and teams. */
  username: string;
  plan: Plan;
  has_active_subscription: Flag;
  plan_started_at: string | null;
  created_at: string;
  /** Payments (migration 004): the Stripe customer and subscription of the paid plan. */
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  /** Set while an administrator has suspended the account (src/admin/admin.ts). */
  suspended_at: string | null;
}

export interface PeopleTable {
  account_id: number;
  /** Lowercased; unique. */
  email: string;
  password_hash: string | null;
  account_type: AccountType;
  is_superadmin: Flag;
  email_confirmed: Flag;
  /** For app users: the multi-tenant app they signed up on. */
  signup_app_id: number | null;
}

export interface SessionsTable {
  id: Generated<number>;
  token_hash: string;
  account_id: number;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** null: a main-app session (a login); else the document host it was minted for. */
  host: string | null;
  /** A host session's login (null for logins). */
  login_id: number | null;
  /** The browser a login came from (shown in the account's list of sign-ins). */
  user_agent: string | null;
}

export interface ActivityTable {
  id: Generated<number>;
  owner_id: number;
  at: string;
  kind: string;
  node_id: number | null;
  node_type: string | null;
  path: string;
  old_path: string | null;
  writer: string | null;
  /** How a save was made (`browser`, `editor`, `sync`, `restore` …), when known; an AI edit's engine. */
  client: string | null;
  /** More facts as JSON (an AI edit: `{in, out, outcome, ms}`), or null. */
  detail: string | null;
}

/** An account's use of the built-in AI engines on one UTC day (src/ai-edit/budget.ts). */
export interface AiEditUsageTable {
  account_id: number;
  /** YYYY-MM-DD, UTC. */
  day: string;
  requests: number;
  /** Bytes of the prompts sent to the engines. */
  bytes: number;
}

/** The data-clobber guard's state of a document (src/guard/guard.ts). */
/** A guarded write whose check has not been applied yet (src/guard/guard.ts): written with the write. */
export interface DataLossChecksTable {
  /** The version the write made. */
  version_id: number;
  node_id: number;
  /** The version current before the write (null: none). */
  before_version_id: number | null;
  /** How the write came (SaveKind) and, for browser saves, its Save-Trigger. */
  by_kind: string;
  by_trigger: string | null;
  writer: string | null;
  created_at: string;
}

export interface DataLossGuardsTable {
  node_id: number;
  owner_id: number;
  /** The protected island `{api: …}` as JSON, or null before the page was first seen with data. */
  baseline: string | null;
  /** 1 when a person's gestured save came since the last sync write. */
  ui_work_pending: number;
  event_id: string | null;
  /** The pending event as JSON (src/guard/guard.ts GuardEvent), or null. */
  event: string | null;
  /** When the pending event was raised (ISO): the dashboard's marks and the 30-day sweep. */
  event_at: string | null;
  /** The newest version known to hold the protected data (an event's revert target), or null. */
  safe_version_id: number | null;
  updated_at: string;
}

/** What a collection holds beyond its live record files (migration 022): room taken for a submitter's write in
 *  progress, and bytes a submitter's change replaced, until the blob sweep may free them. */
export interface CollectionHeldTable {
  id: Generated<number>;
  collection_id: string;
  at: string;
  bytes: number;
  records: number;
}

export interface CollectionsTable {
  /** `col_` + 10 random base-36 characters: public, stable across renames and moves. */
  id: string;
  owner_id: number;
  /** The collection's folder. */
  folder_id: number;
  /** Its `records/` folder: one JSON upload per record. */
  records_folder_id: number;
  /** What a public form sends to add a record. */
  submit_token: string;
  /** The next record's key (1, 2, 3 …; never reused). */
  next_key: number;
  created_at: string;
  /** What anonymous submitters may store, as its owner set it (null: src/limits.ts `collectionLimits`). */
  max_records: number | null;
  max_bytes: number | null;
  max_per_address_hour: number | null;
}

export interface MessagesTable {
  id: Generated<number>;
  owner_id: number;
  /** The page the message was sent from (its path on the owner's host). */
  page: string;
  /** The form's fields, JSON. */
  fields: string;
  /** The human check's score (0 = looks human). */
  score: number;
  created_at: string;
  read_at: string | null;
}

export interface HeldUsernamesTable {
  username: string;
  held_until: string;
  /** A renamed account's new username: the old host redirects there while the name is held. */
  moved_to: string | null;
  /** The renamed account, which may take the name back meanwhile; null for a deleted account's name. */
  account_id: number | null;
}

export interface SessionGrantsTable {
  id: Generated<number>;
  token_hash: string;
  login_id: number;
  host: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface InstanceSettingsTable {
  name: string;
  value: string;
}

export interface NodesTable {
  id: Generated<number>;
  owner_id: number;
  /** 0 at top level. */
  parent_id: number;
  type: NodeType;
  name: string;
  /** Lowercased name: the uniqueness key. */
  name_key: string;
  /** Where a document's name is unique: 0 = across this Kiln, else its owner's id (per-account names). */
  name_scope: Generated<number>;
  /** Ancestor folder path, '' at top level, e.g. `a/b`. */
  path: string;
  visibility: 'public' | 'private';
  enable_signups: Flag;
  share_token: string | null;
  share_enabled: Flag;
  /** 1: other sites may not frame this document (`frame-ancestors 'self'`, src/http/framing.ts). */
  forbid_framing: Generated<Flag>;
  source_node_id: number | null;
  /** First 16 hex chars of SHA-256 of the stored bytes (sites and uploads). */
  checksum: string | null;
  size: number;
  /** Uploads: MIME type and SHA-256 blob name. */
  content_type: string | null;
  blob_sha256: string | null;
  created_at: string;
  modified_at: string;
  last_synced_at: string | null;
  /** Who wrote last: account id and an opaque writer id (session or key), for `changedBy`. */
  saved_by_account_id: number | null;
  saved_by_writer: string | null;
  /** Set while the node is in the trash (src/nodes/trash.ts); null for live nodes. */
  trashed_at: string | null;
  /** The node whose deletion put this one in the trash (itself for that node). */
  trash_root: number | null;
  /** The trash root's folder before it was deleted. */
  trashed_parent_id: number | null;
}

/** A document's bytes: `base` with `splice` in place of its bytes [splice_at, splice_end) when those are set, or
 *  with several regions replaced when `splice_end` says so and `splice_map` holds their bounds
 *  (src/core/splice.ts). */
export interface NodeContentsTable {
  node_id: number;
  base: Uint8Array;
  splice_at: number | null;
  splice_end: number | null;
  splice: Uint8Array | null;
  splice_map: Uint8Array | null;
}

export interface VersionsTable {
  id: Generated<number>;
  node_id: number;
  backup_number: number;
  is_diff: Flag;
  html: Uint8Array | null;
  diff_content: string | null;
  diff_from_id: number | null;
  snapshot_id: number | null;
  content_hash: string;
  size: number;
  saved_by_kind: string;
  saved_by_account_id: number | null;
  created_at: string;
}

export interface SyncKeysTable {
  id: Generated<number>;
  account_id: number;
  key_hash: string;
  key_prefix: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The name an MCP client gave in its handshake, by credential writer (src/store/agent-clients.ts). */
export interface AgentClientsTable {
  writer: string;
  name: string;
  named_at: string;
}

export interface AgentKeysTable {
  id: Generated<number>;
  /** The person who made it (and acts through it). */
  account_id: number;
  name: string;
  key_hash: string;
  key_prefix: string;
  read_only: Flag;
  /** The one account it reaches: the person's own, or a team's. */
  scope_account_id: number;
  /** Only at or below this folder of that account: its path when the key was made (`notes/2026`); null: the
   *  whole tree. */
  folder: string | null;
  /** That folder's node: the key reaches it wherever it is now (null with a `folder`: deleted for good). */
  folder_id: number | null;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** What the OAuth library keeps (src/oauth/adapter.ts): a token's `id` is its SHA-256. */
export interface OAuthObjectsTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  /** When a code or refresh token was used (epoch seconds). */
  consumed_at: number | null;
  expires_at: string | null;
}

/** An OAuth grant as the person gave it on the consent page (src/oauth/grants.ts). */
export interface OAuthGrantsTable {
  id: Generated<number>;
  /** The library's grant id (tokens carry it). */
  grant_id: string;
  person_id: number;
  client_id: string;
  client_name: string;
  redirect_uri: string;
  /** The account the grant reaches: the person's own or one of their teams. */
  account_id: number;
  folder: string | null;
  read_only: number;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface TeamMembershipsTable {
  team_id: number;
  person_id: number;
  role: TeamRole;
  created_at: string;
}

export interface DomainsTable {
  id: Generated<number>;
  account_id: number;
  domain: string;
  status: 'pending' | 'verifying' | 'active' | 'failed';
  ssl_status: string | null;
  provider_id: string | null;
  dns_instructions: string;
  created_at: string;
}

export interface EmailTokensTable {
  id: Generated<number>;
  token_hash: string;
  account_id: number | null;
  email: string;
  purpose: 'confirm' | 'reset' | 'checkout' | 'invite' | 'email-change';
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface TeamInvitesTable {
  id: Generated<number>;
  team_id: number;
  email: string;
  role: TeamRole;
  token_hash: string;
  invited_by: number | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface RedirectsTable {
  id: Generated<number>;
  owner_id: number;
  /** The old path, lower case (`folder/old.html`). */
  from_key: string;
  node_id: number;
  expires_at: string;
}

export interface WebhookEventsTable {
  provider: string;
  event_id: string;
  received_at: string;
}

export interface StylesheetsTable {
  node_id: number;
  css: string;
  source_checksum: string;
  compiled_at: string;
}

export interface DB {
  accounts: AccountsTable;
  people: PeopleTable;
  sessions: SessionsTable;
  nodes: NodesTable;
  node_contents: NodeContentsTable;
  versions: VersionsTable;
  sync_keys: SyncKeysTable;
  agent_keys: AgentKeysTable;
  agent_clients: AgentClientsTable;
  team_memberships: TeamMembershipsTable;
  domains: DomainsTable;
  email_tokens: EmailTokensTable;
  team_invites: TeamInvitesTable;
  redirects: RedirectsTable;
  held_usernames: HeldUsernamesTable;
  activity: ActivityTable;
  ai_edit_usage: AiEditUsageTable;
  messages: MessagesTable;
  collections: CollectionsTable;
  collection_held: CollectionHeldTable;
  data_loss_guards: DataLossGuardsTable;
  data_loss_checks: DataLossChecksTable;
  webhook_events: WebhookEventsTable;
  stylesheets: StylesheetsTable;
  session_grants: SessionGrantsTable;
  instance_settings: InstanceSettingsTable;
  oauth_objects: OAuthObjectsTable;
  oauth_grants: OAuthGrantsTable;
}

export type Db = Kysely<DB>;
/** A transaction on the database (src/store/transaction.ts inTransaction). */
export type Tx = Transaction<DB>;
/** What a store function runs its queries on: the database, or a transaction of the caller's. */
export type Executor = Db | Tx;
/** A table's row as it is read, and as it is inserted. */
export type Row<T extends keyof DB> = Selectable<DB[T]>;
export type NewRow<T extends keyof DB> = Insertable<DB[T]>;

/** A node as stored: a document, folder or upload (src/nodes/tree.ts). */
export type NodeRow = Row<'nodes'>;
export type Visibility = NodesTable['visibility'];
