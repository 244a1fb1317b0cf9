// The domain provider's webhook: `POST /_/webhooks/domains`.
//
// Authentication: header `X-Kiln-Signature: sha256=<hex>`, the HMAC-SHA256 of the exact request body
// bytes with DOMAIN_WEBHOOK_SECRET, compared in constant time. No secret configured → 503 (nothing is
// accepted); a missing or wrong signature → 401; either way nothing changes.
//
// Body (JSON): {"id": "<event id, unique per event>", "type": "<event>", "domain": "docs.example.com",
//               "providerId"?: "<the provider's id for the domain>"}
// Events: dns.verifying, dns.verified, dns.failed, ssl.issued, ssl.failed (transitions: domains.ts).
// Each event id is applied once (kept in webhook_events): a replayed event changes nothing, so a
// captured "dns.verified" cannot re-activate a domain later added again by someone else.
// Answers: 200 {msg, msgType, outcome: 'applied'|'unchanged'|'duplicate', domain}; 400 malformed body;
// 404 unknown domain; 409 (code `invalid-transition`) an event that does not apply in the domain's
// state (e.g. ssl.issued for a pending domain) — final, no state change.
import { publishHostChanged } from '../events/publish.ts';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Services } from '../services.ts';
import type { DomainsTable } from '../store/schema.ts';
import { recordWebhookEvent } from '../store/billing.ts';
import { changeDomainFrom, domainNamed } from '../store/domains.ts';
import { KilnError, badRequest, conflict, notFound } from '../errors.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { normalizeDomain, publicDomain, type DomainInfo, type DomainStatus } from './domains.ts';
import { TOO_DEEP, nestsDeeperThan } from '../core/json.ts';
import { inTransaction } from '../store/transaction.ts';

export const DOMAIN_WEBHOOK_PATH = '/_/webhooks/domains';
export const SIGNATURE_HEADER = 'x-kiln-signature';
const PROVIDER = 'domains';

/** `sha256=<hex>` of the body: what the provider sends (and what tests sign with). */
export function signDomainWebhook(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** True when the header carries the body's HMAC under the secret (constant-time compare). */
export function verifyDomainSignature(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value !== 'string') return false;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(value.trim());
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(m[1], 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const DOMAIN_EVENTS = ['dns.verifying', 'dns.verified', 'dns.failed', 'ssl.issued', 'ssl.failed'] as const;
export type DomainEventType = (typeof DOMAIN_EVENTS)[number];

type Change = Partial<Pick<DomainsTable, 'status' | 'ssl_status'>>;

/** Which states each event applies in, and what it sets (see the table in domains.ts). */
const TRANSITIONS: Record<DomainEventType, { from: DomainStatus[]; set: Change; done: (row: Change) => boolean }> = {
  'dns.verifying': { from: ['pending', 'failed'], set: { status: 'verifying' }, done: (r) => r.status === 'verifying' },
  'dns.verified': {
    from: ['pending', 'verifying', 'failed'],
    set: { status: 'active', ssl_status: 'pending' },
    done: (r) => r.status === 'active',
  },
  'dns.failed': {
    from: ['pending', 'verifying', 'active'],
    set: { status: 'failed' },
    done: (r) => r.status === 'failed',
  },
  'ssl.issued': {
    from: ['active'],
    set: { ssl_status: 'issued' },
    done: (r) => r.status === 'active' && r.ssl_status === 'issued',
  },
  'ssl.failed': {
    from: ['active'],
    set: { ssl_status: 'failed' },
    done: (r) => r.status === 'active' && r.ssl_status === 'failed',
  },
};

const payloadSchema = z.object({
  id: z.string().min(1).max(200),
  type: z.enum(DOMAIN_EVENTS),
  domain: z.string().min(1).max(300),
  providerId: z.string().max(200).optional(),
});

export type DomainEvent = z.infer<typeof payloadSchema>;

export function parseDomainEvent(body: Buffer): DomainEvent {
  let json: unknown;
  const text = body.toString('utf8');
  if (nestsDeeperThan(text)) throw badRequest(TOO_DEEP, 'invalid-body');
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest('The body is not JSON.', 'invalid-body');
  }
  const r = payloadSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw badRequest(`Invalid ${issue.path.join('.') || 'body'}: ${issue.message}`, 'invalid');
  }
  return r.data;
}

export interface Applied {
  outcome: 'applied' | 'unchanged' | 'duplicate';
  domain: DomainInfo;
}

/** Applies one verified event: records its id and changes the domain in one transaction. */
export async function applyDomainEvent(s: Services, event: DomainEvent): Promise<Applied> {
  const applied = await applyOnce(s, event);
  // A domain that stopped being active is no longer served, in any process.
  if (applied.outcome === 'applied' && applied.domain.status !== 'active')
    await publishHostChanged(s, applied.accountId, [applied.domain.domain]);
  return { outcome: applied.outcome, domain: applied.domain };
}

async function applyOnce(s: Services, event: DomainEvent): Promise<Applied & { accountId: number }> {
  const { db } = s.database;
  const name = normalizeDomain(event.domain);
  const now = s.clock.now().toISOString();
  try {
    return await inTransaction(s, async (trx) => {
      await recordWebhookEvent(trx, PROVIDER, event.id, now);
      const row = await domainNamed(trx, name);
      if (!row) throw notFound(`No domain ${name} is added.`);
      const t = TRANSITIONS[event.type];
      if (t.done(row)) return { outcome: 'unchanged' as const, domain: publicDomain(row), accountId: row.account_id };
      if (!t.from.includes(row.status)) {
        throw conflict(
          `The event ${event.type} does not apply to a domain that is ${row.status}.`,
          'invalid-transition',
        );
      }
      const updated = await changeDomainFrom(trx, row.id, row.status, {
        ...t.set,
        ...(event.providerId ? { provider_id: event.providerId } : {}),
      });
      if (!updated) throw new KilnError(409, 'The domain changed meanwhile; send the event again.', 'retry');
      return { outcome: 'applied' as const, domain: publicDomain(updated), accountId: row.account_id };
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      const row = await domainNamed(db, name);
      if (!row) throw notFound(`No domain ${name} is added.`);
      return { outcome: 'duplicate', domain: publicDomain(row), accountId: row.account_id };
    }
    throw err;
  }
}
