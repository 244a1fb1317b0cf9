import type { Kysely } from 'kysely';
import type { ColumnTypes } from '../column-types.ts';

/** Payments: the Stripe customer and subscription behind an account's paid plan, so subscription
 *  events (which carry the customer, not the email) find the account. */
export function up004Billing(_t: ColumnTypes) {
  return async (db: Kysely<any>) => {
    await db.schema.alterTable('accounts').addColumn('stripe_customer_id', 'text').execute();
    await db.schema.alterTable('accounts').addColumn('stripe_subscription_id', 'text').execute();
    await db.schema.createIndex('accounts_stripe_customer').on('accounts').column('stripe_customer_id').execute();
    await db.schema
      .createIndex('accounts_stripe_subscription')
      .on('accounts')
      .column('stripe_subscription_id')
      .execute();
  };
}
