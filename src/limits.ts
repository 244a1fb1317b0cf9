// Every limit of the service, named as the spec names it. Nothing else hard-codes these numbers.
import type { Plan } from './store/schema.ts';

const MB = 1024 * 1024;
export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/** An allowance that grows with months active: min(cap, base + perMonth × whole months active). */
export interface Growth {
  base: number;
  perMonth: number;
  cap: number;
}

/** The numbers of each plan tier (the rules that use them: src/billing/plans.ts).
 *  Prices are in currency units (monthly / annual); a Stripe checkout for one of these amounts
 *  buys that tier when its metadata does not name the plan. */
export const planLimits = {
  free: {
    sites: 10,
    uploadSize: 10 * MB,
    price: null,
    subdomains: { base: 1, perMonth: 0, cap: 1 },
    customDomains: { base: 0, perMonth: 0, cap: 0 },
    apps: { base: 1, perMonth: 0, cap: 1 },
  },
  personal: {
    sites: 2000,
    uploadSize: 20 * MB,
    price: { monthly: 6, annual: 48 },
    subdomains: { base: 1, perMonth: 1, cap: 5 },
    customDomains: { base: 1, perMonth: 1, cap: 3 },
    apps: { base: 2, perMonth: 1, cap: 10 },
  },
  maker: {
    sites: 2000,
    uploadSize: 100 * MB,
    price: { monthly: 15, annual: 120 },
    subdomains: { base: 3, perMonth: 1, cap: 20 },
    customDomains: { base: 2, perMonth: 1, cap: 10 },
    apps: { base: 5, perMonth: 1, cap: 50 },
  },
} as const satisfies Record<
  Plan,
  {
    sites: number;
    uploadSize: number;
    price: { monthly: number; annual: number } | null;
    subdomains: Growth;
    customDomains: Growth;
    apps: Growth;
  }
>;

export const limits = {
  /** PUT /_/sync/nodes/<id>/content and every document save. */
  documentSize: 5 * MB,
  body: {
    json: 5 * MB,
    jsonSyncAndUpload: 150 * MB,
    jsonCollection: 1 * MB,
    jsonLiveSync: 10 * MB,
    text: 5 * MB,
    form: 2 * MB,
  },
  uploadSize: {
    free: planLimits.free.uploadSize,
    personal: planLimits.personal.uploadSize,
    maker: planLimits.maker.uploadSize,
  } satisfies Record<Plan, number>,
  /** Sites per account. Paid plans are configured at 2000 and reported as unlimited. */
  sites: {
    free: planLimits.free.sites,
    personal: planLimits.personal.sites,
    maker: planLimits.maker.sites,
  } satisfies Record<Plan, number>,
  /** Account import (src/accounts/export.ts). A zip is checked from its central directory before one
   *  byte is unpacked: each entry against its own limit (a document's size, the plan's per-file size) and
   *  all of them together against `totalBytes`; each is counted as it unpacks and stopped past what it
   *  declared. No compression ratio is refused: the declared sizes bound the work, and Kiln's own exports
   *  hold files that compress 1000:1 (sparse images, empty database files). */
  zipImport: {
    entries: 10_000,
    /** What all entries may unpack to together, as declared (versions included). */
    totalBytes: 512 * MB,
    /** `.kiln/manifest.json` (about 200 bytes a node; 10 000 nodes stay under 2 MB). */
    manifestBytes: 5 * MB,
  },
  /** How deep a JSON body (or a record file read back) may nest arrays and objects: far more than any
   *  form, record or sync body needs, far less than what recursion on the stack survives. */
  jsonDepth: 64,
  folderDepth: 5,
  nameLength: 255,
  pathLength: 1024,
  syncKeyLifetimeMs: 365 * DAY,
  /** Agent keys (src/agents/keys.ts): the lifetimes one may choose on the account page (days; the first
   *  listed is not the default: `defaultDays` is), how many active keys one person may hold, a name's length. */
  agentKeys: { lifetimesDays: [7, 30, 90, 365] as const, defaultDays: 90, perPerson: 50, nameLength: 60 },
  /** Calls to the MCP door (`/_/mcp`) per credential (a sync key, an agent key, an OAuth token) a minute
   *  (src/agents/gate.ts): every process counts into the same window when REDIS_URL is set. */
  mcpCalls: { max: 120, windowMs: MINUTE },
  loginTokenLifetimeMs: 30 * DAY,
  /** OAuth (src/oauth/): an access token lasts an hour, a refresh token 30 days from its last use (rotated each
   *  time), a grant a year; a code a minute, the consent step an hour. A registered client is forgotten a day
   *  after its registration when it never completed an authorization, and when none of its grants holds a token
   *  or was used for 30 days (the hourly sweep). */
  oauth: {
    accessTokenSeconds: 3600,
    refreshTokenSeconds: 30 * 24 * 3600,
    grantSeconds: 365 * 24 * 3600,
    codeSeconds: 60,
    interactionSeconds: 3600,
    unauthorizedClientMs: DAY,
    idleClientMs: 30 * DAY,
  },
  /** A grant that carries a login to one document host: single use, this long. */
  sessionGrantMs: MINUTE,
  loginAttempts: { max: 20, windowMs: 15 * MINUTE },
  /** Account pages and anonymous `/_/` writes, per client address (src/ratelimit/http.ts says which routes). */
  generalLimiter: { max: 100, windowMs: 15 * MINUTE },
  /** Signup, password reset, sync-key generation, agent-key making, share-token regeneration. */
  strictLimiter: { max: 5, windowMs: 60 * MINUTE },
  domainCalls: { max: 10, windowMs: MINUTE },
  dataCacheMs: 5 * MINUTE,
  liveKeepAliveMs: 30_000,
  /** Event streams (live sync, sync stream) one client address may hold open in one process
   *  (default of MAX_STREAMS_PER_ADDRESS). */
  streamsPerAddress: 100,
  /** Requests one client address may have in flight in one process (default of
   *  MAX_REQUESTS_PER_ADDRESS; open event streams count against `streamsPerAddress` instead). */
  requestsPerAddress: 64,
  /** Open TCP connections one socket address may hold in one process (default of
   *  MAX_CONNECTIONS_PER_ADDRESS): the streams and requests above, and idle keep-alive connections beside
   *  them (a browser opens at most 6 per host and 256 in all). Off behind a proxy unless set (every
   *  connection is the proxy's). */
  connectionsPerAddress: 256,
  /** Node HTTP server timeouts (defaults; HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS override them):
   *  a request's headers must arrive within `headersMs`, its whole body within `requestMs` (a 150 MB
   *  upload on a slow link). They bound receiving requests only, never answers: an SSE stream stays
   *  open. An idle keep-alive connection closes after `keepAliveMs` (longer than common proxies' 60 s).
   *  A request without credentials has `anonBodyMs` for its body (ANON_BODY_TIMEOUT_MS): sign-in forms
   *  and messages are small, and nobody's upload needs it. A new connection must send its first byte
   *  within `firstByteMs` (FIRST_BYTE_TIMEOUT_MS), else it is closed: browsers pre-open connections and use
   *  them within seconds (Chrome drops an unused one after 10 s; nginx waits 60 s for headers). */
  serverTimeouts: {
    headersMs: 30_000,
    requestMs: 10 * MINUTE,
    keepAliveMs: 72_000,
    anonBodyMs: 30_000,
    firstByteMs: 20_000,
  },
  /** What anonymous submitters may store in one collection: each owner may set its own, from 1 up to `max`
   *  (src/collections/collections.ts). Refused before anything is stored: 413 past records or bytes, 429
   *  past one address's submissions in an hour. */
  collection: {
    records: { default: 10_000, max: 100_000 },
    bytes: { default: 50 * MB, max: 1024 * MB },
    perAddressHour: { default: 30, max: 10_000 },
    /** A submitter's changes to its own record (PUT with its edit token), an hour: per record token, and
     *  per address in one collection. Every change also counts against the byte cap, as do the bytes it
     *  replaced until the blob sweep may free them (`replacedKeptMs`). The owner's changes are not counted. */
    rewrites: { perRecordHour: 10, perAddressHour: 30, windowMs: 60 * MINUTE },
    /** How long replaced record bytes count against their collection's byte cap: the blob sweep's grace
     *  (src/blobs/sweep.ts) and the hour until its next run. */
    replacedKeptMs: DAY + 60 * MINUTE,
  },
  password: { minLength: 8, maxLength: 1024, commonListSize: 100_000 },
  usernameLength: { min: 2, max: 40 },
  emailLength: 254,
  shareCookieMaxAgeMs: 365 * DAY,
  /** A document host's message bus (/_/bus, src/bus). One message as large as the desktop app takes; each
   *  account may hold `subscribersPerOwner` open subscriptions in one process, each on up to `channels`
   *  channels, and send `sends` messages per `windowMs` (every process counts into the same window). */
  bus: { messageBytes: 10 * MB, subscribersPerOwner: 32, channels: 16, sends: 3000, windowMs: MINUTE },
  /** AI editing (src/ai-edit). What goes to an engine is bounded: the element (or page) and each context
   *  reference; the whole prompt. Requests run at most `perOwner` at once per account (and AI_EDIT_CONCURRENCY
   *  per process), each at most AI_EDIT_TIMEOUT_MS. A built-in engine waits `agentGraceMs` before it takes a
   *  request, so an agent the owner runs themselves (`kiln ai-edit serve`) answers first. Deltas go out at
   *  most every `deltaMs`. `budget`: what one account may send to the built-in engines per UTC day, by plan,
   *  until an administrator sets it (/_/admin); a budget is at most `maxBudget`. */
  aiEdit: {
    promptBytes: 2 * MB,
    refBytes: 256 * 1024,
    refs: 8,
    perOwner: 2,
    concurrency: 4,
    timeoutMs: 2 * MINUTE,
    agentGraceMs: 1000,
    /** A stopping process waits at most this for its AI edits to end (aborted, their pages told). */
    closeWaitMs: 3000,
    deltaMs: 50,
    replyBytes: 5 * MB,
    budget: {
      free: { requests: 30, bytes: 4 * MB },
      personal: { requests: 200, bytes: 40 * MB },
      maker: { requests: 1000, bytes: 200 * MB },
    },
    maxBudget: { requests: 1_000_000, bytes: 1024 * MB },
  },
  /** PostgreSQL: how long to wait for a connection, and for one query, before answering 503. */
  database: { connectMs: 5_000, queryMs: 30_000 },
  /** What one process keeps in memory, cache by cache (docs/capacity.md says what fills them). Each is an LRU
   *  bounded in bytes (an entry over an eighth of its cache's bytes is not kept) and in entries; the metric
   *  kiln_cache_bytes{cache} says how full each is. */
  memory: {
    /** Cookie-less visitors' answers, served before the framework (src/http/hot-path.ts): whole public
     *  documents and `?data=` answers, for ANSWER_TTL_MS. */
    hot: { bytes: 256 * MB, entries: 10_000 },
    /** Stored bytes of documents read or saved lately, by node id (src/core/document-cache.ts `content`). */
    documents: { bytes: 64 * MB, entries: 100_000 },
    /** The text of each document's last save in this process, for the next save's diff (`texts`; counted in
     *  characters, as V8 keeps ASCII text one byte a character). */
    savedTexts: { bytes: 32 * MB, entries: 1_000 },
    /** `?data=` and `/_/api` answers (src/data/cache.ts); with Redis, the copy kept in this process. */
    dataAnswers: { bytes: 64 * MB, nearBytes: 16 * MB },
    /** Document hosts and custom domains found lately (src/http/services.ts), for HOST_CACHE_MS. */
    hosts: { entries: 10_000 },
    /** Events kept for streams that reconnect (in-process bus, src/events/bus.ts `replayLog`: 32 a channel, for
     *  5 minutes, all channels together): a save's saved-lane event carries the whole document. */
    replayLog: 64 * MB,
    /** SQLite's page cache, per connection (a writer and a reader): its own default, set here. */
    sqlitePageCache: 16 * MB,
  },
  /** Log lines waiting to be written to stdout (src/log.ts): past this, while the reader does not keep up,
   *  lines are dropped and counted. About 13 000 ordinary request lines, or 500 with 8 KB URLs. */
  logBufferBytes: 4 * MB,
  /** Retry-After of a 503 while storage is unreachable, seconds. */
  storageRetryAfterSeconds: 2,
  /** Retry-After of a 503 `bus-unavailable` while Redis is unreachable, seconds (the bus looks for it every second). */
  redisRetryAfterSeconds: 2,
  /** While Redis is connected, an answer that follows an event (a live message's `seq`, a control envelope, a host
   *  change: src/events/publish.ts) waits at most this for it — beyond the bus's 2 s command timeout, by which a
   *  publish is out or has failed into the outbox. While Redis is away it does not wait at all. */
  busAnswerWaitMs: 3_000,
  /** `kiln sync` / `push` / `pull` (src/sync-cli, the client side): retries back off from `backoffMs` to
   *  `backoffMaxMs`; a one-shot run (`--once`, push, pull) gives up after `onceGiveUpMs` without the server;
   *  a watching run reconciles `debounceMs` after the last change it heard, and in full every `fullPassMs`
   *  (a missed event costs at most that); `transfers` files move at once; a request without an answer for
   *  `requestMs` is retried; the stream is reopened when silent for `streamSilenceMs` (Kiln pings well within). */
  syncClient: {
    backoffMs: 200,
    backoffMaxMs: 5_000,
    onceGiveUpMs: 2 * MINUTE,
    debounceMs: 25,
    fullPassMs: MINUTE,
    transfers: 4,
    requestMs: 2 * MINUTE,
    streamSilenceMs: 2 * MINUTE,
  },
} as const;

/** Paid tiers report their site count as unlimited (src/billing/plans.ts `siteLimit` also knows superadmins
 *  and lapsed subscriptions). */
export function isUnlimitedSites(plan: Plan): boolean {
  return planLimits[plan].price !== null;
}
