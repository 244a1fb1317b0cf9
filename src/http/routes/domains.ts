// Custom domains (src/domains/). Management is for signed-in developers on the main app; bodies may be
// JSON or form-encoded; every management call counts against `limits.domainCalls` (10 a minute per
// user; beyond it 429 with Retry-After).
//
//   GET  /_/dashboard/domains              page; JSON {msg, msgType, domains} for programs
//   POST /_/dashboard/domains              {domain} → 201 {msg, msgType, domain} (`pending`, with `dns`:
//                                          a CNAME to the root domain and a TXT verification value);
//                                          400 invalid name, 409 already added (by anyone)
//   POST /_/dashboard/domains/:id/delete   → {msg, msgType, domain}
//
//   POST /_/webhooks/domains               the domain provider's events, HMAC-signed (src/domains/webhook.ts)
//   GET  /_/domains/ask?domain=<host>      Caddy's on-demand TLS `ask`: 200 for a host Kiln serves (an
//                                          active custom domain, the root domain, an account's document
//                                          host), 404 otherwise
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import { KilnError, badRequest, notFound } from '../../errors.ts';
import { assertSameOrigin } from '../origin.ts';
import { wantsHtml, queryMsg, backWithRefusal } from '../io.ts';
import { fields } from '../schema.ts';
import { withMessage } from '../messages.ts';
import { isServedHost } from '../../domains/domains.ts';
import { addCustomDomain, customDomains, domainManager, removeCustomDomain } from '../../domains/use-cases.ts';
import { ENTER_A_DOMAIN } from '../../domains/hostname.ts';
import { countDomainCall } from '../../domains/limiter.ts';
import {
  DOMAIN_WEBHOOK_PATH,
  SIGNATURE_HEADER,
  applyDomainEvent,
  parseDomainEvent,
  verifyDomainSignature,
} from '../../domains/webhook.ts';
import { domainsPage } from '../../ui/domains.ts';
import { onlyOn } from '../hosts.ts';

const DOMAINS = '/_/dashboard/domains';
/** Webhook bodies are small JSON objects. */
const WEBHOOK_BODY_LIMIT = 64 * 1024;

/** The domain as typed; whether it is one Kiln can serve (its length too, once trimmed) is
 *  `addDomain`'s to say. Left out, it is empty. */
const schemas = {
  add: fields(z.object({ domain: z.string().default('') }), {
    domain: { code: 'invalid-domain', msg: ENTER_A_DOMAIN },
  }),
  // A malformed id names no domain: 404, as an unknown one.
  domain: z.object({
    id: z
      .string()
      .regex(/^\d{1,15}$/)
      .transform(Number)
      .catch(0),
  }),
  // Caddy names one host; anything else names none (400 missing-domain).
  ask: z.object({ domain: z.unknown().transform((v) => (typeof v === 'string' ? v : undefined)) }),
  // The page's own `msg` (a signed message) rides along in the query.
  page: z.looseObject({}),
};

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main');
  /** A signed-in developer on the main app (strangers 401, app users 403). API calls and changes are
   *  counted; a person viewing the page is not (looking never uses up the limit). */
  async function manager(req: FastifyRequest, reply: FastifyReply, write: boolean) {
    if (write) assertSameOrigin(req);
    const actor = domainManager(req.ctx);
    if (write || !wantsHtml(req)) await countDomainCall(s, reply, actor.accountId);
    return actor;
  }

  async function operate(
    req: FastifyRequest,
    reply: FastifyReply,
    op: () => Promise<{ msg: string; status?: number; extra: Record<string, unknown> }>,
  ) {
    let result: { msg: string; status?: number; extra: Record<string, unknown> };
    try {
      // The caller first (cross-origin, who, the call's count), then the input: a stranger learns nothing of it.
      await manager(req, reply, true);
      if (req.validationError) throw req.validationError;
      result = await op();
    } catch (err) {
      const back = backWithRefusal(req, reply, err, DOMAINS);
      if (back) return back;
      throw err;
    }
    if (wantsHtml(req)) return reply.redirect(withMessage(s.secret, DOMAINS, result.msg, 'success'), 302);
    return reply.code(result.status ?? 200).send({ msg: result.msg, msgType: 'success', ...result.extra });
  }

  app.get(DOMAINS, { schema: { querystring: schemas.page } }, async (req, reply) => {
    const actor = await manager(req, reply, false);
    const domains = await customDomains(req.ctx);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', domains });
    const msg = queryMsg(req);
    return reply
      .type('text/html; charset=utf-8')
      .send(domainsPage({ username: actor.username, domains, rootHostname: s.config.rootHostname, msg }));
  });

  app.post(DOMAINS, { schema: { body: schemas.add }, attachValidation: true }, (req, reply) =>
    operate(req, reply, async () => {
      const domain = await addCustomDomain(req.ctx, req.body);
      return {
        msg: `Added ${domain.domain}. Point it at ${domain.dns.cname.value} (CNAME) and add the TXT record ${domain.dns.txt.name}; it is served once DNS is verified.`,
        status: 201,
        extra: { domain },
      };
    }),
  );

  app.post(`${DOMAINS}/:id/delete`, { schema: { params: schemas.domain }, attachValidation: true }, (req, reply) =>
    operate(req, reply, async () => {
      const domain = await removeCustomDomain(req.ctx, req.params);
      return { msg: `Removed ${domain.domain}: your documents are no longer served there.`, extra: { domain } };
    }),
  );

  app.get('/_/domains/ask', { schema: { querystring: schemas.ask } }, async (req, reply) => {
    const name = req.query.domain;
    if (!name) throw badRequest('The domain parameter is required.', 'missing-domain');
    reply.header('cache-control', 'no-store');
    if (!(await isServedHost(s, name))) throw notFound('Kiln does not serve that domain.');
    return reply.send({ msg: 'Kiln serves this domain.', msgType: 'success' });
  });

  // The webhook needs the exact body bytes for its signature: its own parser, in its own context.
  await app.register(async (hook) => {
    hook.removeAllContentTypeParsers();
    hook.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    hook.post(DOMAIN_WEBHOOK_PATH, { bodyLimit: WEBHOOK_BODY_LIMIT }, async (req, reply) => {
      const secret = s.config.domainWebhookSecret;
      if (!secret)
        throw new KilnError(
          503,
          'The domain webhook is not configured (DOMAIN_WEBHOOK_SECRET).',
          'webhook-not-configured',
        );
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const header = req.headers[SIGNATURE_HEADER];
      if (header === undefined)
        throw new KilnError(401, `The ${SIGNATURE_HEADER} header is required.`, 'missing-signature');
      if (!verifyDomainSignature(secret, body, header))
        throw new KilnError(401, 'The signature does not match the body.', 'invalid-signature');
      const event = parseDomainEvent(body);
      const applied = await applyDomainEvent(s, event);
      const msg =
        applied.outcome === 'duplicate'
          ? `Event ${event.id} was already received.`
          : applied.outcome === 'unchanged'
            ? `${applied.domain.domain} was already ${applied.domain.status}.`
            : `${applied.domain.domain}: ${event.type} applied.`;
      return reply.send({ msg, msgType: 'success', outcome: applied.outcome, domain: applied.domain });
    });
  });
};

export default plugin;
