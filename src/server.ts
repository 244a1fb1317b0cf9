// Starts Kiln: configuration → services → HTTP.
import type { Socket } from 'node:net';
import { sweepTrash } from './nodes/trash.ts';
import { sweepOldActivity } from './nodes/activity.ts';
import { sweepLastExports } from './accounts/export.ts';
import { sweepOAuth } from './oauth/grants.ts';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Services } from './services.ts';
import { openDatabase } from './store/db.ts';
import { loadInstanceSecret } from './store/instance-secret.ts';
import { systemClock, type Clock } from './clock.ts';
import { createLimiterFactory } from './ratelimit/limiters.ts';
import { MINUTE, limits } from './limits.ts';
import { withHttp, type HttpServices } from './http/services.ts';
import { buildApp } from './http/app.ts';
import { openBlobStore } from './blobs/open.ts';
import { sweepBlobs } from './blobs/sweep.ts';
import { MeteredBlobStore } from './blobs/metered.ts';
import { Metrics } from './metrics/metrics.ts';
import { scheduleBackups } from './backup/schedule.ts';
import { collectWhenIdle } from './idle-heap.ts';
import { StylesheetCompiler } from './stylesheet/compiler.ts';
import { MemoryEventBus } from './events/memory.ts';
import { OutboxMailer, SmtpMailer } from './mail/mailer.ts';
import { RedisEventBus, namespaceFor } from './events/redis.ts';
import { MemoryDataCache, RedisDataCache, TieredDataCache } from './data/cache.ts';
import { ExtractionPool } from './data/pool.ts';
import { StreamHub } from './sse/hub.ts';
import { DocumentCache } from './core/document-cache.ts';
import { stripeClient } from './billing/stripe.ts';
import { PlanSettings } from './billing/plan-settings.ts';
import { MessageBus } from './bus/bus.ts';
import { AiEditHandler } from './ai-edit/handler.ts';
import path from 'node:path';
import { DataLossGuard, sweepOldGuardEvents } from './guard/guard.ts';

export async function createServices(config: Config, clock: Clock = systemClock): Promise<Services> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const limiters = await createLimiterFactory(config, clock);
  const secret = await loadInstanceSecret(database.db);
  const events = config.redisUrl
    ? await RedisEventBus.open(config.redisUrl, namespaceFor(config))
    : new MemoryEventBus(Date.now, database.dataVersion);
  const hub = new StreamHub(events);
  const metrics = new Metrics(() => hub.stats().streams, database.statements);
  hub.onEvent = (id) => metrics.busLag.observe(Math.max(0, Date.now() - id / 1000) / 1000);
  const blobs = new MeteredBlobStore(await openBlobStore(config.blobs, config.dataDir), metrics.blobErrors);
  const planSettings = new PlanSettings(database.db);
  await planSettings.start();
  const services: Services = {
    config,
    database,
    secret,
    clock,
    limiters,
    loginLimiter: limiters.create('login', limits.loginAttempts.max, limits.loginAttempts.windowMs),
    generalLimiter: limiters.create('general', limits.generalLimiter.max, limits.generalLimiter.windowMs),
    strictLimiter: limiters.create('strict', limits.strictLimiter.max, limits.strictLimiter.windowMs),
    blobs,
    stylesheets: new StylesheetCompiler(database.db, clock),
    mailer: config.smtpUrl
      ? new SmtpMailer(config.smtpUrl, config.mailFrom)
      : new OutboxMailer(
          path.join(config.dataDir, 'outbox'),
          config.mailFrom,
          // With no SMTP, the links people need (confirm, reset) are in the log: at warn, so they show.
          ['silent', 'fatal', 'error'].includes(config.logLevel) ? () => {} : (line) => console.warn(`[warn] ${line}`),
        ),
    events,
    dataCache: config.redisUrl
      ? new TieredDataCache(await RedisDataCache.open(config.redisUrl, namespaceFor(config)))
      : new MemoryDataCache(),
    extractions: new ExtractionPool(),
    hub,
    metrics,
    documents: new DocumentCache(),
    domainLimiter: limiters.create('domains', limits.domainCalls.max, limits.domainCalls.windowMs),
    submissionLimiter: limiters.create('submissions', limits.collection.perAddressHour.max, 60 * MINUTE),
    rewriteLimiters: {
      perRecord: limiters.create(
        'record-rewrites',
        limits.collection.rewrites.perRecordHour,
        limits.collection.rewrites.windowMs,
      ),
      perAddress: limiters.create(
        'address-rewrites',
        limits.collection.rewrites.perAddressHour,
        limits.collection.rewrites.windowMs,
      ),
    },
    stripe: stripeClient(config),
    planSettings,
    guard: null as unknown as DataLossGuard,
    bus: null as unknown as MessageBus,
    aiEdit: null as unknown as AiEditHandler,
  };
  metrics.cacheHolds('documents', () => services.documents.content.heldBytes);
  metrics.cacheHolds('savedTexts', () => services.documents.texts.heldBytes);
  metrics.cacheHolds('dataAnswers', () => services.dataCache.heldBytes);
  if (events instanceof MemoryEventBus) metrics.cacheHolds('replayLog', () => events.heldBytes);
  // These work with the services they belong to.
  services.guard = new DataLossGuard(services);
  services.bus = new MessageBus(services);
  services.aiEdit = new AiEditHandler(services, config.aiEdit);
  return services;
}

export async function closeServices(s: Services) {
  s.planSettings.stop();
  // AI edits are aborted first, and their pages told, before the streams close (the streams' last words); their
  // own errors go out on the bus before it closes.
  const edits = s.aiEdit.close();
  s.hub.closeAll();
  s.guard.close();
  await edits;
  await s.guard.idle();
  await s.stylesheets.idle();
  await s.events.close();
  await s.dataCache.close();
  await s.extractions.close();
  await s.limiters.close();
  await s.blobs.close();
  await s.database.close();
}

export interface Running {
  app: FastifyInstance;
  services: HttpServices;
  url: string;
  /** Serves a connection accepted elsewhere (a worker's, from its primary: src/workers.ts). */
  accept(socket: Socket): void;
  close(): Promise<void>;
}

/** Starts Kiln on `config.port`, or with `listen: false` on no port at all: connections then come
 *  through `accept` (a worker of `kiln serve --workers`, whose primary holds the port). */
export async function startServer(config: Config, clock?: Clock, opts: { listen?: boolean } = {}): Promise<Running> {
  const services = withHttp(await createServices(config, clock));
  const app = await buildApp(services);
  // Large documents grow the heap; it is given back once the process has been idle a while.
  let lastRequestAt = Date.now();
  // Every request, those the hot path answers before the framework included.
  app.server.prependListener('request', () => {
    lastRequestAt = Date.now();
  });
  const heap = collectWhenIdle(() => lastRequestAt);
  const listen = opts.listen ?? true;
  if (listen) await app.listen({ port: config.port, host: config.host });
  else {
    await app.ready();
    // What a listening server starts on its 'listening' event: the connection list behind the request,
    // headers and keep-alive timeouts and closeIdleConnections (node:http), which accepted connections
    // need as much as listened-for ones.
    app.server.emit('listening');
  }
  const port = listen ? (app.server.address() as { port: number }).port : config.port;
  // Accepted connections: a server that does not listen cannot wait for them when it closes (a listening
  // one does), so the close below does.
  const accepted = new Set<Socket>();
  // The trash's 30 days: one sweep shortly after start, then hourly (each process; a purge is one
  // transaction, so two processes sweeping at once purge each deletion once).
  const sweep = () =>
    void Promise.all([
      sweepTrash(services),
      sweepOldActivity(services),
      sweepLastExports(services),
      sweepOldGuardEvents(services),
      sweepOAuth(services),
    ])
      // Blobs after the trash: what the trash let go of is unreferenced now.
      .then(() => sweepBlobs(services))
      .catch((err) => app.log.warn({ err }, 'sweeping the trash, old activity or blobs failed; retried in an hour'));
  // The data-clobber guard's checks that a process killed between a write and its check left owed.
  void services.guard
    .resume()
    .catch((err) => app.log.warn({ err }, 'running the data-clobber guard’s owed checks failed; run at the next look'));
  const first = setTimeout(sweep, 60_000).unref();
  const hourly = setInterval(sweep, 3_600_000).unref();
  const backups = scheduleBackups(services, app.log);
  return {
    app,
    services,
    url: `http://127.0.0.1:${port}`,
    accept(socket) {
      accepted.add(socket);
      socket.once('close', () => accepted.delete(socket));
      app.server.emit('connection', socket);
      socket.resume();
    },
    close: async () => {
      clearTimeout(first);
      clearInterval(hourly);
      heap.stop();
      // AI edits end before the streams close (app.close: the live-sync plugin's preClose); see closeServices.
      void services.aiEdit.close();
      await backups.stop();
      await app.close();
      // Requests in flight on accepted connections finish (new ones are answered 503 while closing);
      // each connection is closed once idle.
      while (accepted.size > 0) {
        app.server.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 50));
      }
      await closeServices(services);
    },
  };
}
