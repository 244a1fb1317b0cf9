// Connecting an agent by URL (OAuth 2.1; src/oauth/). On the main app only.
//
//   ALL  /_/oauth/*                                    the authorization server (oidc-provider): /auth, /token,
//                                                      /token/revocation, /reg (RFC 7591), /jwks; it reads its own
//                                                      bodies
//   GET  /.well-known/oauth-authorization-server       its metadata (RFC 8414; also at /.well-known/openid-configuration)
//   GET  /.well-known/oauth-protected-resource/_/mcp   the MCP door's protected resource metadata (RFC 9728; also
//                                                      without the path)
//   GET  /_/connect/:uid                               the consent page (sign in first)
//   POST /_/connect/:uid                               {answer: allow|deny, account, folder, access: read|write}
//   POST /_/account/agents/:id/revoke                  disconnect one of your agents (its tokens stop working)
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import type { HttpServices } from '../services.ts';
import { onlyOn } from '../hosts.ts';
import { assertSameOrigin } from '../origin.ts';
import { done, formPost, queryMsg, sendPage } from '../io.ts';
import { serveOAuth } from '../../oauth/provider.ts';
import { OAUTH_MOUNT, protectedResourceMetadata } from '../../oauth/token.ts';
import { answerConsent, consentRequest } from '../../oauth/consent.ts';
import { revokeConnectedAgent } from '../../oauth/grants.ts';
import { signedIn } from '../../nodes/manage.ts';
import { consentPage, oauthErrorPage } from '../../ui/connect.ts';

const uidParams = z.object({
  uid: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .catch('-'),
});
const idParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number)
    .catch(0),
});
const consentBody = z.object({
  answer: z.enum(['allow', 'deny']),
  account: z.coerce.number().int().positive().optional(),
  folder: z.string().max(2048).optional().default(''),
  access: z.enum(['read', 'write']).optional().default('read'),
});

/** The provider answers on the raw request; an error before it answered is a plain 500 (its own errors are its
 *  OAuth answers). */
async function toProvider(s: HttpServices, req: FastifyRequest, reply: FastifyReply, path: string) {
  reply.hijack();
  try {
    await serveOAuth(s, req.raw, reply.raw, path);
  } catch (err) {
    req.log.error({ err }, 'the OAuth server failed');
    if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
    reply.raw.end(JSON.stringify({ error: 'server_error' }));
  }
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main', 'Connecting agents is on the main address of this Kiln.');

  await app.register(async (raw) => {
    // The provider reads its own bodies (form or JSON): the stream is left unread for it.
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, _payload, next) => next(null));
    raw.all(`${OAUTH_MOUNT}/*`, async (req, reply) => {
      const path = req.url.split('?')[0].slice(OAUTH_MOUNT.length);
      await toProvider(s, req, reply, path);
    });
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])
      raw.get(url, async (req, reply) => toProvider(s, req, reply, '/.well-known/openid-configuration'));
  });

  for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/_/mcp'])
    app.get(url, async (_req, reply) =>
      reply
        .header('access-control-allow-origin', '*')
        .header('cache-control', 'max-age=3600')
        .send(protectedResourceMetadata(s.config)),
    );

  app.get('/_/connect/:uid', { schema: { params: uidParams } }, async (req, reply) => {
    const view = await consentRequest(req.ctx, s, req.raw, reply.raw, req.params.uid);
    const username = signedIn(req.ctx, 'manage').username;
    return sendPage(reply, consentPage({ ...view, username, msg: queryMsg(req) }));
  });

  app.post(
    '/_/connect/:uid',
    { schema: { params: uidParams, body: consentBody }, attachValidation: true },
    formPost(
      (req) => `/_/connect/${(req.params as { uid: string }).uid}`,
      (_req, msg) => oauthErrorPage(msg.text),
      async (req, reply) => {
        assertSameOrigin(req);
        const { uid } = req.params as z.output<typeof uidParams>;
        const body = req.body as z.output<typeof consentBody>;
        const me = signedIn(req.ctx, 'manage');
        const next = await answerConsent(req.ctx, s, req.raw, reply.raw, uid, {
          allow: body.answer === 'allow',
          accountId: body.account ?? me.accountId,
          folder: body.folder,
          readOnly: body.access !== 'write',
        });
        return reply.header('cache-control', 'no-store').redirect(next, 303);
      },
    ),
  );

  app.post('/_/account/agents/:id/revoke', { schema: { params: idParams, body: z.unknown() } }, async (req, reply) => {
    assertSameOrigin(req);
    const me = signedIn(req.ctx, 'manage');
    const client = await revokeConnectedAgent(s, me.accountId, req.params.id);
    return done(req, reply, `${client} is disconnected: its access stopped at once.`, { redirect: '/_/account' });
  });
};

export default plugin;
