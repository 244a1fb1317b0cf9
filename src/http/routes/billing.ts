// Payments and plans (main app):
//
//   POST /_/webhooks/stripe     Stripe webhook: raw body, `Stripe-Signature` checked (src/billing/stripe.ts).
//                               200 {received, duplicate, type, action}; 400 missing-signature /
//                               invalid-signature / webhook-not-configured (nothing changes).
//   GET  /_/welcome/:token      a buyer's form: choose username and password (404 page when the link is gone)
//   POST /_/welcome/:token      {username, password} (form or JSON): sets them, signs in; browsers go to the
//                               dashboard, programs get 200 {msg, msgType, username}. 400 / 409 / 404.
//   GET  /_/billing             the signed-in account's plan, usage and allowances (page, or JSON {plan: …})
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import { KilnError, badRequest } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { authorizeActor } from '../../access/authorize.ts';
import { wantsHtml, queryMsg, optionalText, parse, textParam, type FieldCodes } from '../io.ts';
import { withMessage } from '../messages.ts';
import { refuseCrossSite } from '../origin.ts';
import { signIn } from '../sessions.ts';
import { receiveStripeWebhook } from '../../billing/stripe.ts';
import { findWelcome, finishWelcome } from '../../billing/welcome.ts';
import { planSummary } from '../../billing/plans.ts';
import { billingPage, welcomePage } from '../../ui/billing.ts';
import { errorPage } from '../../ui/pages.ts';
import { onlyOn } from '../hosts.ts';
import { assertSameOrigin } from '../origin.ts';
import { PLAN_REFUSED, openPortal, paymentsConfigured, startCheckout } from '../../billing/checkout.ts';
import { accountById } from '../../store/accounts.ts';

function sendPage(reply: FastifyReply, body: string, status = 200) {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
}

const bodies = {
  welcome: z.object({
    username: optionalText(limits.usernameLength.max),
    password: optionalText(limits.password.maxLength),
  }),
  /** Which plan `startCheckout` decides; here only text of a plan name's length. */
  checkout: z.object({ plan: z.string().max(20).optional() }),
};
const codes = { plan: { code: 'invalid', msg: PLAN_REFUSED } } as const satisfies FieldCodes;

/** A field the form must fill. */
function required(value: string | undefined, label: string): string {
  if (value === undefined) throw badRequest(`${label} is required.`, 'missing-field');
  return value;
}

const tokenOf = (req: FastifyRequest) => textParam(req, 'token');

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main');
  // The webhook needs the exact bytes Stripe signed: its own parsers, in a scope of its own.
  await app.register(async (hook) => {
    hook.removeAllContentTypeParsers();
    hook.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limits.body.json }, (_req, body, done) =>
      done(null, body),
    );
    hook.post('/_/webhooks/stripe', async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const outcome = await receiveStripeWebhook(s, raw, req.headers['stripe-signature']);
      if (!outcome.duplicate)
        req.log.info({ stripeEvent: outcome.eventId, type: outcome.type, action: outcome.action }, 'stripe webhook');
      return reply
        .code(200)
        .send({ received: true, duplicate: outcome.duplicate, type: outcome.type, action: outcome.action });
    });
  });

  app.get('/_/welcome/:token', async (req, reply) => {
    try {
      const w = await findWelcome(s, tokenOf(req));
      return sendPage(reply, welcomePage({ token: tokenOf(req), email: w.email, msg: queryMsg(req) }));
    } catch (err) {
      if (err instanceof KilnError && err.status === 404 && wantsHtml(req))
        return sendPage(reply, errorPage(404, err.message), 404);
      throw err;
    }
  });

  app.post('/_/welcome/:token', async (req, reply) => {
    const back = `/_/welcome/${encodeURIComponent(tokenOf(req))}`;
    try {
      await refuseCrossSite(req, s);
      const b = parse(bodies.welcome, req.body);
      const username = required(b.username, 'Username');
      const password = required(b.password, 'Password');
      const done = await finishWelcome(s, tokenOf(req), { username, password });
      await signIn(req, reply, s, done.accountId);
      const msg = `Welcome, ${done.username}. Your documents live at ${done.username}.${s.config.rootDomain}.`;
      if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, '/_/dashboard', msg, 'success'), 302);
      return reply.send({ msg, msgType: 'success', username: done.username });
    } catch (err) {
      if (err instanceof KilnError && wantsHtml(req) && (err.status === 400 || err.status === 409)) {
        return reply.redirect(withMessage(s.secret, back, err.message, 'error'), 302);
      }
      if (err instanceof KilnError && err.status === 404 && wantsHtml(req))
        return sendPage(reply, errorPage(404, err.message), 404);
      throw err;
    }
  });

  app.get('/_/billing', async (req, reply) => {
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const summary = await planSummary(s, actor.accountId);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', plan: summary });
    return sendPage(
      reply,
      billingPage({
        username: actor.username,
        summary,
        msg: queryMsg(req),
        payments: paymentsConfigured(s),
        canManage: !!(await accountById(s.database.db, actor.accountId))?.stripe_customer_id,
        currency: s.config.currency,
      }),
    );
  });

  /** Sends the browser to Stripe (303), or tells a program where (JSON {url}). */
  const toStripe = (req: FastifyRequest, reply: FastifyReply, url: string) =>
    wantsHtml(req) ? reply.redirect(url, 303) : reply.send({ msg: '', msgType: 'success', url });

  // Payments out: Checkout to buy a plan, the Customer Portal to manage it (src/billing/checkout.ts).
  app.post('/_/billing/checkout', async (req, reply) => {
    assertSameOrigin(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    return toStripe(req, reply, await startCheckout(s, actor, parse(bodies.checkout, req.body, codes).plan));
  });
  app.post('/_/billing/portal', async (req, reply) => {
    assertSameOrigin(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    return toStripe(req, reply, await openPortal(s, actor));
  });
};

export default plugin;
