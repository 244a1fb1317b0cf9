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
import { wantsHtml, queryMsg, optionalText } from '../io.ts';
import { fields } from '../schema.ts';
import { withMessage } from '../messages.ts';
import { refuseCrossSite } from '../origin.ts';
import { signIn } from '../sessions.ts';
import { receiveStripeWebhook } from '../../billing/stripe.ts';
import { findWelcome, finishWelcome } from '../../billing/welcome.ts';
import { billingPage, welcomePage } from '../../ui/billing.ts';
import { errorPage } from '../../ui/pages.ts';
import { onlyOn } from '../hosts.ts';
import { assertSameOrigin } from '../origin.ts';
import { PLAN_REFUSED } from '../../billing/checkout.ts';
import { billingActor, billingOverview, billingPortal, checkout } from '../../billing/use-cases.ts';

function sendPage(reply: FastifyReply, body: string, status = 200) {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
}

const schemas = {
  token: z.object({ token: z.string() }),
  welcome: z.object({
    username: optionalText(limits.usernameLength.max),
    password: optionalText(limits.password.maxLength),
  }),
  /** Which plan `startCheckout` decides; here only text of a plan name's length. */
  checkout: fields(z.object({ plan: z.string().max(20).optional() }), { plan: { code: 'invalid', msg: PLAN_REFUSED } }),
  // The page's own `msg` (a signed message) rides along in the query.
  page: z.looseObject({}),
};

/** A field the form must fill. */
function required(value: string | undefined, label: string): string {
  if (value === undefined) throw badRequest(`${label} is required.`, 'missing-field');
  return value;
}

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

  app.get('/_/welcome/:token', { schema: { params: schemas.token } }, async (req, reply) => {
    try {
      const { token } = req.params;
      const w = await findWelcome(s, token);
      return sendPage(reply, welcomePage({ token, email: w.email, msg: queryMsg(req) }));
    } catch (err) {
      if (err instanceof KilnError && err.status === 404 && wantsHtml(req))
        return sendPage(reply, errorPage(404, err.message), 404);
      throw err;
    }
  });

  const welcome = { params: schemas.token, body: schemas.welcome };
  app.post('/_/welcome/:token', { schema: welcome, attachValidation: true }, async (req, reply) => {
    const { token } = req.params;
    const back = `/_/welcome/${encodeURIComponent(token)}`;
    try {
      await refuseCrossSite(req, s);
      // A bad field goes back to the form, after the cross-site refusal.
      if (req.validationError) throw req.validationError;
      const b = req.body;
      const username = required(b.username, 'Username');
      const password = required(b.password, 'Password');
      const done = await finishWelcome(s, token, { username, password });
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

  app.get('/_/billing', { schema: { querystring: schemas.page } }, async (req, reply) => {
    const { actor, ...overview } = await billingOverview(req.ctx);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', plan: overview.summary });
    return sendPage(reply, billingPage({ username: actor.username, msg: queryMsg(req), ...overview }));
  });

  /** Sends the browser to Stripe (303), or tells a program where (JSON {url}). */
  const toStripe = (req: FastifyRequest, reply: FastifyReply, url: string) =>
    wantsHtml(req) ? reply.redirect(url, 303) : reply.send({ msg: '', msgType: 'success', url });

  // Payments out: Checkout to buy a plan, the Customer Portal to manage it (src/billing/checkout.ts). Another
  // origin is refused, then anyone not signed in, before the plan is judged (the use cases ask again).
  const preValidation = async (req: FastifyRequest) => {
    assertSameOrigin(req);
    billingActor(req.ctx);
  };
  app.post('/_/billing/checkout', { schema: { body: schemas.checkout }, preValidation }, async (req, reply) =>
    toStripe(req, reply, await checkout(req.ctx, req.body)),
  );
  app.post('/_/billing/portal', { preValidation }, async (req, reply) =>
    toStripe(req, reply, await billingPortal(req.ctx)),
  );
};

export default plugin;
