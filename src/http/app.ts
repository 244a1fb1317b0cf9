// Builds the Fastify application: hosts → auth → routes, one error handler.
import Fastify, { type FastifyInstance, type FastifyError, type FastifyReply } from 'fastify';
import querystring from 'node:querystring';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { Services } from '../services.ts';
import { KilnError } from '../errors.ts';
import { isUniqueViolation } from '../store/db.ts';
import { limits } from '../limits.ts';
import { registerHosts } from './hosts.ts';
import { registerAuth } from './auth.ts';
import { registerRateLimits } from '../ratelimit/http.ts';
import { wantsHtml, withMessage } from './answers.ts';
import { errorPage } from '../ui/pages.ts';
import { routes } from './routes/index.ts';
import './context.ts';

export async function buildApp(s: Services): Promise<FastifyInstance> {
  const app = Fastify({
    logger: s.config.logLevel === 'silent' ? false : { level: s.config.logLevel },
    trustProxy: s.config.trustProxy,
    bodyLimit: limits.body.json,
    // Document paths are case-sensitive and may be long; keep the router strict.
    // node:querystring is several times faster than the default parser on long `?data=` rules.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: limits.pathLength, querystringParser: (q: string) => querystring.parse(q) },
    // Malformed URLs (bad percent-escapes) are refused before any hook runs: answer in Kiln's shape too.
    frameworkErrors: (err, req, anyReply) => {
      const reply = anyReply as unknown as FastifyReply;
      const status = (err as FastifyError).statusCode ?? 400;
      const msg = status === 400 ? 'The request URL is malformed.' : 'The request was refused.';
      if (wantsHtml(req)) return reply.code(status).type('text/html; charset=utf-8').send(errorPage(status, msg));
      return reply.code(status).send({ msg, msgType: 'error' });
    },
  });

  await app.register(cookie);
  await app.register(formbody, { bodyLimit: limits.body.form });
  // Text bodies (the browser library saves HTML as text/plain) arrive as exact bytes.
  app.removeContentTypeParser(['text/plain']);
  app.addContentTypeParser(/^text\//, { parseAs: 'buffer', bodyLimit: limits.body.text }, (_req, body, done) => done(null, body));

  registerHosts(app, s);
  registerAuth(app, s);
  registerRateLimits(app, s);

  app.setErrorHandler((err: FastifyError | KilnError, req, reply) => {
    let status: number;
    let msg: string;
    let code: string | undefined;
    let extra: Record<string, unknown> | undefined;
    if (err instanceof KilnError) {
      ({ status, code, extra } = err);
      msg = err.message;
    } else if (isUniqueViolation(err)) {
      status = 409;
      msg = 'That already exists.';
      code = 'name-conflict';
    } else if ((err as FastifyError).statusCode && (err as FastifyError).statusCode! < 500) {
      status = (err as FastifyError).statusCode!;
      msg = status === 413 ? 'The request body is too large.' : err.message;
      if (status === 415) msg = 'Unsupported content type.';
    } else {
      req.log.error(err);
      status = 500;
      msg = 'Something went wrong on our side.';
    }
    if (status === 429 && extra?.retryAfter) reply.header('Retry-After', String(extra.retryAfter));
    if (wantsHtml(req)) {
      if (status === 401 || (status === 403 && code === 'login-required')) {
        return reply.redirect(withMessage('/_/login', msg, 'error', req.url), 302);
      }
      return reply.code(status).type('text/html; charset=utf-8').send(errorPage(status, msg));
    }
    return reply.code(status).send({ msg, msgType: 'error', ...(code ? { code } : {}), ...extra });
  });

  app.setNotFoundHandler((req, reply) => {
    const msg = 'Not found.';
    if (wantsHtml(req)) return reply.code(404).type('text/html; charset=utf-8').send(errorPage(404, msg));
    return reply.code(404).send({ msg, msgType: 'error' });
  });

  for (const plugin of routes) await app.register(plugin, { services: s });
  return app;
}
