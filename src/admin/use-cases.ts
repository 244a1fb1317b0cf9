// The administration's use cases (/_/admin): each asks first whether its caller is an administrator of this
// Kiln (the table's main-app `manage`, then superadmin), then does its part of src/admin/admin.ts.
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import type { Plan } from '../store/schema.ts';
import { authorize, authorizeActor } from '../access/authorize.ts';
import { forbidden } from '../errors.ts';
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

/** The caller, when an administrator of this Kiln; else the table's refusal (401 nobody), or 403. */
export function administrator(ctx: Pick<Ctx, 'caller'>): Actor {
  const actor = authorizeActor({ actor: ctx.caller.actor }, null, 'manage');
  if (!actor.isSuperadmin) throw forbidden('Only administrators of this Kiln may do that.');
  return actor;
}

/** Whether the caller may run first-run setup (the table's main-app `setup`; whether Kiln is set up already
 *  is the setup's own question). */
export function mayRunSetup(ctx: Pick<Ctx, 'caller'>): void {
  authorize({ actor: ctx.caller.actor }, null, 'setup');
}

/** The admin page's facts: accounts found by `q` (a page of them), the instance settings, the plans' upload
 *  sizes (MB), AI editing (engines, plans, budgets) and agents (MCP: on, plans). */
export async function adminPanel(ctx: Ctx, input: { q: string; page: number }) {
  const actor = administrator(ctx);
  const listing = await listAccounts(ctx, input.q, input.page);
  const settings = await instanceSettings(ctx);
  const bytes = ctx.planSettings.uploadBytes;
  const uploadMb = { free: bytes.free / 2 ** 20, personal: bytes.personal / 2 ** 20, maker: bytes.maker / 2 ** 20 };
  const aiEdit = {
    engines: ctx.aiEdit.list(),
    plans: { ...ctx.planSettings.aiEditPlans },
    budgets: structuredClone(ctx.planSettings.aiEditBudget),
  };
  const mcp = { on: ctx.planSettings.mcp.on, plans: { ...ctx.planSettings.mcp.plans } };
  return { actor, listing, settings, uploadMb, aiEdit, mcp };
}

export function changePlan(ctx: Ctx, input: { accountId: number; plan: string }) {
  return setAccountPlan(ctx, administrator(ctx).accountId, input.accountId, input.plan);
}

export function suspend(ctx: Ctx, input: { accountId: number; suspended: boolean }) {
  return setSuspended(ctx, administrator(ctx).accountId, input.accountId, input.suspended);
}

/** How this Kiln takes new accounts, names documents, and how large an upload each plan takes. */
export async function saveSettings(
  ctx: Ctx,
  input: { signups: string; defaultPlan: string; documentNames?: string } & Partial<Record<UploadField, number>>,
) {
  administrator(ctx);
  const saved = await saveInstanceSettings(ctx, input);
  if (input.uploadFree !== undefined || input.uploadPersonal !== undefined || input.uploadMaker !== undefined)
    await saveUploadLimits(ctx, { free: input.uploadFree, personal: input.uploadPersonal, maker: input.uploadMaker });
  return saved;
}
type UploadField = 'uploadFree' | 'uploadPersonal' | 'uploadMaker';

/** The plans that include AI editing, and each plan's daily budget per account (absent: left as it is). */
export async function saveAiEditing(
  ctx: Ctx,
  input: {
    plans: Record<Plan, boolean>;
    budgets: Record<Plan, { requests?: number; bytes?: number }>;
  },
) {
  administrator(ctx);
  await ctx.planSettings.saveAiEdit(input.plans);
  await ctx.planSettings.saveAiEditBudget(input.budgets);
  return { plans: input.plans, budgets: structuredClone(ctx.planSettings.aiEditBudget) };
}

/** Whether agents may connect over MCP (`/_/mcp`): on this Kiln at all, and for which plans' accounts. */
export async function saveMcp(ctx: Ctx, input: { on: boolean; plans: Record<Plan, boolean> }) {
  administrator(ctx);
  await ctx.planSettings.saveMcp(input.on, input.plans);
  return { on: ctx.planSettings.mcp.on, plans: { ...ctx.planSettings.mcp.plans } };
}

/** Support: the administrator acts as the account (the route signs them in as it). */
export async function signInAs(ctx: Ctx, input: { accountId: number }) {
  const actor = administrator(ctx);
  return { admin: actor, ...(await impersonate(ctx, actor.accountId, input.accountId)) };
}

export function testMail(ctx: Ctx, input: { to: string }): Promise<string> {
  administrator(ctx);
  return sendTestMail(ctx, input.to);
}

/** A new confirmation link to an app user who has not confirmed their email; returns the address. */
export async function resendConfirmation(ctx: Ctx, input: { accountId: number }): Promise<string> {
  administrator(ctx);
  const { person, app, appOwner } = await unconfirmedAppUser(ctx, input.accountId);
  await sendConfirmation(
    ctx,
    { accountId: person.id, email: person.email },
    { hostUrl: documentHostUrl(ctx.config, appOwner), appName: app.name, appPath: childPathOf(app) },
  );
  return person.email;
}

/** A one-time sign-up link. */
export async function newSignupInvite(ctx: Ctx): Promise<{ url: string; actor: Actor }> {
  const actor = administrator(ctx);
  return { url: `${ctx.config.baseUrl}/_/signup?invite=${await createSignupInvite(ctx)}`, actor };
}
