// The access table's lookup order, `+` expansion and refusals, tested directly (pure functions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ACCESS_TABLE, expandTable, lookup, lookupIn, type Action, type Check } from '../src/access/table.ts';
import {
  allows,
  allowsTeam,
  authorize,
  authorizeTeam,
  ownUploads,
  ruleFor,
  type Standing,
  type Resource,
  type Target,
} from '../src/access/authorize.ts';
import { KilnError } from '../src/errors.ts';
import type { Actor } from '../src/access/actor.ts';

const t = (def: Record<string, Check>) => expandTable(def);

test('order 1: the exact key wins over every wildcard', () => {
  const table = t({
    'dev:regular_site:view': 'owner',
    '*:regular_site:view': 'visible',
    'dev:*:view': 'signed_in',
    '*:*:view': 'allow',
  });
  assert.equal(lookupIn(table, 'dev', 'regular_site', 'view'), 'owner');
});

test('order 2: admin falls back to dev before any wildcard; its own exact key still wins', () => {
  const table = t({
    'dev:folder:view': 'owner',
    '*:folder:view': 'visible',
    'admin:*:view': 'deny',
    '*:*:view': 'allow',
  });
  assert.equal(lookupIn(table, 'admin', 'folder', 'view'), 'owner');
  const withAdmin = t({ 'admin:folder:view': 'allow', 'dev:folder:view': 'owner' });
  assert.equal(lookupIn(withAdmin, 'admin', 'folder', 'view'), 'allow');
  // The fallback is admin → dev only, never the other way.
  assert.equal(lookupIn(t({ 'admin:folder:view': 'allow' }), 'dev', 'folder', 'view'), null);
});

test('order 3: `*` for the user type comes before `*` for the resource type', () => {
  const table = t({ '*:folder:edit': 'visible', 'dev:*:edit': 'owner', '*:*:edit': 'allow' });
  assert.equal(lookupIn(table, 'dev', 'folder', 'edit'), 'visible');
  assert.equal(lookupIn(table, 'dev', 'upload', 'edit'), 'owner');
});

test("order 4: `*` for the resource type, then (for admins) dev's `*` resource entry", () => {
  const table = t({ 'app_user:*:edit': 'deny', 'dev:*:edit': 'owner', '*:*:edit': 'allow' });
  assert.equal(lookupIn(table, 'app_user', 'instance', 'edit'), 'deny');
  assert.equal(lookupIn(table, 'admin', 'instance', 'edit'), 'owner');
});

test('order 5: `*:*` is the last resort; nothing matching is null', () => {
  const table = t({ '*:*:live': 'signed_in' });
  for (const u of ['no_auth', 'app_user', 'dev', 'admin'] as const)
    assert.equal(lookupIn(table, u, 'multi_tenant', 'live'), 'signed_in');
  assert.equal(lookupIn(table, 'dev', 'multi_tenant', 'save'), null);
});

test('`+` lists several values in each part; every combination is its own key', () => {
  const table = t({ 'dev+app_user:regular_site+instance:save+live': 'owner' });
  assert.equal(table.size, 8);
  for (const u of ['dev', 'app_user'] as const)
    for (const r of ['regular_site', 'instance'] as const)
      for (const a of ['save', 'live'] as const) assert.equal(lookupIn(table, u, r, a), 'owner');
  assert.equal(lookupIn(table, 'no_auth', 'regular_site', 'save'), null);
  assert.equal(lookupIn(table, 'dev', 'multi_tenant', 'save'), null);
});

test('a key listed twice (also through `+`) or malformed is refused when the table is built', () => {
  assert.throws(
    () => t({ 'dev+admin:folder:view': 'owner', 'dev:folder:view': 'allow' }),
    /lists dev:folder:view twice/,
  );
  assert.throws(() => t({ 'dev:folder': 'owner' }), /must be user:resource:action/);
  // THE table itself builds.
  assert.ok(expandTable(ACCESS_TABLE).size > 0);
});

test('THE table: spot checks of the rules a reader audits', () => {
  assert.equal(lookup('dev', 'regular_site', 'edit'), 'owner');
  assert.equal(lookup('admin', 'regular_site', 'edit'), 'owner', 'admin falls back to dev');
  assert.equal(lookup('admin', 'instance', 'view'), 'allow', 'admin has its own view rule');
  assert.equal(lookup('no_auth', 'regular_site', 'view'), 'visible_or_guest', '`*` user type');
  assert.equal(lookup('no_auth', 'folder', 'view'), 'visible');
  assert.equal(lookup('app_user', 'main_app', 'edit'), 'deny', '`*` resource type');
  assert.equal(lookup('no_auth', 'folder', 'edit'), 'login', 'no_auth on edit goes to the login page');
  assert.equal(lookup('dev', 'main_app', 'manage'), 'signed_in');
  assert.equal(lookup('dev', 'folder', 'manage'), 'owner');
  assert.equal(lookup('app_user', 'main_app', 'manage'), null, 'unmatched');
  assert.equal(lookup('app_user', 'main_app', 'manage'), null, 'remembered answers stay the same');
});

const actor = (over: Partial<Actor> = {}): Actor => ({
  accountId: 1,
  username: 'a',
  email: 'a@example.com',
  accountType: 'dev',
  isSuperadmin: false,
  emailConfirmed: true,
  plan: 'free',
  hasActiveSubscription: false,
  writer: 'session:1',
  ...over,
});
const doc = (over: Partial<Resource> = {}): Resource => ({
  ownerId: 1,
  type: 'site',
  visibility: 'public',
  enableSignups: false,
  sourceNodeId: null,
  ...over,
});
function refusal(fn: () => unknown): KilnError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof KilnError);
    return e;
  }
  assert.fail('expected a refusal');
}

test('authorize: unmatched answers 403; the checks refuse with the statuses the spec names', () => {
  assert.equal(refusal(() => authorize({ actor: actor({ accountType: 'app_user' }) }, null, 'manage')).status, 403);
  assert.equal(refusal(() => authorize({ actor: null }, null, 'dashboard')).status, 401);
  assert.equal(refusal(() => authorize({ actor: null }, doc(), 'edit')).status, 401);
  assert.equal(
    refusal(() => authorize({ actor: actor({ accountId: 2 }) }, doc(), 'edit')).status,
    400,
    'ownership is a failed condition: 400',
  );
  assert.equal(
    refusal(() => authorize({ actor: null }, doc({ visibility: 'private' }), 'view')).status,
    404,
    'private looks missing',
  );
  assert.equal(
    refusal(() => authorize({ actor: actor({ accountId: 2 }) }, doc({ visibility: 'private' }), 'view')).status,
    404,
  );
  assert.equal(authorize({ actor: actor() }, doc({ visibility: 'private' }), 'view'), 'visible_or_guest');
  assert.equal(
    authorize({ actor: actor({ accountId: 2, isSuperadmin: true }) }, doc({ visibility: 'private' }), 'view'),
    'allow',
  );
  assert.equal(
    refusal(() => authorize({ actor: actor({ accountType: 'app_user' }) }, doc(), 'edit')).status,
    403,
    'app users never edit code',
  );
});

test('every row of THE table is what lookup answers for its keys (a row shadowed by another is a mistake)', () => {
  const expanded = expandTable(ACCESS_TABLE);
  for (const [key, check] of expanded) {
    const [u, r, a] = key.split(':');
    if (u === '*' || r === '*') continue; // wildcard rows are reached through the lookup order
    assert.equal(lookup(u as never, r as never, a as never), check, key);
  }
  // Wildcard rows answer for a concrete key that has no row of its own.
  assert.equal(lookup('app_user', 'upload', 'view'), 'visible');
  assert.equal(lookup('no_auth', 'instance', 'save'), 'login');
});

test('share guests are rows of the table: a guest of one document views, saves and uses the live lane, never edits code or versions', () => {
  const privateDoc = doc({ ownerId: 9, visibility: 'private' });
  const guest = { actor: null, shareGuest: true };
  assert.equal(authorize(guest, privateDoc, 'view'), 'visible_or_guest');
  assert.equal(authorize(guest, privateDoc, 'save'), 'owner_or_guest');
  assert.equal(authorize(guest, privateDoc, 'live'), 'owner_or_guest');
  assert.equal(refusal(() => authorize(guest, privateDoc, 'edit')).status, 403);
  assert.equal(refusal(() => authorize(guest, privateDoc, 'versions')).status, 403);
  // Without the token the same visitor meets a missing document.
  assert.equal(refusal(() => authorize({ actor: null }, privateDoc, 'view')).status, 404);
  // A developer signed in elsewhere is only a guest here: saves, may not edit code.
  const otherDev = { actor: actor({ accountId: 2 }), shareGuest: true };
  assert.equal(authorize(otherDev, privateDoc, 'save'), 'owner_or_guest');
  assert.equal(refusal(() => authorize(otherDev, privateDoc, 'edit')).status, 400);
  // A token grants nothing on folders and uploads.
  assert.equal(refusal(() => authorize(guest, doc({ type: 'upload', visibility: 'private' }), 'view')).status, 404);
});

test('team roles are rows of the table: owners and editors manage and sync a team’s files, only owners change members, viewers read', () => {
  const can = (role: 'owner' | 'editor' | 'viewer' | undefined, action: Parameters<typeof allowsTeam>[1]) =>
    allowsTeam(role, action);
  for (const action of ['manage', 'sync'] as const) {
    assert.equal(can('owner', action), true, `owner ${action}`);
    assert.equal(can('editor', action), true, `editor ${action}`);
    assert.equal(can('viewer', action), false, `viewer ${action}`);
    assert.equal(can(undefined, action), false, `not a member: ${action}`);
  }
  assert.equal(can('owner', 'members'), true);
  assert.equal(can('editor', 'members'), false);
  assert.equal(can('viewer', 'members'), false);
  for (const role of ['owner', 'editor', 'viewer'] as const) assert.equal(can(role, 'view'), true);
  assert.equal(can('editor', 'edit'), false, 'nothing else is granted by a role');
  const refused = new KilnError(403, 'no', 'viewer');
  assert.throws(
    () => authorizeTeam('viewer', 'sync', () => refused),
    (e) => e === refused,
  );
  assert.doesNotThrow(() => authorizeTeam('editor', 'sync', () => refused));
});

// ------------------------------------------------------------------ every row, case by case

type Outcome = 'ok' | 400 | 401 | 403 | 404;

/** Everyone the table tells apart, as callers about a resource owned by account 1 (a team: account 2's
 *  role in it). */
const WHO: Record<string, Standing> = {
  stranger: { actor: null },
  guest: { actor: null, shareGuest: true }, // holds the document's share token, nobody signed in
  dev: { actor: actor() }, // the owner
  dev_other: { actor: actor({ accountId: 2 }) }, // another developer (on a team: not a member)
  dev_guest: { actor: actor({ accountId: 2 }), shareGuest: true }, // another developer with the token
  app_user: { actor: actor({ accountType: 'app_user' }) }, // the owner, email confirmed
  app_user_unconfirmed: { actor: actor({ accountType: 'app_user', emailConfirmed: false }) },
  app_user_other: { actor: actor({ accountId: 2, accountType: 'app_user' }) },
  admin: { actor: actor({ accountId: 3, isSuperadmin: true }) }, // a superadmin, not the owner
  team_owner: { actor: actor({ accountId: 2 }), teamRole: 'owner' },
  team_editor: { actor: actor({ accountId: 2 }), teamRole: 'editor' },
  team_viewer: { actor: actor({ accountId: 2 }), teamRole: 'viewer' },
};

const TARGETS: Record<string, Target> = {
  main: null,
  team: 'team',
  site: doc(),
  app: doc({ enableSignups: true }),
  instance: doc({ sourceNodeId: 7 }),
  folder: doc({ type: 'folder' }),
  upload: doc({ type: 'upload' }),
  private_site: doc({ visibility: 'private' }),
  private_app: doc({ visibility: 'private', enableSignups: true }),
  private_instance: doc({ visibility: 'private', sourceNodeId: 7 }),
  private_folder: doc({ type: 'folder', visibility: 'private' }),
  private_upload: doc({ type: 'upload', visibility: 'private' }),
};

const DOCS = 'site+app+instance';
const PRIVATE_DOCS = 'private_site+private_app+private_instance';

/** What each caller gets, row by row of THE table: `who`, `target`, `action` (each may list several
 *  values with `+`, like the table) → 'ok' or the refusal's status. Written by hand, not derived. */
const CASES: [who: string, target: string, action: string, outcome: Outcome][] = [
  // *:DOCUMENTS:view visible_or_guest — public to all; private: the owner and the document's share guests.
  ['stranger+guest+dev+dev_other+app_user+app_user_other', DOCS, 'view', 'ok'],
  ['dev+app_user+guest+dev_guest', PRIVATE_DOCS, 'view', 'ok'],
  ['stranger+dev_other+app_user_other', PRIVATE_DOCS, 'view', 404],
  // *:folder+upload:view visible — a share token opens no folder or upload.
  ['stranger+guest+dev_other+app_user_other', 'folder+upload', 'view', 'ok'],
  ['dev', 'private_folder+private_upload', 'view', 'ok'],
  ['stranger+guest+dev_other+dev_guest', 'private_folder+private_upload', 'view', 404],
  // admin:DOCUMENTS+folder+upload:view allow
  ['admin', `${PRIVATE_DOCS}+private_folder+private_upload`, 'view', 'ok'],

  // dev:DOCUMENTS+upload:edit owner (admins through dev); nothing else opens in the editor.
  ['dev', `${DOCS}+upload+private_site+private_upload`, 'edit', 'ok'],
  ['dev_other+dev_guest+admin', `${DOCS}+upload`, 'edit', 400],
  ['dev_guest+admin', 'private_site', 'edit', 400],
  ['dev_other', 'private_site+private_upload', 'edit', 404],
  ['dev+admin', 'main+folder', 'edit', 403],
  // app_user:*:edit deny — share guests included.
  ['app_user+guest', 'main+site+instance+upload', 'edit', 403],
  ['guest', 'private_site', 'edit', 403],
  ['app_user_other', 'private_instance', 'edit', 404],
  // no_auth:*:edit login
  ['stranger', 'main+site+folder+upload', 'edit', 401],
  ['stranger', 'private_site', 'edit', 404],

  // dev:DOCUMENTS+upload:save owner_or_guest
  ['dev', `${DOCS}+upload`, 'save', 'ok'],
  ['dev_guest', `${DOCS}+private_site`, 'save', 'ok'],
  ['dev_other+admin', `${DOCS}+upload`, 'save', 400],
  ['dev', 'folder', 'save', 403],
  // app_user:instance:save confirmed_owner
  ['app_user', 'instance+private_instance', 'save', 'ok'],
  ['app_user_unconfirmed', 'instance', 'save', 403],
  ['app_user_other+guest', 'instance', 'save', 400],
  // app_user:regular_site+multi_tenant:save owner_or_guest
  ['guest', 'site+app+private_site+private_app', 'save', 'ok'],
  ['app_user', 'site+app', 'save', 'ok'],
  ['app_user_other', 'site+app', 'save', 400],
  ['app_user+guest', 'folder+upload', 'save', 403],
  // no_auth:*:save login
  ['stranger', `${DOCS}+upload`, 'save', 401],
  ['stranger', 'private_site', 'save', 404],

  // dev:DOCUMENTS:versions owner
  ['dev', `${DOCS}+private_site`, 'versions', 'ok'],
  ['dev_other+dev_guest+admin', DOCS, 'versions', 400],
  ['dev_guest', 'private_site', 'versions', 400],
  ['dev', 'folder+upload', 'versions', 403],
  // app_user:instance:versions confirmed_owner; a share guest never sees versions.
  ['app_user', 'instance', 'versions', 'ok'],
  ['app_user_unconfirmed', 'instance', 'versions', 403],
  ['app_user_other+guest', 'instance', 'versions', 400],
  ['app_user+guest', 'site+app+private_site', 'versions', 403],
  // no_auth:*:versions login
  ['stranger', `${DOCS}+upload`, 'versions', 401],

  // dev+app_user:DOCUMENTS:live owner_or_guest
  ['dev+app_user+guest+dev_guest', `${DOCS}+private_site`, 'live', 'ok'],
  ['dev_other+app_user_other+admin', DOCS, 'live', 400],
  // no_auth:*:live deny
  ['stranger', DOCS, 'live', 403],
  ['stranger', 'private_site', 'live', 404],

  // dev:main_app:upload signed_in; dev:DOCUMENTS+folder:upload owner
  ['dev+admin', 'main', 'upload', 'ok'],
  ['dev', `${DOCS}+folder`, 'upload', 'ok'],
  ['dev_other+admin', `${DOCS}+folder`, 'upload', 400],
  ['dev', 'upload', 'upload', 403],
  // app_user:instance:upload confirmed_owner; a share guest uploads nothing.
  ['app_user', 'instance', 'upload', 'ok'],
  ['app_user_unconfirmed', 'instance', 'upload', 403],
  ['app_user_other+guest', 'instance', 'upload', 400],
  ['app_user+guest', 'main+site+app+folder', 'upload', 403],
  // no_auth:*:upload login
  ['stranger', 'main+site+folder', 'upload', 401],

  // dev:main_app:manage signed_in; dev:DOCUMENTS+folder+upload:manage owner
  ['dev+admin', 'main', 'manage', 'ok'],
  ['dev', `${DOCS}+folder+upload`, 'manage', 'ok'],
  ['dev_other+dev_guest+admin', `${DOCS}+folder+upload`, 'manage', 400],
  ['admin+dev_guest', 'private_site', 'manage', 400],
  ['dev_other', 'private_site', 'manage', 404],
  ['app_user+guest', 'main+site+instance', 'manage', 403],
  // no_auth:*:manage login
  ['stranger', 'main+site+folder', 'manage', 401],

  // *:multi_tenant:signup visible — a share token opens no sign-ups of a private app.
  ['stranger+guest+dev+dev_other+app_user_other+admin', 'app', 'signup', 'ok'],
  ['dev', 'private_app', 'signup', 'ok'],
  ['stranger+guest+dev_other+admin', 'private_app', 'signup', 404],
  ['stranger+dev', 'main+site+instance', 'signup', 403],

  // dev+app_user:main_app:dashboard signed_in; no_auth:main_app:dashboard login
  ['dev+app_user+admin', 'main', 'dashboard', 'ok'],
  ['stranger', 'main', 'dashboard', 401],
  // *:main_app:setup allow
  ['stranger+guest+dev+app_user+admin', 'main', 'setup', 'ok'],

  // team_owner+team_editor:team:manage+sync allow; team_owner:team:members allow; everyone's view.
  ['team_owner', 'team', 'manage+sync+members+view', 'ok'],
  ['team_editor', 'team', 'manage+sync+view', 'ok'],
  ['team_editor', 'team', 'members', 403],
  ['team_viewer', 'team', 'view', 'ok'],
  ['team_viewer', 'team', 'manage+sync+members', 403],
  ['team_owner+team_editor+team_viewer', 'team', 'edit+save+versions+live+upload', 403],
  // Someone who is not a member has no row on a team, whoever they are.
  ['stranger+dev_other+admin', 'team', 'manage+sync+members+view', 403],
  // On the team's own files (callerOf sets the role only for them, on the team's host), its owners and editors
  // act as owners; its viewers read, private files too, and change nothing (403 viewer).
  ['team_owner+team_editor', `${DOCS}+${PRIVATE_DOCS}`, 'view+edit+save+versions+live+upload+manage', 'ok'],
  ['team_viewer', `${DOCS}+${PRIVATE_DOCS}+private_folder+private_upload`, 'view', 'ok'],
  ['team_viewer', DOCS, 'edit+save+versions+upload+manage', 403],

  // *:regular_site:bus host_owner — a host's bus (the host as its account's document, hostResource): its owner,
  // a team's owners and editors; nobody signed in 401; a viewer 403 viewer; anyone else 403, administrators too.
  ['dev+team_owner+team_editor', 'site', 'bus', 'ok'],
  ['stranger+guest', 'site', 'bus', 401],
  ['team_viewer+dev_other+dev_guest+admin', 'site', 'bus', 403],
  // *:regular_site:session host_member — a session on a host: its account (an app user's own host too), and every
  // member of its team, viewers too; nobody signed in 401; anyone else 403, administrators too.
  ['dev+app_user+team_owner+team_editor+team_viewer', 'site', 'session', 'ok'],
  ['stranger+guest', 'site', 'session', 401],
  ['dev_other+dev_guest+app_user_other+admin', 'site', 'session', 403],

  // admin:main_app:administer allow; no_auth:main_app:administer login — everyone else 403.
  ['admin', 'main', 'administer', 'ok'],
  ['stranger', 'main', 'administer', 401],
  ['dev+app_user+guest', 'main', 'administer', 403],
];

function outcomeOf(caller: Standing, target: Target, action: Action): Outcome {
  try {
    authorize(caller, target, action);
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof KilnError);
    return e.status as Outcome;
  }
}

test('every row of THE table, case by case: owners, others, share guests, app users, admins and team roles get what the table says', () => {
  const covered = new Set<string>();
  let cases = 0;
  for (const [whoList, targetList, actionList, expected] of CASES)
    for (const who of whoList.split('+'))
      for (const target of targetList.split('+'))
        for (const action of actionList.split('+') as Action[]) {
          const caller = WHO[who];
          const t = TARGETS[target];
          assert.ok(caller && t !== undefined, `${who} on ${target}: unknown in this test`);
          const label = `${who} ${action} ${target}`;
          assert.equal(outcomeOf(caller, t, action), expected, label);
          assert.equal(allows(caller, t, action), expected === 'ok', `allows agrees: ${label}`);
          const rule = ruleFor(caller, t, action);
          if (rule) covered.add(rule);
          cases++;
        }
  const rows = [...expandTable(ACCESS_TABLE).keys()];
  assert.deepEqual(
    rows.filter((k) => !covered.has(k)),
    [],
    'every row of the table is the deciding row of some case above',
  );
  assert.ok(cases > rows.length);
});

test('a private resource is hidden (404, like a missing one) from everyone the view rows refuse, whatever they ask', () => {
  const privateDoc = TARGETS.private_site;
  for (const action of ['view', 'edit', 'save', 'versions', 'live', 'upload', 'manage', 'signup'] as const) {
    assert.equal(outcomeOf(WHO.stranger, privateDoc, action), 404, action);
    assert.equal(outcomeOf(WHO.dev_other, privateDoc, action), 404, action);
  }
  // A share token opens the document only: an upload or folder stays hidden whatever it asks.
  for (const action of ['view', 'save', 'edit'] as const)
    assert.equal(outcomeOf(WHO.guest, TARGETS.private_upload, action), 404, action);
  assert.equal(ruleFor(WHO.dev_other, 'team', 'view'), null, 'not a member: no row');
  assert.equal(ruleFor(WHO.team_viewer, 'team', 'view'), 'team_viewer:team:view');
  assert.equal(ruleFor(WHO.guest, privateDoc, 'save'), 'app_user:regular_site:save', 'a guest is an app user');
});

test('the upload editor asks about the caller’s own uploads before one is read: developers and admins yes, app users 403, nobody signed in 401', () => {
  for (const who of ['dev', 'admin'] as const)
    assert.equal(outcomeOf(WHO[who], ownUploads(WHO[who].actor), 'edit'), 'ok', who);
  assert.equal(outcomeOf(WHO.app_user, ownUploads(WHO.app_user.actor), 'edit'), 403);
  assert.equal(outcomeOf(WHO.stranger, ownUploads(null), 'edit'), 401);
});
