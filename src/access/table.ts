// THE access table. Every request is classified as `<userType>:<resourceType>:<action>` and looked up
// here; the value names the check that must pass (CHECKS in authorize.ts). Anything not listed answers 403.
// A share guest (a valid share token of one document) is `app_user` when nobody is signed in (a developer
// stays `dev`), and passes the `*_or_guest` checks of that document; on a team (the `team` resource) the
// user type is the caller's role there, and someone who is not a member has no row.
//
// Lookup order: exact key → admin falls back to dev → `*` user type → `*` resource type → `*:*`.
// `+` in a key lists several values. Read top to bottom; each line is a rule a person can check.

export type UserType = 'no_auth' | 'app_user' | 'dev' | 'admin' | 'team_owner' | 'team_editor' | 'team_viewer';
export type ResourceType = 'main_app' | 'regular_site' | 'multi_tenant' | 'instance' | 'folder' | 'upload' | 'team';
export type Action =
  | 'view' // read a document, folder listing or upload on its host
  | 'edit' // the code editor
  | 'save' // replace a document's HTML (browser save, editor)
  | 'versions' // list, view and restore versions
  | 'live' // editor snapshots on the live lane
  | 'upload' // add files
  | 'manage' // create, rename, move, delete, change visibility (dashboard)
  | 'dashboard'
  | 'setup' // first-run superadmin creation
  | 'signup' // become an app user of a multi-tenant app (and get an instance)
  | 'sync' // a team's files through the sync API (key holders)
  | 'members' // add, change and remove a team's members
  | 'bus' // a document host's message bus (/_/bus: page ↔ agent messages, AI editing)
  | 'session' // hold a session on a document host (signed in there: src/http/auth.ts, /_/session/start)
  | 'administer'; // the administration of this Kiln (/_/admin: accounts, plans, settings)

/** Names of the checks (CHECKS in authorize.ts). */
export type Check =
  | 'allow' // anyone
  | 'visible' // public, or private and the caller owns it (404 otherwise, same as missing)
  | 'visible_or_guest' // as `visible`, and a share-token guest of this document sees it too
  | 'owner' // the caller owns the resource
  | 'confirmed_owner' // the caller owns it and has confirmed their email
  | 'owner_or_guest' // the owner, or a share-token guest of this document
  | 'signed_in' // any signed-in person
  | 'login' // nobody signed in: send to the login page
  | 'host_owner' // the caller owns the host (its account, or a team's owner or editor); 401 nobody, 403 others
  | 'host_member' // the host is the caller's account, or they are a member of its team (any role); 401 nobody, 403 others
  | 'deny'; // 403

const DOCUMENTS = 'regular_site+multi_tenant+instance';

export const ACCESS_TABLE: Record<string, Check> = {
  // Reading: public things are open to all; private ones exist only for their owner (and, for a
  // document, the share guests its owner let in).
  [`*:${DOCUMENTS}:view`]: 'visible_or_guest',
  '*:folder+upload:view': 'visible',
  [`admin:${DOCUMENTS}+folder+upload:view`]: 'allow',

  // Code editing: developers on their own documents and uploads; app users never; strangers log in.
  [`dev:${DOCUMENTS}+upload:edit`]: 'owner',
  'app_user:*:edit': 'deny',
  'no_auth:*:edit': 'login',

  // Saving: owners; app users only their own instance once their email is confirmed; share guests.
  [`dev:${DOCUMENTS}+upload:save`]: 'owner_or_guest',
  'app_user:instance:save': 'confirmed_owner',
  'app_user:regular_site+multi_tenant:save': 'owner_or_guest',
  'no_auth:*:save': 'login',

  // Versions: whoever may save may look back and restore.
  [`dev:${DOCUMENTS}:versions`]: 'owner',
  'app_user:instance:versions': 'confirmed_owner',
  'no_auth:*:versions': 'login',

  // Live lane: owners and share guests.
  [`dev+app_user:${DOCUMENTS}:live`]: 'owner_or_guest',
  'no_auth:*:live': 'deny',

  // Files and the tree: developers manage their own; app users only upload into their instance.
  'dev:main_app:upload': 'signed_in',
  [`dev:${DOCUMENTS}+folder:upload`]: 'owner',
  'app_user:instance:upload': 'confirmed_owner',
  'dev:main_app:manage': 'signed_in',
  [`dev:${DOCUMENTS}+folder+upload:manage`]: 'owner',
  'no_auth:*:upload+manage': 'login',

  // Multi-tenant apps: anyone who can see the app may sign up on it (other documents take no signups).
  '*:multi_tenant:signup': 'visible',

  // The dashboard and first-run setup.
  'dev+app_user:main_app:dashboard': 'signed_in',
  'no_auth:main_app:dashboard': 'login',
  '*:main_app:setup': 'allow',

  // A document host's message bus (the host is the resource, as its account's regular document): its owner,
  // and a team's owners and editors. Nobody else, whatever their standing elsewhere (administrators too).
  '*:regular_site:bus': 'host_owner',
  // Who is signed in on a document host (the host as its account's regular document): its account, and every
  // member of its team, who acts there in their role (src/http/auth.ts). Anyone else is a visitor there.
  '*:regular_site:session': 'host_member',

  // The administration of this Kiln: its superadmins only (others 403; nobody signed in logs in).
  'admin:main_app:administer': 'allow',
  'no_auth:main_app:administer': 'login',

  // Teams: a member acts on the team's files by role (the team is the resource; allowsTeam, authorizeTeam).
  // Owners and editors create, change and sync them; only owners change who is a member; viewers read.
  'team_owner+team_editor:team:manage+sync': 'allow',
  'team_owner:team:members': 'allow',
  'team_owner+team_editor+team_viewer:team:view': 'allow',
};

/** A table with every `+` expanded: one entry per concrete key. A key listed twice is a mistake. */
export function expandTable(table: Record<string, Check>): Map<string, Check> {
  const out = new Map<string, Check>();
  for (const [key, check] of Object.entries(table)) {
    const parts = key.split(':');
    if (parts.length !== 3) throw new Error(`access table key ${key} must be user:resource:action`);
    const [users, resources, actions] = parts;
    for (const u of users.split('+'))
      for (const r of resources.split('+'))
        for (const a of actions.split('+')) {
          const k = `${u}:${r}:${a}`;
          if (out.has(k)) throw new Error(`access table lists ${k} twice`);
          out.set(k, check);
        }
  }
  return out;
}

/** The key of the row that decides a request in an expanded table, in the spec's lookup order: exact
 *  key → admin falls back to dev → `*` user type → `*` resource type (admin: then dev's) → `*:*`;
 *  `null` = no rule (403). */
function ruleIn(table: Map<string, Check>, user: UserType, resource: ResourceType, action: Action): string | null {
  const candidates = [
    `${user}:${resource}:${action}`,
    ...(user === 'admin' ? [`dev:${resource}:${action}`] : []),
    `*:${resource}:${action}`,
    `${user}:*:${action}`,
    ...(user === 'admin' ? [`dev:*:${action}`] : []),
    `*:*:${action}`,
  ];
  return candidates.find((k) => table.has(k)) ?? null;
}

/** The check for a request in an expanded table (the row `ruleIn` finds); `null` = no rule (403). */
export function lookupIn(
  table: Map<string, Check>,
  user: UserType,
  resource: ResourceType,
  action: Action,
): Check | null {
  const key = ruleIn(table, user, resource, action);
  return key === null ? null : table.get(key)!;
}

const EXPANDED = expandTable(ACCESS_TABLE);
/** Answers are fixed for the life of the process (the key space is small): remember them. */
const ANSWERS = new Map<string, Check | null>();

/** The row of THE table that decides a request (its expanded key), or `null`: for audits and tests. */
export function ruleOf(user: UserType, resource: ResourceType, action: Action): string | null {
  return ruleIn(EXPANDED, user, resource, action);
}

/** The check THE table names for a request; `null` means no rule (403). */
export function lookup(user: UserType, resource: ResourceType, action: Action): Check | null {
  const key = `${user}:${resource}:${action}`;
  let c = ANSWERS.get(key);
  if (c === undefined) {
    c = lookupIn(EXPANDED, user, resource, action);
    ANSWERS.set(key, c);
  }
  return c;
}
