// The access table's lookup order, `+` expansion and refusals, tested directly (pure functions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ACCESS_TABLE, expandTable, lookup, lookupIn, type Check } from '../src/access/table.ts';
import { allowsTeam, authorize, authorizeTeam, type Resource } from '../src/access/authorize.ts';
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
