// Builds the Fastify application: hosts → auth → routes, one error handler.
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import querystring from 'node:querystring';
import http from 'node:http';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { HttpServices } from './services.ts';
import { KilnError, fail, type ErrorCode } from '../errors.ts';
import { TOO_DEEP, nestsDeeperThan } from '../core/json.ts';
import { isStorageFull, isStorageUnavailable, isUniqueViolation } from '../store/errors.ts';
import { limits } from '../limits.ts';
import { LOOPBACK, registerHosts } from './hosts.ts';
import { registerAuth } from './auth.ts';
import { registerSlowClients } from './slow-clients.ts';
import { guardConnections } from './connections.ts';
import { registerRateLimits } from '../ratelimit/http.ts';
import { safeReturn, wantsHtml } from './io.ts';
import { registerMessages, withMessage } from './messages.ts';
import { errorPage } from '../ui/pages.ts';
import { routes } from './routes/index.ts';
import { registerSchemas } from './schema.ts';
import { routeGroup } from '../metrics/metrics.ts';
import type { HotServed } from './hot-path.ts';
import { registerFraming } from './framing.ts';
import { answerOnSocket } from './socket-answer.ts';
import { logDestination } from '../log.ts';
import './context.ts';

export async function buildApp(s: HttpServices): Promise<FastifyInstance> {
  let log: FastifyInstance['log'] | undefined;
  const logRequests = ['trace', 'debug', 'info'].includes(s.config.logLevel);
  const app = Fastify({
    // The hot path (src/http/hot-path.ts) answers what it holds before the framework's handler runs;
    // the server is made as Fastify makes its own.
    serverFactory: (handler, opts) => {
      const served = (line: HotServed) => {
        s.metrics.answered('documents', line.method, line.status, line.ms / 1000);
        s.metrics.cacheLookup('hot', true);
        if (logRequests) log?.info({ ...line, ms: Math.round(line.ms * 10) / 10, hot: true }, 'request');
      };
      const server = http.createServer(opts.http ?? {}, (req, res) => {
        if (!s.hot.answer(req, res, served)) handler(req, res);
      });
      // Connections per address and the first byte's deadline, before Node reads a byte (./connections.ts).
      guardConnections(server, s.connections, s.config.firstByteTimeoutMs);
      // What Fastify sets on a server it makes (the same values as the options below).
      server.keepAliveTimeout = limits.serverTimeouts.keepAliveMs;
      server.requestTimeout = s.config.requestTimeoutMs;
      return server;
    },
    // stdout through a bounded buffer: a stalled log reader costs lines (counted), never memory.
    logger: s.config.logLevel === 'silent' ? false : { level: s.config.logLevel, stream: logDestination() },
    // One line per request, not Fastify's two.
    logController: new OneLinePerRequest(),
    clientErrorHandler: answerClientError,
    trustProxy: s.config.trustProxy,
    bodyLimit: limits.body.json,
    // Slow clients (slowloris): headers and whole requests have a deadline; answers (SSE) do not.
    // Anonymous bodies and requests in flight per address have tighter bounds (./slow-clients.ts).
    requestTimeout: s.config.requestTimeoutMs,
    keepAliveTimeout: limits.serverTimeouts.keepAliveMs,
    // Node checks those deadlines every connectionsCheckingInterval (30 s by default).
    http: {
      // Probes may send no Host (HTTP/1.0, some balancers): only the routes made for any host answer them.
      requireHostHeader: false,
      // Node checks headersTimeout <= requestTimeout when it makes the server (its default is 5 minutes).
      requestTimeout: s.config.requestTimeoutMs,
      headersTimeout: s.config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(s.config.headersTimeoutMs / 4))),
    },
    // Older Hyperclay Local builds call the sync API without its `/_` (`/sync/nodes`): on the main app
    // (never on a document host, where `/sync/…` may be someone's folder) they reach the same routes.
    rewriteUrl: (req) => {
      const url = req.url ?? '/';
      if (!url.startsWith('/sync/') && url !== '/sync' && !url.startsWith('/sync?')) return url;
      const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
      return host === s.config.rootHostname || LOOPBACK.has(host) ? `/_${url}` : url;
    },
    // Document paths are case-sensitive and may be long; keep the router strict.
    // node:querystring is several times faster than the default parser on long `?data=` rules.
    routerOptions: {
      ignoreTrailingSlash: false,
      maxParamLength: limits.pathLength,
      querystringParser: (q: string) => querystring.parse(q),
    },
    // Malformed URLs (bad percent-escapes) are refused before any hook runs: answer in Kiln's shape too.
    frameworkErrors: (err, req, anyReply) => {
      const reply = anyReply as unknown as FastifyReply;
      const status = (err as FastifyError).statusCode ?? 400;
      const msg = status === 400 ? 'The request URL is malformed.' : 'The request was refused.';
      if (wantsHtml(req)) return reply.code(status).type('text/html; charset=utf-8').send(errorPage(status, msg));
      return reply.code(status).send({ msg, msgType: 'error' });
    },
  });

  log = app.log;
  if (s.config.logLevel !== 'silent') logDestination().reportTo(app.log);
  // Requests in flight per address and the short body deadline of anonymous requests, before any
  // other hook (a refused request costs nothing more).
  registerSlowClients(app, s);
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: limits.body.form });
  // JSON bodies: Fastify's parser (prototype poisoning refused), after a depth check on the text, so that
  // nothing downstream (stringify, schemas) recurses through 100 000 levels; a refusal is 400
  // `invalid-body` like malformed JSON. Route body limits still apply (they bound the text).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (nestsDeeperThan(body as string)) return done(fail('invalid-body', TOO_DEEP), undefined);
    parseJson(req, body as string, (err, value) =>
      err ? done(fail('invalid-body', 'The body is not valid JSON.'), undefined) : done(null, value),
    );
  });
  // Text bodies (the browser library saves HTML as text/plain) arrive as exact bytes.
  app.removeContentTypeParser(['text/plain']);
  app.addContentTypeParser(/^text\//, { parseAs: 'buffer', bodyLimit: limits.body.text }, (_req, body, done) =>
    done(null, body),
  );

  registerMessages(app, s.secret);
  registerHosts(app, s);
  app.addHook('onClose', async () => s.hot.close());
  app.addHook('onResponse', async (req, reply) => {
    const group = routeGroup(req.site?.kind, req.routeOptions?.url);
    const status = reply.statusCode;
    s.metrics.answered(group, req.method, status, reply.elapsedTime / 1000);
  });
  // No page Kiln renders is framed, on any host; accounts' documents and uploads keep their owners' choice.
  registerFraming(app);
  registerAuth(app, s);
  registerRateLimits(app, s);

  /** An error page that knows who is signed in (a developer sees their menu) and, on a document host,
   *  leads back to the main app. */
  function errorPageFor(req: FastifyRequest, status: number, msg: string): string {
    const dev = req.caller?.actor?.accountType === 'dev' ? req.caller.actor.username : undefined;
    return errorPage(status, msg, { username: dev, base: req.site?.kind === 'main' ? undefined : s.config.baseUrl });
  }

  app.setErrorHandler((err: FastifyError | KilnError, req, reply) => {
    let status: number;
    let msg: string;
    let code: ErrorCode | undefined;
    let extra: Record<string, unknown> | undefined;
    if (err instanceof KilnError) {
      ({ status, code, extra } = err);
      msg = err.message;
    } else if (isUniqueViolation(err)) {
      status = 409;
      msg = 'That already exists.';
      code = 'name-conflict';
    } else if (isStorageFull(err)) {
      req.log.error(`storage full or read-only: ${(err as Error).message}`);
      status = 507;
      msg = 'The server is out of storage space; nothing was saved. Try again later.';
      code = 'insufficient-storage';
    } else if (isStorageUnavailable(err)) {
      // The database is away (restarting, unreachable): nothing was written; the client may retry.
      req.log.warn(`storage unavailable: ${(err as Error).message}`);
      status = 503;
      msg = 'Storage is unavailable right now; nothing was changed. Try again in a moment.';
      code = 'storage-unavailable';
      reply.header('Retry-After', String(limits.storageRetryAfterSeconds));
    } else if ((err as FastifyError).statusCode && (err as FastifyError).statusCode! < 500) {
      status = (err as FastifyError).statusCode!;
      msg = status === 413 ? 'The request body is too large.' : err.message;
      if (status === 413) code = 'too-large';
      if (status === 415) msg = 'Unsupported content type.';
    } else {
      req.log.error(err);
      status = 500;
      msg = 'Something went wrong on our side.';
    }
    if ((status === 429 || status === 503) && extra?.retryAfter) reply.header('Retry-After', String(extra.retryAfter));
    if (code === 'outcome-unknown') reply.header('Retry-After', String(limits.storageRetryAfterSeconds));
    if (wantsHtml(req)) {
      if (status === 401 || (status === 403 && code === 'login-required')) {
        return reply.redirect(
          withMessage(s.secret, '/_/login', msg, 'error', safeReturn(req.url, '') || undefined),
          302,
        );
      }
      return reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(errorPageFor(req, status, msg));
    }
    // Routes whose clients read `error` (the message bus: hyperclayjs) get it too.
    const error = req.routeOptions?.config?.errorField ? { error: msg } : {};
    return reply.code(status).send({ msg, msgType: 'error', ...(code ? { code } : {}), ...extra, ...error });
  });

  app.setNotFoundHandler((req, reply) => {
    const msg = 'Not found.';
    if (wantsHtml(req))
      return reply
        .code(404)
        .type('text/html; charset=utf-8')
        .send(errorPageFor(req, 404, msg));
    return reply.code(404).send({ msg, msgType: 'error', code: 'not-found' });
  });

  registerSchemas(app);
  for (const plugin of routes) await app.register(plugin, { services: s });
  return app;
}

/** A request Node could not parse (bad request line, headers too large, too slow): answered in Kiln's
 *  shape on the socket itself (./socket-answer.ts). */
function answerClientError(err: Error & { code?: string }, socket: import('node:net').Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const msg =
    status === 408
      ? 'The request took too long to arrive.'
      : status === 431
        ? 'The request headers are too large.'
        : 'The request is malformed.';
  answerOnSocket(socket, status, msg);
}

/** Fastify logs a request twice (received, completed): Kiln once, when it is answered, with what an
 *  operator reads first (method, host, URL, status, milliseconds); a failure keeps Fastify's error line. */
class OneLinePerRequest extends LogController {
  incomingRequest(): void {}
  requestCompleted(err: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: req.method,
      host: req.headers.host,
      url: req.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (err) req.log.error({ ...line, err }, 'request failed');
    else req.log.info(line, 'request');
  }
}
