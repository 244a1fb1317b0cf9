// Custom domains: an account's documents served at a domain of its own (`docs.example.com/` serves the
// account's index.html, `docs.example.com/app.html` its app.html, like `<username>.<root>`).
//
// States (the spec's table, plus the parts it leaves open; the provider's webhook drives them,
// src/domains/webhook.ts):
//
//   (none)     ──add──────────────▶ pending     DNS instructions issued: a CNAME to the root domain and a
//                                               TXT verification value
//   pending    ──dns.verifying────▶ verifying   the provider started checking DNS
//   failed     ──dns.verifying────▶ verifying
//   pending    ──dns.verified─────▶ active      sslStatus `pending`: SSL is being provisioned
//   verifying  ──dns.verified─────▶ active
//   failed     ──dns.verified─────▶ active
//   pending    ──dns.failed───────▶ failed      DNS does not (or no longer) point here
//   verifying  ──dns.failed───────▶ failed
//   active     ──dns.failed───────▶ failed      no longer served
//   active     ──ssl.issued───────▶ active      sslStatus `issued`
//   active     ──ssl.failed───────▶ active      sslStatus `failed`
//   any        ──remove───────────▶ (none)      the owner removes it; no longer served
//
// Only `active` domains are served (src/http/hosts.ts) and answered 200 by Caddy's `ask` endpoint.
import { publishHostChanged } from '../events/publish.ts';
import { usernameTaken } from '../store/accounts.ts';
import {
  activeDomainAccount,
  countDomains,
  deleteDomain,
  domainsOf,
  insertDomain,
  isActiveDomain,
} from '../store/domains.ts';
import { randomHex } from '../clock.ts';
import type { Services } from '../services.ts';
import type { DomainsTable, Row } from '../store/schema.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { checkHostname } from './hostname.ts';
import { assertAllowance, loadPlanAccount } from '../billing/plans.ts';
import { inTransaction } from '../store/transaction.ts';

export type DomainRow = Row<'domains'>;
export type DomainStatus = DomainsTable['status'];

export interface DnsRecord {
  type: 'CNAME' | 'TXT';
  name: string;
  value: string;
}

export interface DnsInstructions {
  /** Points the domain at Kiln (use ALIAS/ANAME, or the root domain's A/AAAA records, at a zone apex). */
  cname: DnsRecord;
  /** Proves control of the domain to the provider that verifies it. */
  txt: DnsRecord;
}

/** A domain as the dashboard and API clients see it. */
export interface DomainInfo {
  id: number;
  domain: string;
  status: DomainStatus;
  sslStatus: string | null;
  providerId: string | null;
  dns: DnsInstructions;
  createdAt: string;
}

/** Name of the TXT record that carries the verification value. */
const TXT_PREFIX = '_kiln-verification';

export function publicDomain(row: DomainRow): DomainInfo {
  let dns: DnsInstructions;
  try {
    dns = JSON.parse(row.dns_instructions) as DnsInstructions;
  } catch {
    dns = {
      cname: { type: 'CNAME', name: row.domain, value: '' },
      txt: { type: 'TXT', name: `${TXT_PREFIX}.${row.domain}`, value: '' },
    };
  }
  return {
    id: row.id,
    domain: row.domain,
    status: row.status,
    sslStatus: row.ssl_status,
    providerId: row.provider_id,
    dns,
    createdAt: row.created_at,
  };
}

function dnsInstructionsFor(domain: string, rootHostname: string): DnsInstructions {
  return {
    cname: { type: 'CNAME', name: domain, value: rootHostname },
    txt: { type: 'TXT', name: `${TXT_PREFIX}.${domain}`, value: `kiln-verification=${randomHex(16)}` },
  };
}

/** Adds a domain to an account: `pending`, with its DNS instructions. 400 for an invalid name,
 *  409 when any account already has it, 402/403 beyond the plan's custom-domain allowance. */
export async function addDomain(s: Services, accountId: number, input: string): Promise<DomainInfo> {
  const checked = checkHostname(input, s.config.rootHostname);
  if (!checked.ok) throw badRequest(checked.problem, 'invalid-domain');
  const dns = dnsInstructionsFor(checked.domain, s.config.rootHostname);
  const now = s.clock.now();
  try {
    const row = await inTransaction(s, async (trx) => {
      // The plan's custom-domain allowance (src/billing/plans.ts): counted under a row lock on
      // PostgreSQL, so two adds at once cannot both take the last place.
      const account = await loadPlanAccount(s, trx, accountId, true);
      assertAllowance(account, 'customDomains', await countDomains(trx, accountId), now);
      return insertDomain(trx, {
        account_id: accountId,
        domain: checked.domain,
        status: 'pending',
        ssl_status: null,
        provider_id: null,
        dns_instructions: JSON.stringify(dns),
        created_at: now.toISOString(),
      });
    });
    return publicDomain(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`The domain ${checked.domain} is already added.`, 'domain-taken');
    throw err;
  }
}

export async function listDomains(s: Services, accountId: number): Promise<DomainInfo[]> {
  const rows = await domainsOf(s.database.db, accountId);
  return rows.map(publicDomain);
}

/** Removes one of the account's domains (it stops being served at once). */
export async function removeDomain(s: Services, accountId: number, id: number): Promise<DomainInfo> {
  const row = await deleteDomain(s.database.db, accountId, id);
  if (!row) throw notFound('No such domain.');
  await publishHostChanged(s, accountId, [row.domain]);
  return publicDomain(row);
}

/** A domain name as a provider or Caddy sends it: lowercase, no trailing dot, no port. */
export function normalizeDomain(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '').replace(/:\d+$/, '');
}

/** Whether Kiln serves this host name, for Caddy's on-demand TLS `ask`: an active custom domain, the
 *  root domain, or the document host of an existing account. */
export async function isServedHost(s: Services, name: string): Promise<boolean> {
  const host = normalizeDomain(name);
  if (!host || host.length > 253) return false;
  const root = s.config.rootHostname;
  const { db } = s.database;
  if (host === root) return true;
  if (host.endsWith(`.${root}`)) {
    const label = host.slice(0, -root.length - 1);
    if (label.includes('.')) return false;
    return usernameTaken(db, label);
  }
  return isActiveDomain(db, host);
}

/** The account an active custom domain serves, or undefined. */
export function activeDomain(
  s: Services,
  name: string,
): Promise<{ domain: string; accountId: number; username: string; suspendedAt: string | null } | undefined> {
  return activeDomainAccount(s.database.db, name);
}
