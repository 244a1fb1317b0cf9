// Multi-tenant apps: a developer's document with `enable_signups` on. Visitors who sign up on it get
// an instance (see instances.ts). Use cases only — no HTTP here.
import { publishHostChanged } from '../events/publish.ts';
import { ownNodeById, updateNode } from '../store/nodes.ts';
import { appUsersOf, updateAccountRow } from '../store/accounts.ts';
import { endSessions } from '../store/sessions.ts';
import { grants, revokeGrants } from '../events/revocations.ts';
import type { Services } from '../services.ts';
import type { NodeRow } from '../store/schema.ts';
import { badRequest, notFound } from '../errors.ts';
import { findByPath } from '../nodes/find.ts';
import { assertCanEnableApp } from '../billing/plans.ts';

/** Turns signups on or off for a document the actor owns. Only documents can be apps, and an
 *  instance (an app user's copy) cannot become one. Existing instances are untouched either way.
 *  Callers authorize `manage` on the node first (the owner only). */
export async function setEnableSignups(
  s: Services,
  actorId: number,
  nodeId: number,
  enable: boolean,
): Promise<NodeRow> {
  const { db } = s.database;
  const node = await ownNodeById(db, nodeId, actorId);
  if (!node) throw notFound('No such file or folder.');
  if (node.type !== 'site') throw badRequest('Only documents can be apps.', 'not-a-document');
  if (node.source_node_id !== null)
    throw badRequest('An instance of an app cannot itself take signups.', 'is-instance');
  const value = enable ? 1 : 0;
  if (node.enable_signups === value) return node;
  // The plan's multi-tenant app allowance (grows with months active; src/billing/plans.ts).
  if (enable) await assertCanEnableApp(s, actorId, node.id);
  return updateNode(db, node.id, { enable_signups: value });
}

/** The document at `appPath` on an account's host (`todo.html`, `tools/todo.html`, a leading `/` is
 *  fine), or 404. `signupsOnly`: it must be an app (signups enabled). No visibility check: callers authorize. */
export async function appAt(
  s: Services,
  accountId: number,
  appPath: string,
  o: { signupsOnly: boolean },
): Promise<NodeRow> {
  const path = appPath.replace(/^\/+/, '');
  const node = path ? await findByPath(s, accountId, path) : undefined;
  if (node?.type !== 'site') throw notFound('No such app.');
  if (o.signupsOnly && node.enable_signups !== 1) throw notFound('This document does not take signups.');
  return node;
}

/** Who signed up on the owner's app: username, email (confirmed or not), when, their copy, disabled. */
export async function appSignups(s: Services, actorId: number, appId: number) {
  const app = await ownNodeById(s.database.db, appId, actorId);
  if (app?.type !== 'site') throw notFound('No such file or folder.');
  const rows = await appUsersOf(s.database.db, app.id);
  return {
    app,
    users: rows.map((r) => ({
      id: r.id,
      username: r.username,
      email: r.email,
      emailConfirmed: r.email_confirmed === 1,
      createdAt: r.created_at,
      instance: r.instance ?? null,
      disabled: r.suspended_at !== null,
    })),
  };
}

/** Disables (or enables again) an app user of the owner's app: a disabled one cannot sign in, and its
 *  copy answers "unavailable" (it is a suspended account). */
export async function setAppUserDisabled(
  s: Services,
  actorId: number,
  appId: number,
  userId: number,
  disabled: boolean,
) {
  const { users } = await appSignups(s, actorId, appId);
  const user = users.find((u) => u.id === userId);
  if (!user) throw notFound('No such sign-up of this app.');
  await updateAccountRow(s.database.db, user.id, { suspended_at: disabled ? s.clock.now().toISOString() : null });
  // Its copy answers "unavailable" at once, in every process, as a suspension does.
  await publishHostChanged(s, user.id);
  if (disabled)
    await revokeGrants(s, (await endSessions(s.database.db, user.id, s.clock.now(), {})).map(grants.session));
  return user;
}
