// The custom domains store: an account's domains, the one a host name serves, and the state changes the
// provider's webhook makes. (The states and who may: src/domains/domains.ts, src/domains/webhook.ts.)
import type { DomainsTable, Executor, NewRow, Row, Tx } from './schema.ts';

/** How many domains the account has (any state). */
export async function countDomains(trx: Tx, accountId: number): Promise<number> {
  const used = await trx
    .selectFrom('domains')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(used.n);
}

/** Adds a domain row; a domain some account already has is a unique violation. */
export function insertDomain(trx: Tx, values: NewRow<'domains'>): Promise<Row<'domains'>> {
  return trx.insertInto('domains').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The account's domains, by name. */
export function domainsOf(db: Executor, accountId: number): Promise<Row<'domains'>[]> {
  return db.selectFrom('domains').selectAll().where('account_id', '=', accountId).orderBy('domain').execute();
}

/** Deletes one of the account's domains; returns it, or undefined when it has no such domain. */
export function deleteDomain(db: Executor, accountId: number, id: number): Promise<Row<'domains'> | undefined> {
  return db
    .deleteFrom('domains')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returningAll()
    .executeTakeFirst();
}

/** Whether the name is an active custom domain. */
export async function isActiveDomain(db: Executor, name: string): Promise<boolean> {
  return !!(await db
    .selectFrom('domains')
    .select('id')
    .where('domain', '=', name)
    .where('status', '=', 'active')
    .executeTakeFirst());
}

/** The account an active custom domain serves, or undefined. */
export function activeDomainAccount(
  db: Executor,
  name: string,
): Promise<{ domain: string; accountId: number; username: string; suspendedAt: string | null } | undefined> {
  return db
    .selectFrom('domains')
    .innerJoin('accounts', 'accounts.id', 'domains.account_id')
    .select(['domains.domain', 'accounts.id as accountId', 'accounts.username', 'accounts.suspended_at as suspendedAt'])
    .where('domains.domain', '=', name)
    .where('domains.status', '=', 'active')
    .executeTakeFirst();
}

/** A domain by name, any state, or undefined. */
export function domainNamed(db: Executor, name: string): Promise<Row<'domains'> | undefined> {
  return db.selectFrom('domains').selectAll().where('domain', '=', name).executeTakeFirst();
}

/** Changes a domain only while it is still in state `from` (a compare-and-set); undefined when it was not. */
export function changeDomainFrom(
  trx: Tx,
  id: number,
  from: DomainsTable['status'],
  set: Partial<Pick<DomainsTable, 'status' | 'ssl_status' | 'provider_id'>>,
): Promise<Row<'domains'> | undefined> {
  return trx
    .updateTable('domains')
    .set(set)
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}
