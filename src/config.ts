// Configuration comes from the environment only, validated once at start.
import { z } from 'zod';
import path from 'node:path';
import { limits } from './limits.ts';
import { AI_EDIT_ENV_HELP, AiEditConfigError, aiEditConfig, type AiEditConfig } from './ai-edit/config.ts';

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no'])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

/** Every variable Kiln reads, with its help text. `kiln --help` prints this table. */
export const ENV_HELP: Array<[string, string]> = [
  ['PORT', 'TCP port to listen on (default 8080)'],
  ['HOST', 'address to bind (default 127.0.0.1: this machine only; 0.0.0.0 listens on every interface)'],
  ['ROOT_DOMAIN', 'main app host; documents live at <username>.ROOT_DOMAIN (default kiln.localhost:PORT)'],
  ['BASE_URL', 'public address of the main app (default http://ROOT_DOMAIN)'],
  ['DATA_DIR', 'folder for the SQLite database, blobs and the mail outbox (default ./data)'],
  ['DATABASE_URL', 'postgres://… switches storage to PostgreSQL (default: SQLite in DATA_DIR)'],
  ['REDIS_URL', 'redis://… shares events, caches and rate limits across processes'],
  [
    'BLOB_STORE',
    'where uploads are kept: filesystem (DATA_DIR/blobs, default), postgres (DATABASE_URL, or BLOB_DATABASE_URL) or s3',
  ],
  ['BLOB_DATABASE_URL', 'postgres://… for BLOB_STORE=postgres when it is not DATABASE_URL'],
  ['S3_ENDPOINT', 'S3-compatible endpoint for BLOB_STORE=s3 (default AWS for S3_REGION)'],
  ['S3_BUCKET', 'bucket for BLOB_STORE=s3'],
  ['S3_REGION', 'region for BLOB_STORE=s3 (default us-east-1)'],
  ['S3_ACCESS_KEY_ID', 'access key for BLOB_STORE=s3'],
  ['S3_SECRET_ACCESS_KEY', 'secret key for BLOB_STORE=s3'],
  ['S3_FORCE_PATH_STYLE', 'true for stores that want bucket-in-path addresses (MinIO, s3rver)'],
  ['SMTP_URL', 'smtp://user:pass@host:port for outgoing mail (default: files in DATA_DIR/outbox)'],
  ['MAIL_FROM', 'sender address for outgoing mail (default Kiln <no-reply@ROOT_DOMAIN>)'],
  ['STRIPE_SECRET_KEY', 'Stripe API key (payments are optional)'],
  ['STRIPE_WEBHOOK_SECRET', 'secret that signs Stripe webhooks'],
  ['STRIPE_PRICE_PERSONAL', 'Stripe price id of the Personal plan (Checkout)'],
  ['STRIPE_PRICE_MAKER', 'Stripe price id of the Maker plan (Checkout)'],
  ['STRIPE_API_URL', 'another Stripe API address (a stand-in such as stripe-mock; default Stripe itself)'],
  ['CURRENCY', "the plans' prices' currency, an ISO 4217 code such as EUR (default USD)"],
  ['DOMAIN_WEBHOOK_SECRET', 'shared secret for the custom-domain provider webhook HMAC'],
  ['TRUST_PROXY', 'true when behind a reverse proxy that sets X-Forwarded-* (default false)'],
  ['BACKUP_DIR', 'where scheduled backups go: a folder, or s3://bucket/prefix (with the S3_ variables)'],
  ['BACKUP_EVERY', 'how often to back up to BACKUP_DIR while serving, e.g. 24h, 6h or 30m (default: never)'],
  ['BACKUP_KEEP', 'how many scheduled backups to keep in a folder (default 7)'],
  ['LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent (default info: one line per request)'],
  ['METRICS_TOKEN', 'bearer token for GET /_/metrics (without it, only this machine may read the metrics)'],
  [
    'MAX_STREAMS_PER_ADDRESS',
    `live streams one client address may hold open in one process; more answer 429 (default ${limits.streamsPerAddress})`,
  ],
  [
    'MAX_REQUESTS_PER_ADDRESS',
    `requests one client address may have in flight in one process (live streams not included); more answer 429 (default ${limits.requestsPerAddress})`,
  ],
  [
    'MAX_CONNECTIONS_PER_ADDRESS',
    `open TCP connections one socket address may hold in one process; more are answered 429 and closed (default ${limits.connectionsPerAddress}; none with TRUST_PROXY, where every connection is the proxy's)`,
  ],
  [
    'FIRST_BYTE_TIMEOUT_MS',
    `time a new connection has to send its first byte, else it is closed (default ${limits.serverTimeouts.firstByteMs}; at most HEADERS_TIMEOUT_MS)`,
  ],
  ['HEADERS_TIMEOUT_MS', `time a client has to send a request's headers (default ${limits.serverTimeouts.headersMs})`],
  [
    'REQUEST_TIMEOUT_MS',
    `time a client has to send a whole request, body included (default ${limits.serverTimeouts.requestMs}); never cuts answers such as live streams`,
  ],
  [
    'ANON_BODY_TIMEOUT_MS',
    `time a request without credentials (no session, sync key or share token) has to send its body; then 408 (default ${limits.serverTimeouts.anonBodyMs})`,
  ],
  [
    'MCP_CALLS_PER_MINUTE',
    `calls one agent credential may make to /_/mcp a minute; more answer 429 (default ${limits.mcpCalls.max})`,
  ],
  ...AI_EDIT_ENV_HELP,
];

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  ROOT_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+(:\d{1,5})?$/, 'must be a lowercase host name with an optional :port')
    .optional(),
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
  BLOB_STORE: z.enum(['filesystem', 'postgres', 's3']).default('filesystem'),
  BLOB_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres://')
    .optional(),
  S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(false),
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
  CURRENCY: z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 code such as USD or EUR')
    .transform((v) => v.toUpperCase())
    .default('USD'),
  DOMAIN_WEBHOOK_SECRET: z.string().optional(),
  TRUST_PROXY: bool.default(false),
  BACKUP_DIR: z.string().min(1).optional(),
  BACKUP_EVERY: z
    .string()
    .regex(/^\d+(s|m|h|d)$/, 'must be a number and a unit: s, m, h or d (e.g. 24h)')
    .optional(),
  BACKUP_KEEP: z.coerce.number().int().min(1).max(1000).default(7),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAX_STREAMS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000_000).default(limits.streamsPerAddress),
  MAX_REQUESTS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000_000).default(limits.requestsPerAddress),
  MCP_CALLS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(limits.mcpCalls.max),
  MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000_000).optional(),
  FIRST_BYTE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(limits.serverTimeouts.firstByteMs),
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(limits.serverTimeouts.headersMs),
  REQUEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(24 * 3_600_000)
    .default(limits.serverTimeouts.requestMs),
  ANON_BODY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(24 * 3_600_000)
    .default(limits.serverTimeouts.anonBodyMs),
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
  /** Where upload bytes live (src/blobs/). */
  blobs: BlobConfig;
  smtpUrl?: string;
  mailFrom: string;
  stripeSecretKey?: string;
  stripeWebhookSecret?: string;
  stripePrices: { personal?: string; maker?: string };
  stripeApiUrl?: string;
  /** The plans' prices' currency (ISO 4217), as the billing page shows them. */
  currency: string;
  domainWebhookSecret?: string;
  trustProxy: boolean;
  logLevel: string;
  metricsToken?: string;
  /** Scheduled backups (src/backup/): where, how often (ms), how many kept; null when off. */
  backups: { dir: string; everyMs: number; keep: number } | null;
  /** Event streams one client address may hold open in this process. */
  maxStreamsPerAddress: number;
  /** Requests one client address may have in flight in this process (streams excluded). */
  maxRequestsPerAddress: number;
  /** MCP calls one credential may make a minute (src/agents/gate.ts). */
  mcpCallsPerMinute: number;
  /** Open TCP connections one socket address may hold in this process; null: no cap (behind a proxy). */
  maxConnectionsPerAddress: number | null;
  /** Time a new connection has to send its first byte (ms). */
  firstByteTimeoutMs: number;
  /** Time to receive a request's headers, and a whole request (ms). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Time a request without credentials has to send its body (ms). */
  anonBodyTimeoutMs: number;
  /** AI editing's engines (src/ai-edit); null when none is set. */
  aiEdit: AiEditConfig | null;
}

export type BlobConfig =
  | { store: 'filesystem' }
  | { store: 'postgres'; databaseUrl: string }
  | {
      store: 's3';
      endpoint?: string;
      bucket: string;
      region: string;
      accessKeyId?: string;
      secretAccessKey?: string;
      forcePathStyle: boolean;
    };

export class ConfigError extends Error {}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

function backupConfig(c: z.infer<typeof schema>): Config['backups'] {
  if (!c.BACKUP_EVERY) return null;
  if (!c.BACKUP_DIR) throw new ConfigError('BACKUP_EVERY needs BACKUP_DIR (a folder or s3://bucket/prefix).');
  const unit = c.BACKUP_EVERY.slice(-1) as keyof typeof UNIT_MS;
  const everyMs = Number(c.BACKUP_EVERY.slice(0, -1)) * UNIT_MS[unit];
  if (everyMs < 5_000) throw new ConfigError('BACKUP_EVERY is at least 5s.');
  return { dir: c.BACKUP_DIR, everyMs, keep: c.BACKUP_KEEP };
}

function blobConfig(c: z.infer<typeof schema>): BlobConfig {
  if (c.BLOB_STORE === 'postgres') {
    const databaseUrl = c.BLOB_DATABASE_URL ?? c.DATABASE_URL;
    if (!databaseUrl) throw new ConfigError('BLOB_STORE=postgres needs DATABASE_URL or BLOB_DATABASE_URL.');
    return { store: 'postgres', databaseUrl };
  }
  if (c.BLOB_STORE === 's3') {
    if (!c.S3_BUCKET) throw new ConfigError('BLOB_STORE=s3 needs S3_BUCKET.');
    return {
      store: 's3',
      endpoint: c.S3_ENDPOINT,
      bucket: c.S3_BUCKET,
      region: c.S3_REGION,
      accessKeyId: c.S3_ACCESS_KEY_ID,
      secretAccessKey: c.S3_SECRET_ACCESS_KEY,
      forcePathStyle: c.S3_FORCE_PATH_STYLE,
    };
  }
  return { store: 'filesystem' };
}

/** On a machine of one's own, the main app is where Kiln listens: `kiln.localhost:<PORT>` (any port: 8080 when
 *  PORT is 0, a port chosen at start). */
function defaultRootDomain(port: number): string {
  return `kiln.localhost:${port === 0 ? 8080 : port}`;
}

/** A warning for the start line when the addresses Kiln names are not where a browser on this machine reaches it:
 *  a `*.localhost` ROOT_DOMAIN on another port than PORT (the owner's edit mode needs the right host), or null. */
export function addressWarning(config: Config, listeningPort: number): string | null {
  if (!/(^|\.)localhost$/.test(config.rootHostname)) return null;
  const named = Number(/:(\d+)$/.exec(config.rootDomain)?.[1] ?? 80);
  if (named === listeningPort) return null;
  return `ROOT_DOMAIN is ${config.rootDomain} but Kiln listens on port ${listeningPort}: links and sign-in will point at port ${named}. Unset ROOT_DOMAIN (it follows PORT) or set it to kiln.localhost:${listeningPort}.`;
}

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
  const c = { ...parsed.data, ROOT_DOMAIN: parsed.data.ROOT_DOMAIN ?? defaultRootDomain(parsed.data.PORT) };
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
    blobs: blobConfig(c),
    smtpUrl: c.SMTP_URL,
    mailFrom: c.MAIL_FROM ?? `Kiln <no-reply@${c.ROOT_DOMAIN.replace(/:\d+$/, '')}>`,
    stripeSecretKey: c.STRIPE_SECRET_KEY,
    stripeWebhookSecret: c.STRIPE_WEBHOOK_SECRET,
    stripePrices: { personal: c.STRIPE_PRICE_PERSONAL, maker: c.STRIPE_PRICE_MAKER },
    stripeApiUrl: c.STRIPE_API_URL,
    currency: c.CURRENCY,
    domainWebhookSecret: c.DOMAIN_WEBHOOK_SECRET,
    trustProxy: c.TRUST_PROXY,
    logLevel: c.LOG_LEVEL,
    metricsToken: c.METRICS_TOKEN,
    backups: backupConfig(c),
    maxStreamsPerAddress: c.MAX_STREAMS_PER_ADDRESS,
    maxRequestsPerAddress: c.MAX_REQUESTS_PER_ADDRESS,
    mcpCallsPerMinute: c.MCP_CALLS_PER_MINUTE,
    // Behind a proxy every connection comes from the proxy: it bounds its visitors' connections itself.
    maxConnectionsPerAddress: c.MAX_CONNECTIONS_PER_ADDRESS ?? (c.TRUST_PROXY ? null : limits.connectionsPerAddress),
    // Node's headers deadline runs from the connection's start too: it bounds the first byte as well.
    firstByteTimeoutMs: Math.min(c.FIRST_BYTE_TIMEOUT_MS, c.HEADERS_TIMEOUT_MS),
    headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
    // Node requires the request timeout to be at least the headers timeout.
    requestTimeoutMs: Math.max(c.REQUEST_TIMEOUT_MS, c.HEADERS_TIMEOUT_MS),
    anonBodyTimeoutMs: c.ANON_BODY_TIMEOUT_MS,
    aiEdit: aiEditFrom(env),
  };
}

function aiEditFrom(env: NodeJS.ProcessEnv): AiEditConfig | null {
  try {
    // Kiln's own settings (its database, webhook secrets, keys) never go to an engine.
    return aiEditConfig(
      env,
      ENV_HELP.map(([k]) => k),
    );
  } catch (err) {
    if (err instanceof AiEditConfigError) throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }
}
