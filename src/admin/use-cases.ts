// The administration's use cases (/_/admin): each runs with an `AdminCtx`, the ctx of a caller the access table
// let administer this Kiln (asked once, by `asAdministrator`), and does its part of src/admin/admin.ts.
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import type { Plan } from '../store/schema.ts';
import { authorize, authorizeActor } from '../access/authorize.ts';
import { documentHostUrl } from '../core/urls.ts';
import { childPathOf } from '../nodes/tree.ts';
import { sendConfirmation } from '../apps/app-users.ts';
import {
  createSignupInvite,
  impersonate,
  instanceSettings,
  listAccounts,
  saveInstanceSettings,
  saveUploadLimits,
  sendTestMail,
  setAccountPlan,
  setSuspended,
  unconfirmedAppUser,
} from './admin.ts';

/** What the administration's use cases run with: the ctx of an administrator, and who they are. */
export type AdminCtx = Ctx & { admin: Actor };

/** The ctx for the administration's use cases, when the table lets the caller administer this Kiln; else its
 *  refusal (401 nobody, 403 anyone else). */
export function asAdministrator<C extends Ctx>(ctx: C): C & { admin: Actor } {
  return { ...ctx, admin: authorizeActor({ actor: ctx.caller.actor }, null, 'administer') };
}

/** Whether the caller may run first-run setup (the table's main-app `setup`; whether Kiln is set up already
 *  is the setup's own question). */
export function mayRunSetup(ctx: Pick<Ctx, 'caller'>): void {
  authorize({ actor: ctx.caller.actor }, null, 'setup');
}

/** The admin page's facts: accounts found by `q` (a page of them), the instance settings, the plans' upload
 *  sizes (MB), AI editing (engines, plans, budgets) and agents (MCP: on, plans). */
export async function adminPanel(ctx: AdminCtx, input: { q: string; page: number }) {
  const actor = ctx.admin;
  const listing = await listAccounts(ctx, input.q, input.page);
  const settings = await instanceSettings(ctx);
  const bytes = ctx.planSettings.uploadBytes;
  const uploadMb = { free: bytes.free / 2 ** 20, personal: bytes.personal / 2 ** 20, maker: bytes.maker / 2 ** 20 };
  const aiEdit = {
    engines: ctx.aiEdit.list(),
    plans: { ...ctx.planSettings.aiEditPlans },
    budgets: structuredClone(ctx.planSettings.aiEditBudget),
  };
  const mcp = {
    on: ctx.planSettings.mcp.on,
    plans: { ...ctx.planSettings.mcp.plans },
    callsPerMinute: ctx.config.mcpCallsPerMinute,
  };
  return { actor, listing, settings, uploadMb, aiEdit, mcp };
}

export function changePlan(ctx: AdminCtx, input: { accountId: number; plan: string }) {
  return setAccountPlan(ctx, ctx.admin.accountId, input.accountId, input.plan);
}

export function suspend(ctx: AdminCtx, input: { accountId: number; suspended: boolean }) {
  return setSuspended(ctx, ctx.admin.accountId, input.accountId, input.suspended);
}

/** How this Kiln takes new accounts, names documents, and how large an upload each plan takes. */
export async function saveSettings(
  ctx: AdminCtx,
  input: { signups: string; defaultPlan: string; documentNames?: string } & Partial<Record<UploadField, number>>,
) {
  const saved = await saveInstanceSettings(ctx, input);
  if (input.uploadFree !== undefined || input.uploadPersonal !== undefined || input.uploadMaker !== undefined)
    await saveUploadLimits(ctx, { free: input.uploadFree, personal: input.uploadPersonal, maker: input.uploadMaker });
  return saved;
}
type UploadField = 'uploadFree' | 'uploadPersonal' | 'uploadMaker';

/** The plans that include AI editing, and each plan's daily budget per account (absent: left as it is). */
export async function saveAiEditing(
  ctx: AdminCtx,
  input: {
    plans: Record<Plan, boolean>;
    budgets: Record<Plan, { requests?: number; bytes?: number }>;
  },
) {
  await ctx.planSettings.saveAiEdit(input.plans);
  await ctx.planSettings.saveAiEditBudget(input.budgets);
  return { plans: input.plans, budgets: structuredClone(ctx.planSettings.aiEditBudget) };
}

/** Whether agents may connect over MCP (`/_/mcp`): on this Kiln at all, and for which plans' accounts. */
export async function saveMcp(ctx: AdminCtx, input: { on: boolean; plans: Record<Plan, boolean> }) {
  await ctx.planSettings.saveMcp(input.on, input.plans);
  return { on: ctx.planSettings.mcp.on, plans: { ...ctx.planSettings.mcp.plans } };
}

/** Support: the administrator acts as the account (the route signs them in as it). */
export async function signInAs(ctx: AdminCtx, input: { accountId: number }) {
  const actor = ctx.admin;
  return { admin: actor, ...(await impersonate(ctx, actor.accountId, input.accountId)) };
}

export function testMail(ctx: AdminCtx, input: { to: string }): Promise<string> {
  return sendTestMail(ctx, input.to);
}

/** A new confirmation link to an app user who has not confirmed their email; returns the address. */
export async function resendConfirmation(ctx: AdminCtx, input: { accountId: number }): Promise<string> {
  const { person, app, appOwner } = await unconfirmedAppUser(ctx, input.accountId);
  await sendConfirmation(
    ctx,
    { accountId: person.id, email: person.email },
    { hostUrl: documentHostUrl(ctx.config, appOwner), appName: app.name, appPath: childPathOf(app) },
  );
  return person.email;
}

/** A one-time sign-up link. */
export async function newSignupInvite(ctx: AdminCtx): Promise<{ url: string; actor: Actor }> {
  const actor = ctx.admin;
  return { url: `${ctx.config.baseUrl}/_/signup?invite=${await createSignupInvite(ctx)}`, actor };
}
