// Stripe webhooks: signature check, replay protection, and what each event changes.
//
// POST /_/webhooks/stripe (src/http/routes/billing.ts) hands the raw body and the `Stripe-Signature`
// header to `receiveStripeWebhook`. The signature is checked with the `stripe` package against
// STRIPE_WEBHOOK_SECRET (no secret configured, no header, or a wrong signature: refused, nothing changes).
//
// Replays: the event id is inserted into `webhook_events` first, in the same transaction as the
// event's changes; a second delivery of the same id (sequential or concurrent) hits the primary key and
// changes nothing. Mail goes out after the commit; if sending fails, the event row is removed and the
// answer is 500, so Stripe delivers it again (the purchase is then found by its email and a new link
// is mailed).
//
// Events:
//   checkout.session.completed (and checkout.session.async_payment_succeeded; a completed session
//   whose payment_status is `unpaid` waits for the latter) — a purchase:
//     - email: customer_details.email, else customer_email;
//     - plan: metadata.plan ('personal' | 'maker'), else the amount paid (amount_total in minor units:
//       600 / 4800 → Personal, 1500 / 12000 → Maker, the monthly / annual prices in limits.ts), else
//       Personal (the buyer paid for a plan; an administrator can change it with `kiln`);
//     - no account with that email: a new developer Person with has_active_subscription, the plan,
//       plan_started_at now, the Stripe customer and subscription ids, no password, and a placeholder
//       username `pending--<16 hex>` (a double hyphen, which no username may contain, so nobody can
//       choose or type it); a one-time token (purpose `checkout`, 30 days) is mailed with a link to
//       /_/welcome/<token>, where the buyer chooses the real username and a password;
//     - an account still waiting for its welcome: updated, and a new link is mailed;
//     - an existing account with an active subscription held by another Stripe customer (or by none):
//       nothing changes (a checkout by a stranger who typed its email must not take over its billing);
//       the account holder is told by mail;
//     - an existing account: upgraded in place (plan, subscription flag, Stripe ids; months active
//       keep counting if it was already subscribed), and told so by mail.
//   customer.subscription.updated — status active / trialing / past_due: the flag is set (and the plan
//     follows the subscription's metadata or price); any other status (canceled, unpaid, paused,
//     incomplete_expired …): the flag is cleared.
//   customer.subscription.deleted — the flag is cleared.
//   The account is found by the stored subscription id, else the customer id, else metadata.email.
//   An event about a subscription other than the one the account holds changes nothing.
//   Other event types are acknowledged (200) and ignored.
import type Stripe from 'stripe';
import type { Services } from '../services.ts';
import type { Plan, Tx } from '../store/schema.ts';
import { forgetWebhookEvent, recordWebhookEvent } from '../store/billing.ts';
import type { Mail } from '../mail/mailer.ts';
import { KilnError, fail } from '../errors.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { randomHex } from '../clock.ts';
import { planLimits } from '../limits.ts';
import { createEmailToken } from '../accounts/email-tokens.ts';
import { PAID_PLANS, PLAN_NAMES } from './plans.ts';
import {
  accountById,
  accountByStripe,
  insertAccount,
  insertPersonRow,
  personRow,
  updateAccountRow,
  updatePersonRow,
} from '../store/accounts.ts';
import { inTransaction } from '../store/transaction.ts';

/** Usernames of accounts bought but not yet welcomed. `--` is refused by usernameProblem, so no one can pick one. */
const PENDING_PREFIX = 'pending--';
export const isPendingUsername = (username: string) => username.startsWith(PENDING_PREFIX);

const PROVIDER = 'stripe';
const ACTIVE_STATUSES = new Set(['active', 'trialing', 'past_due']);

/** The `stripe` package's client, for its webhook helpers and Checkout (webhooks make no API calls, so
 *  they need no real API key). Made on first use, not at start: the package costs a quarter of a
 *  second of CPU to load, and most instances take no payments. Chosen once, in createServices. */
export function stripeClient(config: { stripeSecretKey?: string | null; stripeApiUrl?: string }) {
  const make = async (): Promise<Stripe> => {
    const { default: Stripe } = await import('stripe');
    const api = config.stripeApiUrl ? new URL(config.stripeApiUrl) : null;
    return new Stripe(config.stripeSecretKey ?? 'sk_unused_for_webhook_verification', {
      ...(api
        ? {
            host: api.hostname,
            port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)),
            protocol: api.protocol === 'https:' ? 'https' : 'http',
          }
        : {}),
      maxNetworkRetries: 1,
      timeout: 20_000,
    });
  };
  let client: Promise<Stripe> | undefined;
  return () => (client ??= make());
}

/** A verified event, or a 400 naming what is wrong. */
async function verifyStripeEvent(
  s: Services,
  rawBody: Buffer,
  signature: string | string[] | undefined,
): Promise<Stripe.Event> {
  const secret = s.config.stripeWebhookSecret;
  if (!secret)
    throw fail(
      'webhook-not-configured',
      'Payments are not configured on this Kiln (STRIPE_WEBHOOK_SECRET is not set).',
    );
  const header = Array.isArray(signature) ? signature[0] : signature;
  if (!header) throw fail('missing-signature', 'Missing Stripe-Signature header.');
  const stripe = await s.stripe();
  try {
    return stripe.webhooks.constructEvent(rawBody, header, secret);
  } catch {
    throw fail('invalid-signature', 'The Stripe signature does not match this body.');
  }
}

export interface WebhookOutcome {
  eventId: string;
  type: string;
  /** True when this event id was already handled: nothing changed. */
  duplicate: boolean;
  /** What was done, for the answer and the log. */
  action: string;
  accountId?: number;
}

interface Effects {
  action: string;
  accountId?: number;
  /** Sent after the commit. */
  mail?: (s: Services) => Promise<Mail>;
}

/** Verifies and applies one webhook delivery. */
export async function receiveStripeWebhook(
  s: Services,
  rawBody: Buffer,
  signature: string | string[] | undefined,
): Promise<WebhookOutcome> {
  const event = await verifyStripeEvent(s, rawBody, signature);
  const { db } = s.database;
  let effects: Effects;
  try {
    effects = await inTransaction(s, async (trx) => {
      await recordWebhookEvent(trx, PROVIDER, event.id, s.clock.now().toISOString());
      return applyEvent(s, trx, event);
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      return { eventId: event.id, type: event.type, duplicate: true, action: 'already handled' };
    }
    throw err;
  }
  if (effects.mail) {
    try {
      await s.mailer.send(await effects.mail(s));
    } catch (err) {
      // Let Stripe deliver the event again: the purchase is found by its email and mailed anew.
      await forgetWebhookEvent(db, PROVIDER, event.id);
      console.error(`Stripe event ${event.id}: mail failed, event left for redelivery:`, (err as Error).message);
      throw new KilnError(
        500,
        'The confirmation mail could not be sent; deliver the event again later.',
        'mail-failed',
      );
    }
  }
  return {
    eventId: event.id,
    type: event.type,
    duplicate: false,
    action: effects.action,
    accountId: effects.accountId,
  };
}

async function applyEvent(s: Services, trx: Tx, event: Stripe.Event): Promise<Effects> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object as Stripe.Checkout.Session;
      if (event.type === 'checkout.session.completed' && session.payment_status === 'unpaid') {
        return { action: 'waiting for the payment to succeed' };
      }
      return completeCheckout(s, trx, session);
    }
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const sub = event.data.object as Stripe.Subscription;
      const active = event.type === 'customer.subscription.updated' && ACTIVE_STATUSES.has(sub.status);
      return applySubscription(s, trx, sub, active);
    }
    default:
      return { action: 'ignored' };
  }
}

// ---------------------------------------------------------------- plan of a purchase

const paidPlan = (v: unknown): Plan | null =>
  typeof v === 'string' && (PAID_PLANS as readonly string[]).includes(v.trim().toLowerCase())
    ? (v.trim().toLowerCase() as Plan)
    : null;

/** The tier an amount (in minor units, or whole units for zero-decimal currencies) pays for, or null. */
function planForAmount(amount: number | null | undefined): Plan | null {
  if (typeof amount !== 'number' || amount <= 0) return null;
  for (const p of PAID_PLANS) {
    const price = planLimits[p].price;
    if ([price.monthly, price.annual].some((units) => amount === units * 100 || amount === units)) return p;
  }
  return null;
}

/** metadata.plan, else the amount paid, else Personal. */
function planOfCheckout(session: Pick<Stripe.Checkout.Session, 'metadata' | 'amount_total'>): Plan {
  return paidPlan(session.metadata?.plan) ?? planForAmount(session.amount_total) ?? 'personal';
}

/** The subscription's tier (metadata.plan, the price's metadata.plan or lookup_key, or its amount), or null. */
function planOfSubscription(sub: Stripe.Subscription): Plan | null {
  const fromMeta = paidPlan(sub.metadata?.plan);
  if (fromMeta) return fromMeta;
  for (const item of sub.items?.data ?? []) {
    const price = item.price;
    const p =
      paidPlan(price?.metadata?.plan) ??
      paidPlan(price?.lookup_key?.split(/[_-]/)[0]) ??
      planForAmount(price?.unit_amount);
    if (p) return p;
  }
  return null;
}

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  typeof v === 'string' ? v : (v?.id ?? null);

// ---------------------------------------------------------------- checkout

async function completeCheckout(s: Services, trx: Tx, session: Stripe.Checkout.Session): Promise<Effects> {
  const email = (session.customer_details?.email ?? session.customer_email ?? '').trim().toLowerCase();
  if (!email) return { action: 'ignored: the session has no email' };
  const plan = planOfCheckout(session);
  const customer = idOf(session.customer);
  const subscription = idOf(session.subscription);
  const now = s.clock.now().toISOString();

  const existing = await personRow(trx, { email });

  if (!existing) {
    const accountId = await insertAccount(trx, {
      kind: 'person',
      username: PENDING_PREFIX + randomHex(8),
      plan,
      paid: true,
      now,
      stripe: { customerId: customer, subscriptionId: subscription },
    });
    await insertPersonRow(trx, accountId, { email, passwordHash: null });
    return { action: 'person created', accountId, mail: (s) => welcomeMail(s, accountId, email, plan) };
  }

  const stillActive = existing.has_active_subscription === 1 && existing.plan !== 'free';
  if (stillActive && existing.stripe_customer_id !== customer) {
    // Another customer's checkout never takes over an account that already pays: its Stripe ids
    // would let that customer's subscription events end this account's plan.
    return {
      action: 'ignored: the account already has an active subscription of another Stripe customer',
      accountId: existing.id,
      mail: async (s) => ({
        to: email,
        subject: 'A Kiln purchase with your email address was not applied',
        text: [
          `A Stripe checkout for the Kiln ${PLAN_NAMES[plan]} plan used your email address, but your account ${existing.username} already has an active subscription, so nothing was changed.`,
          'If you made this purchase, contact the administrator of this Kiln to have it refunded or moved.',
          '',
          `${s.config.baseUrl}/_/billing`,
        ].join('\n'),
      }),
    };
  }
  await updateAccountRow(trx, existing.id, {
    plan,
    has_active_subscription: 1,
    plan_started_at: stillActive && existing.plan_started_at ? existing.plan_started_at : now,
    ...(customer ? { stripe_customer_id: customer } : {}),
    ...(subscription ? { stripe_subscription_id: subscription } : {}),
  });
  if (isPendingUsername(existing.username) || existing.password_hash === null) {
    return {
      action: 'pending person updated',
      accountId: existing.id,
      mail: (s) => welcomeMail(s, existing.id, email, plan),
    };
  }
  // A person who already has an account (an app user who buys becomes a developer).
  await updatePersonRow(trx, existing.id, { account_type: 'dev' });
  return {
    action: 'account upgraded',
    accountId: existing.id,
    mail: async (s) => ({
      to: email,
      subject: `Your Kiln ${PLAN_NAMES[plan]} plan is active`,
      text: [
        `Thank you! The ${PLAN_NAMES[plan]} plan is now active on your account ${existing.username}.`,
        '',
        `${s.config.baseUrl}/_/billing`,
      ].join('\n'),
    }),
  };
}

async function welcomeMail(s: Services, accountId: number, email: string, plan: Plan): Promise<Mail> {
  const token = await createEmailToken(s, { accountId, email, purpose: 'checkout' });
  return {
    to: email,
    subject: `Welcome to Kiln ${PLAN_NAMES[plan]}: choose your username`,
    text: [
      `Thank you for buying the Kiln ${PLAN_NAMES[plan]} plan. Choose your username and password to start:`,
      '',
      `${s.config.baseUrl}/_/welcome/${token}`,
      '',
      `The link works once, for 30 days. Your documents will live at <username>.${s.config.rootDomain}.`,
    ].join('\n'),
  };
}

// ---------------------------------------------------------------- subscriptions

async function applySubscription(s: Services, trx: Tx, sub: Stripe.Subscription, active: boolean): Promise<Effects> {
  const customer = idOf(sub.customer);
  let account = await accountByStripe(trx, { subscriptionId: sub.id });
  if (!account && customer) account = await accountByStripe(trx, { customerId: customer });
  const metaEmail = sub.metadata?.email?.trim().toLowerCase();
  if (!account && metaEmail) {
    const person = await personRow(trx, { email: metaEmail });
    if (person) account = await accountById(trx, person.id);
  }
  if (!account) return { action: 'ignored: no account for this subscription' };
  if (account.stripe_subscription_id && account.stripe_subscription_id !== sub.id) {
    return { action: 'ignored: the account holds another subscription', accountId: account.id };
  }
  const now = s.clock.now().toISOString();
  if (!active) {
    await updateAccountRow(trx, account.id, {
      has_active_subscription: 0,
      plan_started_at: null,
      stripe_subscription_id: sub.id,
    });
    return { action: 'subscription ended', accountId: account.id };
  }
  const plan = planOfSubscription(sub) ?? (account.plan !== 'free' ? account.plan : 'personal');
  const wasActive = account.has_active_subscription === 1 && account.plan !== 'free';
  await updateAccountRow(trx, account.id, {
    plan,
    has_active_subscription: 1,
    plan_started_at: wasActive && account.plan_started_at ? account.plan_started_at : now,
    stripe_subscription_id: sub.id,
    ...(customer ? { stripe_customer_id: customer } : {}),
  });
  return { action: 'subscription active', accountId: account.id };
}
