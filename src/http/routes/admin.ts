// Administration (superadmins, main app). Bodies may be JSON or form-encoded.
//
//   GET  /_/admin[?q=&page=]                 accounts (search, paging) and the instance settings
//   POST /_/admin/accounts/:id/plan          {plan}
//   POST /_/admin/accounts/:id/suspend       {suspended: true|false}
//   POST /_/admin/settings                   {signups: open|invite|closed, defaultPlan, uploadFree?,
//                                            uploadPersonal?, uploadMaker? (MB per file)}
//   POST /_/admin/ai-edit                    {free, personal, maker}: the plans that include AI editing;
//                                            requestsFree…, kbFree… (optional): each plan's daily AI budget per
//                                            account (requests, and KB sent to the engine)
//   POST /_/admin/invites                    a one-time sign-up link (JSON {url})
//   POST /_/admin/accounts/:id/impersonate   sign in as the account, for support (its activity says so)
//   POST /_/admin/mail-test                  {to}: a test message through the configured mail
//   POST /_/admin/accounts/:id/confirmation  a new confirmation link to an app user
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import type { Actor } from '../../access/actor.ts';
import { authorizeActor } from '../../access/authorize.ts';
import { forbidden } from '../../errors.ts';
import {
  createSignupInvite,
  impersonate,
  saveUploadLimits,
  sendTestMail,
  unconfirmedAppUser,
  instanceSettings,
  listAccounts,
  saveInstanceSettings,
  setAccountPlan,
  setSuspended,
} from '../../admin/admin.ts';
import { assertSameOrigin } from '../origin.ts';
import { onlyOn } from '../hosts.ts';
import { backWithRefusal, done, flag, idParam, parse, queryMsg, queryText, sendPage, wantsHtml } from '../io.ts';
import { adminPage } from '../../ui/admin.ts';
import type { Msg } from '../../ui/pages.ts';
import { signIn } from '../sessions.ts';
import { sendConfirmation } from '../../apps/app-users.ts';
import { documentHostUrl } from '../../core/urls.ts';
import { childPathOf } from '../../nodes/find.ts';

const ADMIN = '/_/admin';

/** A budget field of the AI editing form: a whole number of at least 1, or absent (left as it is). */
const budgetField = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z.coerce.number().int('Budgets are whole numbers.').min(1, 'A budget is at least 1.').optional(),
);

const bodies = {
  plan: z.object({ plan: z.string().max(20) }),
  suspend: z.object({ suspended: flag }),
  // Checkboxes: an unchecked one is not sent.
  aiEdit: z.object({
    free: flag.default(false),
    personal: flag.default(false),
    maker: flag.default(false),
    requestsFree: budgetField,
    requestsPersonal: budgetField,
    requestsMaker: budgetField,
    kbFree: budgetField,
    kbPersonal: budgetField,
    kbMaker: budgetField,
  }),
  settings: z.object({
    signups: z.string().max(20),
    defaultPlan: z.string().max(20),
    documentNames: z.string().max(20).optional(),
    uploadFree: z.coerce.number().optional(),
    uploadPersonal: z.coerce.number().optional(),
    uploadMaker: z.coerce.number().optional(),
  }),
};

const kbToBytes = (kb: number | undefined) => (kb === undefined ? undefined : kb * 1024);

const plugin: RoutePlugin = async (app, { services: s }) => {
  // A form on the admin page that is refused (a setting in conflict, a bad value) goes back to the page with
  // the refusal in words, not to a bare error page; programs get the error handler's JSON as before.
  app.addHook('onRoute', (route) => {
    if (route.method !== 'POST') return;
    const handler = route.handler;
    route.handler = async function (this: unknown, req, reply) {
      try {
        return await handler.call(this as never, req, reply);
      } catch (err) {
        const back = backWithRefusal(req, reply, err, ADMIN);
        if (back) return back;
        throw err;
      }
    };
  });
  onlyOn(app, 'main');

  /** A signed-in superadmin; everyone else is refused. */
  function admin(req: FastifyRequest, write: boolean): Actor {
    if (write) assertSameOrigin(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    if (!actor.isSuperadmin) throw forbidden('Only administrators of this Kiln may do that.');
    return actor;
  }

  /** The page (JSON for programs): accounts found by `q`, the instance settings, and a new invitation link. */
  async function adminView(
    req: FastifyRequest,
    reply: FastifyReply,
    actor: Actor,
    o: { inviteUrl?: string; msg?: Msg },
  ) {
    const q = queryText(req, 'q') ?? '';
    const listing = await listAccounts(s, q, Number(queryText(req, 'page') ?? 1) || 1);
    const settings = await instanceSettings(s);
    reply.header('cache-control', 'no-store');
    const uploadMb = {
      free: s.planSettings.uploadBytes.free / 2 ** 20,
      personal: s.planSettings.uploadBytes.personal / 2 ** 20,
      maker: s.planSettings.uploadBytes.maker / 2 ** 20,
    };
    const aiEdit = {
      engines: s.aiEdit.list(),
      plans: { ...s.planSettings.aiEditPlans },
      budgets: structuredClone(s.planSettings.aiEditBudget),
    };
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', ...listing, settings, uploadMb, aiEdit };
    return sendPage(reply, adminPage({ username: actor.username, q, listing, settings, uploadMb, aiEdit, ...o }));
  }

  app.get(ADMIN, async (req, reply) => adminView(req, reply, admin(req, false), { msg: queryMsg(req) }));

  app.post(`${ADMIN}/accounts/:id/plan`, async (req, reply) => {
    const actor = admin(req, true);
    const r = await setAccountPlan(s, actor.accountId, idParam(req), parse(bodies.plan, req.body).plan);
    return done(req, reply, `${r.username} is on the ${r.plan} plan now.`, { redirect: ADMIN });
  });

  app.post(`${ADMIN}/accounts/:id/suspend`, async (req, reply) => {
    const actor = admin(req, true);
    const r = await setSuspended(s, actor.accountId, idParam(req), parse(bodies.suspend, req.body).suspended);
    const msg = r.suspended
      ? `${r.username} is suspended: its pages answer "unavailable", it is signed out everywhere and its sync keys stop.`
      : `${r.username} is active again.`;
    return done(req, reply, msg, { redirect: ADMIN });
  });

  app.post(`${ADMIN}/settings`, async (req, reply) => {
    admin(req, true);
    const b = parse(bodies.settings, req.body);
    const saved = await saveInstanceSettings(s, b);
    if (b.uploadFree !== undefined || b.uploadPersonal !== undefined || b.uploadMaker !== undefined)
      await saveUploadLimits(s, { free: b.uploadFree, personal: b.uploadPersonal, maker: b.uploadMaker });
    const names = saved.documentNames === 'account' ? 'unique per account' : 'unique across this Kiln';
    const msg = `Saved. Sign-ups: ${saved.signups}; new accounts start on the ${saved.defaultPlan} plan; document names are ${names}.`;
    return done(req, reply, msg, {
      redirect: ADMIN,
      extra: { settings: saved },
    });
  });

  app.post(`${ADMIN}/ai-edit`, async (req, reply) => {
    admin(req, true);
    const b = parse(bodies.aiEdit, req.body ?? {});
    const plans = { free: b.free, personal: b.personal, maker: b.maker };
    await s.planSettings.saveAiEdit(plans);
    await s.planSettings.saveAiEditBudget({
      free: { requests: b.requestsFree, bytes: kbToBytes(b.kbFree) },
      personal: { requests: b.requestsPersonal, bytes: kbToBytes(b.kbPersonal) },
      maker: { requests: b.requestsMaker, bytes: kbToBytes(b.kbMaker) },
    });
    const on = (Object.keys(plans) as Array<keyof typeof plans>).filter((p) => plans[p]);
    const msg = on.length
      ? `AI editing is included in the ${on.join(', ')} plan${on.length > 1 ? 's' : ''}.`
      : 'AI editing is included in no plan.';
    const budgets = s.planSettings.aiEditBudget;
    const each = (Object.keys(budgets) as Array<keyof typeof budgets>)
      .map((p) => `${p}: ${budgets[p].requests} requests and ${Math.round(budgets[p].bytes / 1024)} KB a day`)
      .join('; ');
    return done(req, reply, `Saved. ${msg} Budget per account: ${each}.`, {
      redirect: ADMIN,
      extra: { plans, budgets: structuredClone(budgets) },
    });
  });

  app.post(`${ADMIN}/accounts/:id/impersonate`, async (req, reply) => {
    const actor = admin(req, true);
    const who = await impersonate(s, actor.accountId, idParam(req));
    req.log.warn({ admin: actor.username, account: who.username }, 'an administrator signed in as an account');
    await signIn(req, reply, s, who.accountId);
    return done(req, reply, `You are signed in as ${who.username}, for support. Sign out to end it.`, {
      redirect: '/_/dashboard',
    });
  });

  app.post(`${ADMIN}/mail-test`, async (req, reply) => {
    admin(req, true);
    const to = await sendTestMail(s, parse(z.object({ to: z.string().max(320) }), req.body).to);
    const how = s.config.smtpUrl ? 'through SMTP' : `into the outbox folder (${s.config.dataDir}/outbox; no SMTP_URL)`;
    return done(req, reply, `A test message went to ${to} ${how}.`, { redirect: ADMIN });
  });

  app.post(`${ADMIN}/accounts/:id/confirmation`, async (req, reply) => {
    admin(req, true);
    const { person, app: node, appOwner } = await unconfirmedAppUser(s, idParam(req));
    await sendConfirmation(
      s,
      { accountId: person.id, email: person.email },
      { hostUrl: documentHostUrl(s.config, appOwner), appName: node.name, appPath: childPathOf(node) },
    );
    return done(req, reply, `A new confirmation link went to ${person.email}.`, { redirect: ADMIN });
  });

  app.post(`${ADMIN}/invites`, async (req, reply) => {
    const actor = admin(req, true);
    const url = `${s.config.baseUrl}/_/signup?invite=${await createSignupInvite(s)}`;
    const msg = 'A new invitation link: copy it below and send it to the one person it is for.';
    // The page itself (no redirect): the link shows on it, in a field to copy, not in the address bar.
    if (wantsHtml(req)) return adminView(req, reply, actor, { inviteUrl: url, msg: { text: msg, type: 'success' } });
    return done(req, reply, `Invitation link (one person, 14 days): ${url}`, { extra: { url } });
  });
};

export default plugin;
