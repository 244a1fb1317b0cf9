// Configuration comes from the environment only, validated once at start.
import { z } from 'zod';
import path from 'node:path';
import { limits } from './limits.ts';

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no'])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

/** Every variable Kiln reads, with its help text. `kiln --help` prints this table. */
export const ENV_HELP: Array<[string, string]> = [
  ['PORT', 'TCP port to listen on (default 8080)'],
  ['HOST', 'address to bind (default 127.0.0.1: this machine only; 0.0.0.0 listens on every interface)'],
  ['ROOT_DOMAIN', 'main app host; documents live at <username>.ROOT_DOMAIN (default kiln.localhost:8080)'],
  ['BASE_URL', 'public address of the main app (default http://ROOT_DOMAIN)'],
  ['DATA_DIR', 'folder for the SQLite database, blobs and the mail outbox (default ./data)'],
  ['DATABASE_URL', 'postgres://… switches storage to PostgreSQL (default: SQLite in DATA_DIR)'],
  ['REDIS_URL', 'redis://… shares events, caches and rate limits across processes'],
  ['SMTP_URL', 'smtp://user:pass@host:port for outgoing mail (default: files in DATA_DIR/outbox)'],
  ['MAIL_FROM', 'sender address for outgoing mail (default Kiln <no-reply@ROOT_DOMAIN>)'],
  ['STRIPE_SECRET_KEY', 'Stripe API key (payments are optional)'],
  ['STRIPE_WEBHOOK_SECRET', 'secret that signs Stripe webhooks'],
  ['STRIPE_PRICE_PERSONAL', 'Stripe price id of the Personal plan (Checkout)'],
  ['STRIPE_PRICE_MAKER', 'Stripe price id of the Maker plan (Checkout)'],
  ['STRIPE_API_URL', 'another Stripe API address (a stand-in such as stripe-mock; default Stripe itself)'],
  ['DOMAIN_WEBHOOK_SECRET', 'shared secret for the custom-domain provider webhook HMAC'],
  ['TRUST_PROXY', 'true when behind a reverse proxy that sets X-Forwarded-* (default false)'],
  ['LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent (default info)'],
  [
    'MAX_STREAMS_PER_ADDRESS',
    `live streams one client address may hold open in one process; more answer 429 (default ${limits.streamsPerAddress})`,
  ],
  ['HEADERS_TIMEOUT_MS', `time a client has to send a request's headers (default ${limits.serverTimeouts.headersMs})`],
  [
    'REQUEST_TIMEOUT_MS',
    `time a client has to send a whole request, body included (default ${limits.serverTimeouts.requestMs}); never cuts answers such as live streams`,
  ],
];

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  ROOT_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+(:\d{1,5})?$/, 'must be a lowercase host name with an optional :port')
    .default('kiln.localhost:8080'),
  BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// (leave unset for SQLite)')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis://')
    .optional(),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .optional(),
  MAIL_FROM: z.string().optional(),
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  STRIPE_PRICE_PERSONAL: z.string().optional(),
  STRIPE_PRICE_MAKER: z.string().optional(),
  STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  DOMAIN_WEBHOOK_SECRET: z.string().optional(),
  TRUST_PROXY: bool.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAX_STREAMS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000_000).default(limits.streamsPerAddress),
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(limits.serverTimeouts.headersMs),
  REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(24 * 3_600_000)
    .default(limits.serverTimeouts.requestMs),
});

export interface Config {
  port: number;
  host: string;
  /** Host (with port when not 80/443) of the main app, e.g. `kiln.localhost:8080`. */
  rootDomain: string;
  /** `rootDomain` without the port: the cookie domain and the suffix of document hosts. */
  rootHostname: string;
  baseUrl: string;
  /** True when BASE_URL is https: cookies get `Secure`. */
  secure: boolean;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  smtpUrl?: string;
  mailFrom: string;
  stripeSecretKey?: string;
  stripeWebhookSecret?: string;
  stripePrices: { personal?: string; maker?: string };
  stripeApiUrl?: string;
  domainWebhookSecret?: string;
  trustProxy: boolean;
  logLevel: string;
  /** Event streams one client address may hold open in this process. */
  maxStreamsPerAddress: number;
  /** Time to receive a request's headers, and a whole request (ms). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const [name] of ENV_HELP) {
    const v = env[name];
    if (v !== undefined && v !== '') input[name] = v;
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `  ${i.path.join('.')}: ${i.message} (got ${JSON.stringify(input[String(i.path[0])])})`,
    );
    throw new ConfigError(
      `Invalid configuration:\n${lines.join('\n')}\nRun \`kiln --help\` for the list of variables.`,
    );
  }
  const c = parsed.data;
  const baseUrl = (c.BASE_URL ?? `http://${c.ROOT_DOMAIN}`).replace(/\/+$/, '');
  return {
    port: c.PORT,
    host: c.HOST,
    rootDomain: c.ROOT_DOMAIN,
    rootHostname: c.ROOT_DOMAIN.replace(/:\d+$/, ''),
    baseUrl,
    secure: baseUrl.startsWith('https://'),
    dataDir: path.resolve(c.DATA_DIR),
    databaseUrl: c.DATABASE_URL,
    redisUrl: c.REDIS_URL,
    smtpUrl: c.SMTP_URL,
    mailFrom: c.MAIL_FROM ?? `Kiln <no-reply@${c.ROOT_DOMAIN.replace(/:\d+$/, '')}>`,
    stripeSecretKey: c.STRIPE_SECRET_KEY,
    stripeWebhookSecret: c.STRIPE_WEBHOOK_SECRET,
    stripePrices: { personal: c.STRIPE_PRICE_PERSONAL, maker: c.STRIPE_PRICE_MAKER },
    stripeApiUrl: c.STRIPE_API_URL,
    domainWebhookSecret: c.DOMAIN_WEBHOOK_SECRET,
    trustProxy: c.TRUST_PROXY,
    logLevel: c.LOG_LEVEL,
    maxStreamsPerAddress: c.MAX_STREAMS_PER_ADDRESS,
    headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
    // Node requires the request timeout to be at least the headers timeout.
    requestTimeoutMs: Math.max(c.REQUEST_TIMEOUT_MS, c.HEADERS_TIMEOUT_MS),
  };
}
