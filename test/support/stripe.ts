// Stripe webhook deliveries for tests: event bodies shaped like Stripe's, signed with the `stripe`
// package's own test header helper, posted to a running Kiln.
import Stripe from 'stripe';
import { randomBytes } from 'node:crypto';
import type { TestKiln } from './kiln.ts';
import type { Res } from './client.ts';
import type { OutboxMailer } from '../../src/mail/mailer.ts';

export const WEBHOOK_SECRET = 'whsec_kiln_test_secret_0123456789';
const stripe = new Stripe('sk_test_kiln');

export const newId = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export function checkoutEvent(o: {
  email: string;
  plan?: string;
  amount?: number;
  customer?: string;
  subscription?: string;
  id?: string;
  paymentStatus?: string;
}) {
  return {
    id: o.id ?? newId('evt'),
    object: 'event',
    type: 'checkout.session.completed',
    api_version: '2025-01-27',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: newId('cs_test'),
        object: 'checkout.session',
        mode: 'subscription',
        payment_status: o.paymentStatus ?? 'paid',
        status: 'complete',
        customer: o.customer ?? newId('cus'),
        customer_details: { email: o.email },
        customer_email: null,
        subscription: o.subscription ?? newId('sub'),
        amount_total: o.amount ?? null,
        currency: 'eur',
        metadata: o.plan ? { plan: o.plan } : {},
      },
    },
  };
}

export function subscriptionEvent(
  type: 'customer.subscription.deleted' | 'customer.subscription.updated',
  o: { subscription: string; customer: string; status: string; plan?: string; unitAmount?: number },
) {
  return {
    id: newId('evt'),
    object: 'event',
    type,
    api_version: '2025-01-27',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: o.subscription,
        object: 'subscription',
        customer: o.customer,
        status: o.status,
        metadata: o.plan ? { plan: o.plan } : {},
        items: {
          object: 'list',
          data: o.unitAmount
            ? [
                {
                  id: newId('si'),
                  object: 'subscription_item',
                  price: {
                    id: newId('price'),
                    object: 'price',
                    unit_amount: o.unitAmount,
                    metadata: {},
                    lookup_key: null,
                  },
                },
              ]
            : [],
        },
      },
    },
  };
}

/** Posts `event` to the webhook route, signed with `secret` (or with the header given). */
export function deliver(
  kiln: TestKiln,
  event: object | string,
  opts: { secret?: string; signature?: string | null; body?: string } = {},
): Promise<Res> {
  const payload = typeof event === 'string' ? event : JSON.stringify(event);
  const signature =
    opts.signature === undefined
      ? stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET })
      : opts.signature;
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  };
  if (signature !== null) headers['stripe-signature'] = signature;
  return kiln.client().post('/_/webhooks/stripe', opts.body ?? payload, { headers });
}

/** The mails in the Kiln's outbox addressed to `to`. */
export async function mailsTo(kiln: TestKiln, to: string) {
  const outbox = kiln.services.mailer as OutboxMailer;
  return (await outbox.messages()).filter((m) => m.to === to);
}

/** The `/_/welcome/<token>` path in a mail's text. */
export function welcomePath(text: string): string {
  const m = /https?:\/\/[^/\s]+(\/_\/welcome\/[A-Za-z0-9_-]+)/.exec(text);
  if (!m) throw new Error(`no welcome link in: ${text}`);
  return m[1];
}
