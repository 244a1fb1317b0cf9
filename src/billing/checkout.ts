// Payments out: a Stripe Checkout session to buy a plan, and the Customer Portal to manage (change,
// cancel) a subscription. What Stripe then does comes back by webhook (src/billing/stripe.ts): the
// checkout's email and `metadata.plan` name the account and the plan, as for any checkout.
import type { Services } from '../services.ts';
import type { Actor } from '../access/actor.ts';
import { KilnError, badRequest } from '../errors.ts';
import { accountById } from '../store/accounts.ts';

const NOT_CONFIGURED = 'Buying a plan is not set up on this Kiln (STRIPE_SECRET_KEY and the price ids).';

/** Whether this Kiln sells plans (a Stripe key and both price ids). */
export function paymentsConfigured(s: Services): boolean {
  const c = s.config;
  return !!(c.stripeSecretKey && c.stripePrices.personal && c.stripePrices.maker);
}

/** The refusal of a plan that cannot be bought (and, at the route, of one that is not text). */
export const PLAN_REFUSED = 'Plan must be personal or maker.';

/** A Checkout session for `plan`; returns the address to send the buyer to. */
export async function startCheckout(s: Services, actor: Actor, plan: string | undefined): Promise<string> {
  if (plan !== 'personal' && plan !== 'maker') throw badRequest(PLAN_REFUSED, 'invalid');
  const price = s.config.stripePrices[plan];
  if (!s.config.stripeSecretKey || !price) throw new KilnError(503, NOT_CONFIGURED, 'payments-not-configured');
  const account = await accountById(s.database.db, actor.accountId);
  const customer = account?.stripe_customer_id ?? null;
  const session = await (await s.stripe()).checkout.sessions.create({
    mode: 'subscription',
    line_items: [{ price, quantity: 1 }],
    success_url: `${s.config.baseUrl}/_/billing?checkout=done`,
    cancel_url: `${s.config.baseUrl}/_/billing`,
    client_reference_id: String(actor.accountId),
    metadata: { plan },
    subscription_data: { metadata: { plan, email: actor.email } },
    ...(customer ? { customer } : { customer_email: actor.email }),
  });
  if (!session.url) throw new KilnError(502, 'Stripe gave no checkout address; try again.');
  return session.url;
}

/** The Customer Portal of the account's Stripe customer; returns its address. */
export async function openPortal(s: Services, actor: Actor): Promise<string> {
  if (!s.config.stripeSecretKey) throw new KilnError(503, NOT_CONFIGURED, 'payments-not-configured');
  const account = await accountById(s.database.db, actor.accountId);
  if (!account?.stripe_customer_id)
    throw badRequest('There is no subscription to manage yet: buy a plan first.', 'invalid');
  const portal = await (await s.stripe()).billingPortal.sessions.create({
    customer: account.stripe_customer_id,
    return_url: `${s.config.baseUrl}/_/billing`,
  });
  return portal.url;
}
