// Multi-tenant apps: a developer's document with `enable_signups` on. Visitors who sign up on it get
// an instance (see instances.ts). Use cases only — no HTTP here.
import { publishHostChanged } from '../events/publish.ts';
import { updateNode } from '../store/nodes.ts';
import { accountById, appUsersOf, updateAccountRow } from '../store/accounts.ts';
import { endSessions } from '../store/sessions.ts';
import { grants, revokeGrants } from '../events/revocations.ts';
import type { Services } from '../services.ts';
import type { Ctx } from '../context.ts';
import type { NodeRow } from '../store/schema.ts';
import { badRequest, notFound } from '../errors.ts';
import { findByPath } from '../nodes/find.ts';
import { assertCanEnableApp } from '../billing/plans.ts';

/** Turns signups on or off for a document the caller manages (`ctx.nodes`: its account, a team's owners and
 *  editors). Only documents can be apps, and an instance (an app user's copy) cannot become one. Existing
 *  instances are untouched either way. The document's account's plan counts its apps. */
export async function setEnableSignups(ctx: Ctx, input: { nodeId: number; enable: boolean }): Promise<NodeRow> {
  const node = await ctx.nodes.open(input.nodeId, 'manage');
  if (node.type !== 'site') throw badRequest('Only documents can be apps.', 'not-a-document');
  if (node.source_node_id !== null)
    throw badRequest('An instance of an app cannot itself take signups.', 'is-instance');
  const value = input.enable ? 1 : 0;
  if (node.enable_signups === value) return node;
  // The plan's multi-tenant app allowance (grows with months active; src/billing/plans.ts).
  if (input.enable) await assertCanEnableApp(ctx, node.owner_id, node.id);
  return updateNode(ctx.database.db, node.id, { enable_signups: value });
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

/** Who signed up on an app the caller manages: username, email (confirmed or not), when, their copy, disabled;
 *  and whose host serves the app. */
export async function appSignups(ctx: Ctx, input: { appId: number }) {
  const app = await ctx.nodes.open(input.appId, 'manage');
  if (app.type !== 'site') throw notFound('No such file or folder.');
  const { db } = ctx.database;
  const rows = await appUsersOf(db, app.id);
  return {
    app,
    hostUsername: (await accountById(db, app.owner_id))?.username ?? '',
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
export async function setAppUserDisabled(ctx: Ctx, input: { appId: number; userId: number; disabled: boolean }) {
  const { userId, disabled } = input;
  const s = ctx;
  const { users } = await appSignups(ctx, { appId: input.appId });
  const user = users.find((u) => u.id === userId);
  if (!user) throw notFound('No such sign-up of this app.');
  await updateAccountRow(s.database.db, user.id, { suspended_at: disabled ? s.clock.now().toISOString() : null });
  // Its copy answers "unavailable" at once, in every process, as a suspension does.
  await publishHostChanged(s, user.id);
  if (disabled)
    await revokeGrants(s, (await endSessions(s.database.db, user.id, s.clock.now(), {})).map(grants.session));
  return user;
}
