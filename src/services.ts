// The services a running Kiln is made of, chosen once at start from configuration. The HTTP layer adds
// its own per-process parts (src/http/services.ts).
import type { Config } from './config.ts';
import type { Database } from './store/db.ts';
import type { Clock } from './clock.ts';
import type { RateLimiter } from './core/rate-limiter.ts';
import type { BlobStore } from './blobs/store.ts';
import type { StylesheetCompiler } from './stylesheet/compiler.ts';
import type { EventBus } from './events/bus.ts';
import type { Mailer } from './mail/mailer.ts';
import type { DataCache } from './data/cache.ts';
import type { ExtractionPool } from './data/pool.ts';
import type { LimiterFactory } from './ratelimit/limiters.ts';
import type { StreamHub } from './sse/hub.ts';
import type { DataLossGuard } from './guard/guard.ts';
import type { DocumentCache } from './core/document-cache.ts';
import type Stripe from 'stripe';
import type { PlanSettings } from './billing/plan-settings.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { MessageBus } from './bus/bus.ts';
import type { AiEditHandler } from './ai-edit/handler.ts';

export interface Services {
  config: Config;
  database: Database;
  /** 32 bytes shared by every process of this Kiln (src/store/instance-secret.ts): signs messages and hints. */
  secret: Buffer;
  clock: Clock;
  /** Rate-limit counters: memory, or Redis when REDIS_URL is set (shared by every process). */
  limiters: LimiterFactory;
  /** Login attempts (address + email). */
  loginLimiter: RateLimiter;
  /** 100 requests / 15 min per client address on the routes src/ratelimit/http.ts lists. */
  generalLimiter: RateLimiter;
  /** 5 attempts / hour: signup, password reset, sync-key generation, agent-key making, share-token regeneration. */
  strictLimiter: RateLimiter;
  /** Upload bytes, content-addressed. */
  blobs: BlobStore;
  /** Utility stylesheets compiled after saves. */
  stylesheets: StylesheetCompiler;
  /** Change events for sync streams and live-sync lanes. */
  events: EventBus;
  /** Outgoing mail: SMTP when configured, else files in DATA_DIR/outbox. */
  mailer: Mailer;
  /** Answers of the public data API (`/_/api`, `?data=`); in Redis when REDIS_URL is set. */
  dataCache: DataCache;
  /** Worker threads that parse documents and run data API rules off the main thread (started on first use). */
  extractions: ExtractionPool;
  /** This process's event streams, grouped by channel (closed by closeServices). */
  hub: StreamHub;
  /** Document bytes and what each URL served lately (src/nodes/serve.ts). */
  documents: DocumentCache;
  /** 10 custom-domain calls a minute per user (src/domains/limiter.ts). */
  domainLimiter: RateLimiter;
  /** Collection submissions per collection and address in an hour; each collection sets its own bound
   *  (src/collections/collections.ts). */
  submissionLimiter: RateLimiter;
  /** A submitter's changes to its record (PUT with its edit token), an hour: per record, and per collection
   *  and address (limits.collection.rewrites). */
  rewriteLimiters: { perRecord: RateLimiter; perAddress: RateLimiter };
  /** The Stripe package's client, for webhook signatures and Checkout, made on first use (src/billing/stripe.ts). */
  stripe: () => Promise<Stripe>;
  /** Per-plan upload limits an administrator set (src/billing/plan-settings.ts). */
  planSettings: PlanSettings;
  /** The data-clobber guard: checks each write for destroyed page data (src/guard/guard.ts). */
  guard: DataLossGuard;
  /** This process's Prometheus metrics (src/metrics/metrics.ts). */
  metrics: Metrics;
  /** Document hosts' message buses (src/bus). */
  bus: MessageBus;
  /** The built-in AI edit handler on the buses (src/ai-edit): answers with the operator's engines, or says
   *  why it cannot. */
  aiEdit: AiEditHandler;
}
