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
//   POST /_/admin/mcp                        {on, free, personal, maker}: agents (MCP) on this Kiln, and the plans
//                                            that include them
//   POST /_/admin/invites                    a one-time sign-up link (JSON {url})
//   POST /_/admin/accounts/:id/impersonate   sign in as the account, for support (its activity says so)
//   POST /_/admin/mail-test                  {to}: a test message through the configured mail
//   POST /_/admin/accounts/:id/confirmation  a new confirmation link to an app user
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import type { Msg } from '../../ui/pages.ts';
import {
  adminPanel,
  asAdministrator,
  changePlan,
  newSignupInvite,
  resendConfirmation,
  saveAiEditing,
  saveMcp,
  saveSettings,
  signInAs,
  suspend,
  testMail,
  type AdminCtx,
} from '../../admin/use-cases.ts';
import { decidedOnce } from '../door.ts';
import { assertSameOrigin } from '../origin.ts';
import { onlyOn } from '../hosts.ts';
import { backWithRefusal, done, flag, queryMsg, sendPage, wantsHtml } from '../io.ts';
import { adminPage } from '../../ui/admin.ts';
import { signIn } from '../sessions.ts';

const ADMIN = '/_/admin';

/** A budget field of the AI editing form: a whole number of at least 1, or absent (left as it is). */
const budgetField = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z.coerce.number().int('Budgets are whole numbers.').min(1, 'A budget is at least 1.').optional(),
);

const schemas = {
  // The page's own `msg` (a signed message) rides along in the query.
  page: z.looseObject({
    q: z.string().max(1000).optional(),
    page: z.preprocess((v) => Number(v) || 1, z.number()).optional(),
  }),
  // A malformed id names no account: 404, as an unknown one.
  account: z.object({
    id: z
      .string()
      .regex(/^\d{1,15}$/)
      .transform(Number)
      .catch(0),
  }),
  plan: z.object({ plan: z.string().max(20) }),
  suspend: z.object({ suspended: flag }),
  // Checkboxes: an unchecked one is not sent.
  aiEdit: z
    .object({
      free: flag.default(false),
      personal: flag.default(false),
      maker: flag.default(false),
      requestsFree: budgetField,
      requestsPersonal: budgetField,
      requestsMaker: budgetField,
      kbFree: budgetField,
      kbPersonal: budgetField,
      kbMaker: budgetField,
    })
    .nullish()
    .transform((b) => b ?? { free: false, personal: false, maker: false }),
  mcp: z
    .object({
      on: flag.default(false),
      free: flag.default(false),
      personal: flag.default(false),
      maker: flag.default(false),
    })
    .nullish()
    .transform((b) => b ?? { on: false, free: false, personal: false, maker: false }),
  settings: z.object({
    signups: z.string().max(20),
    defaultPlan: z.string().max(20),
    documentNames: z.string().max(20).optional(),
    uploadFree: z.coerce.number().optional(),
    uploadPersonal: z.coerce.number().optional(),
    uploadMaker: z.coerce.number().optional(),
  }),
  mail: z.object({ to: z.string().max(320) }),
};

const kbToBytes = (kb: number | undefined) => (kb === undefined ? undefined : kb * 1024);

const plugin: RoutePlugin = async (app) => {
  // A form on the admin page that is refused (a setting in conflict, a bad value: its schema's refusal too)
  // goes back to the page with the refusal in words, not to a bare error page; programs get the error
  // handler's JSON as before.
  app.addHook('onRoute', (route) => {
    if (route.method !== 'POST') return;
    route.attachValidation = true;
    const handler = route.handler;
    route.handler = async function (this: unknown, req, reply) {
      try {
        if (req.validationError) throw req.validationError;
        return await handler.call(this as never, req, reply);
      } catch (err) {
        const back = backWithRefusal(req, reply, err, ADMIN);
        if (back) return back;
        throw err;
      }
    };
  });
  onlyOn(app, 'main');
  // Another origin's form is refused, then anyone not an administrator, before their input is judged: asked
  // once, and the handlers hand that administrator's ctx to the use cases.
  const admin = decidedOnce<AdminCtx>('the administrator');
  app.addHook('preValidation', async (req) => {
    if (req.method === 'POST') assertSameOrigin(req);
    admin.decide(req, asAdministrator(req.ctx));
  });

  /** The page (JSON for programs): accounts found by `q`, the instance settings, and a new invitation link. */
  async function adminView(req: FastifyRequest, reply: FastifyReply, o: { inviteUrl?: string; msg?: Msg }) {
    const query = schemas.page.parse(req.query ?? {});
    const q = query.q ?? '';
    const { actor, ...panel } = await adminPanel(admin.of(req), { q, page: query.page ?? 1 });
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) {
      const { listing, ...rest } = panel;
      return { msg: '', msgType: 'success', ...listing, ...rest };
    }
    return sendPage(reply, adminPage({ username: actor.username, q, ...panel, ...o }));
  }

  app.get(ADMIN, { schema: { querystring: schemas.page } }, async (req, reply) =>
    adminView(req, reply, { msg: queryMsg(req) }),
  );

  app.post(
    `${ADMIN}/accounts/:id/plan`,
    { schema: { params: schemas.account, body: schemas.plan } },
    async (req, reply) => {
      const r = await changePlan(admin.of(req), { accountId: req.params.id, plan: req.body.plan });
      return done(req, reply, `${r.username} is on the ${r.plan} plan now.`, { redirect: ADMIN });
    },
  );

  app.post(
    `${ADMIN}/accounts/:id/suspend`,
    { schema: { params: schemas.account, body: schemas.suspend } },
    async (req, reply) => {
      const r = await suspend(admin.of(req), { accountId: req.params.id, suspended: req.body.suspended });
      const msg = r.suspended
        ? `${r.username} is suspended: its pages answer "unavailable", it is signed out everywhere and its sync keys stop.`
        : `${r.username} is active again.`;
      return done(req, reply, msg, { redirect: ADMIN });
    },
  );

  app.post(`${ADMIN}/settings`, { schema: { body: schemas.settings } }, async (req, reply) => {
    const saved = await saveSettings(admin.of(req), req.body);
    const names = saved.documentNames === 'account' ? 'unique per account' : 'unique across this Kiln';
    const msg = `Saved. Sign-ups: ${saved.signups}; new accounts start on the ${saved.defaultPlan} plan; document names are ${names}.`;
    return done(req, reply, msg, { redirect: ADMIN, extra: { settings: saved } });
  });

  app.post(`${ADMIN}/ai-edit`, { schema: { body: schemas.aiEdit } }, async (req, reply) => {
    const b = req.body;
    const { plans, budgets } = await saveAiEditing(admin.of(req), {
      plans: { free: b.free, personal: b.personal, maker: b.maker },
      budgets: {
        free: { requests: b.requestsFree, bytes: kbToBytes(b.kbFree) },
        personal: { requests: b.requestsPersonal, bytes: kbToBytes(b.kbPersonal) },
        maker: { requests: b.requestsMaker, bytes: kbToBytes(b.kbMaker) },
      },
    });
    const on = (Object.keys(plans) as Array<keyof typeof plans>).filter((p) => plans[p]);
    const msg = on.length
      ? `AI editing is included in the ${on.join(', ')} plan${on.length > 1 ? 's' : ''}.`
      : 'AI editing is included in no plan.';
    const each = (Object.keys(budgets) as Array<keyof typeof budgets>)
      .map((p) => `${p}: ${budgets[p].requests} requests and ${Math.round(budgets[p].bytes / 1024)} KB a day`)
      .join('; ');
    return done(req, reply, `Saved. ${msg} Budget per account: ${each}.`, {
      redirect: ADMIN,
      extra: { plans, budgets },
    });
  });

  app.post(`${ADMIN}/mcp`, { schema: { body: schemas.mcp } }, async (req, reply) => {
    const b = req.body;
    const saved = await saveMcp(admin.of(req), {
      on: b.on,
      plans: { free: b.free, personal: b.personal, maker: b.maker },
    });
    const on = (Object.keys(saved.plans) as Array<keyof typeof saved.plans>).filter((p) => saved.plans[p]);
    const msg = !saved.on
      ? 'Saved. Agents (MCP) are off on this Kiln: /_/mcp refuses every call (403 mcp-off).'
      : on.length
        ? `Saved. Agents (MCP) are on, for the ${on.join(', ')} plan${on.length > 1 ? 's' : ''}.`
        : 'Saved. Agents (MCP) are on, but included in no plan: only administrators may connect one.';
    return done(req, reply, msg, { redirect: ADMIN, extra: { mcp: saved } });
  });

  app.post(`${ADMIN}/accounts/:id/impersonate`, { schema: { params: schemas.account } }, async (req, reply) => {
    const who = await signInAs(admin.of(req), { accountId: req.params.id });
    req.log.warn({ admin: who.admin.username, account: who.username }, 'an administrator signed in as an account');
    await signIn(req, reply, req.ctx, who.accountId);
    return done(req, reply, `You are signed in as ${who.username}, for support. Sign out to end it.`, {
      redirect: '/_/dashboard',
    });
  });

  app.post(`${ADMIN}/mail-test`, { schema: { body: schemas.mail } }, async (req, reply) => {
    const to = await testMail(admin.of(req), req.body);
    const { config } = req.ctx;
    const how = config.smtpUrl ? 'through SMTP' : `into the outbox folder (${config.dataDir}/outbox; no SMTP_URL)`;
    return done(req, reply, `A test message went to ${to} ${how}.`, { redirect: ADMIN });
  });

  app.post(`${ADMIN}/accounts/:id/confirmation`, { schema: { params: schemas.account } }, async (req, reply) => {
    const email = await resendConfirmation(admin.of(req), { accountId: req.params.id });
    return done(req, reply, `A new confirmation link went to ${email}.`, { redirect: ADMIN });
  });

  app.post(`${ADMIN}/invites`, async (req, reply) => {
    const { url } = await newSignupInvite(admin.of(req));
    const msg = 'A new invitation link: copy it below and send it to the one person it is for.';
    // The page itself (no redirect): the link shows on it, in a field to copy, not in the address bar.
    if (wantsHtml(req)) return adminView(req, reply, { inviteUrl: url, msg: { text: msg, type: 'success' } });
    return done(req, reply, `Invitation link (one person, 14 days): ${url}`, { extra: { url } });
  });
};

export default plugin;
