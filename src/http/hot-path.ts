// The hot path: answers served from memory before Fastify sees the request (src/http/app.ts puts it in
// front of the framework's handler), for two kinds of request:
// - a public document asked for by a visitor who carries none of Kiln's cookies (no session, share
//   grant, sign-in hint or edit flag);
// - the public data API's cached answers (`/_/api/…`, `?data=`), which depend on no cookie at all.
//
// It never decides anything itself. An answer is kept only after the route made it, for a request of
// exactly this kind (GET, no If-None-Match; documents: no query and no cookies), with the headers that
// route sent; the hot path replays it for the same host and URL, as the route would answer: the same
// 200 (HEAD: without the body), a 304 for a matching If-None-Match, for a document no Set-Cookie to a
// visitor whose only cookie already names it (`currentResource`), for data `X-Cache: HIT` with its
// `Age` and never past the data cache's own expiry. A document loaded in a frame by another origin, anything
// else, and every miss go to Fastify unchanged. (A document that forbids framing keeps its
// `frame-ancestors 'self'` here too: it is one of the route's headers.)
//
// Answers are dropped when any change event of their account's channel arrives, from this process or
// any other through the bus (a save, rename, move, delete, visibility change) — in the process that
// made the change at once, before it publishes (src/events/publish.ts) — and after ANSWER_TTL_MS
// whatever happens. An answer is kept only when the account's subscription was live before the route
// read storage and no event came in between (the generation), so an answer made from what an event
// already changed is never kept. Hosts are looked up in the host cache on every request (a
// suspended account or a removed domain stops being served as it does for the route).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { channels, type EventBus } from '../events/bus.ts';
import { Lru } from '../core/lru.ts';
import { limits } from '../limits.ts';
import { ifNoneMatchHits } from '../core/conditional.ts';
import { RESOURCE_COOKIE } from './cookies.ts';
import type { HostInfo } from './context.ts';
import { ROOT_DOCUMENT, resourceNameOf } from '../nodes/serve.ts';
import { hostnameOf, hostnameOfHeader } from './hosts.ts';
import { nodeUrlPath } from '../core/urls.ts';
import { framedByAnotherOrigin } from './framing.ts';

/** The longest an answer is kept, events or not (a safety net for an event lost with its bus). */
export const ANSWER_TTL_MS = 60_000;
/** Accounts watched at once (one bus subscription each); the oldest watch goes first. */
const MAX_WATCHES = 10_000;

type Answer = DocumentAnswer | DataAnswer;

interface DocumentAnswer {
  kind: 'document';
  accountId: number;
  /** The 200's headers as the route sent them (lowercase names), Set-Cookie included. */
  headers: OutgoingHttpHeaders;
  /** The same without Set-Cookie, for a visitor whose cookie already names the document. */
  headersKnown: OutgoingHttpHeaders;
  /** The 304's headers: the 200's without the content type. */
  notModified: OutgoingHttpHeaders;
  notModifiedKnown: OutgoingHttpHeaders;
  body: Buffer;
  checksum: string;
  /** The whole Cookie header of a visitor who already has `currentResource` for this document. */
  knownCookie: string;
}

interface DataAnswer {
  kind: 'data';
  accountId: number;
  /** The 200's headers but X-Cache and Age (set per answer). */
  headers: OutgoingHttpHeaders;
  notModified: OutgoingHttpHeaders;
  body: Buffer;
  /** The quoted ETag. */
  etag: string;
  /** When the data cache made the answer, and when it expires there (the Services clock, ms). */
  createdAt: number;
  expiresAt: number;
}

/** Keys an account's watch remembers (answers the LRU already let go are pruned past this). */
const MAX_KEYS_PER_ACCOUNT = 10_000;

interface Watch {
  generation: number;
  live: boolean;
  keys: Set<string>;
  off: () => void;
}

/** What the route may keep its answer under: handed out before it reads storage. */
export interface Ticket {
  key: string;
  accountId: number;
  generation: number;
}

/** What a hot answer reports, for the request metrics and the log line. */
export interface HotServed {
  method: string;
  host: string | undefined;
  url: string;
  status: number;
  ms: number;
}

export class HotDocuments {
  private answers = new Lru<Answer>({
    maxEntries: limits.memory.hot.entries,
    maxBytes: limits.memory.hot.bytes,
    sizeOf: (a) => a.body.length,
    ttlMs: ANSWER_TTL_MS,
  });
  private watches = new Map<number, Watch>();

  private readonly bus: EventBus;
  private readonly hosts: Lru<HostInfo>;
  /** The Services clock (ms): data answers expire on it, as in the data cache. */
  private readonly now: () => number;
  /** What a host serves changed (a suspension, a disabled app user, a rename): its answers go too. */
  private readonly hostsOff: () => void;
  /** Bytes of the answers kept (for the metrics). */
  get heldBytes(): number {
    return this.answers.heldBytes;
  }

  constructor(bus: EventBus, hosts: Lru<HostInfo>, now: () => number = Date.now) {
    this.bus = bus;
    this.hosts = hosts;
    this.now = now;
    this.hostsOff = bus.watch(channels.hosts, (e) => e.type === 'host-changed' && this.forget(e.accountId));
  }

  /** Answers the request from memory when it can (true); false leaves it to Fastify. */
  answer(req: IncomingMessage, res: ServerResponse, served?: (s: HotServed) => void): boolean {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    const name = hostnameOfHeader(req.headers.host);
    const site = this.hosts.get(name);
    if (!site || site.kind === 'main' || site.suspended) return false;
    const a = this.answers.get(`${name} ${url}`);
    if (!a || a.accountId !== site.accountId) return false;
    const t0 = served ? performance.now() : 0;
    const status = a.kind === 'document' ? this.sendDocument(req, res, a) : this.sendData(req, res, a);
    if (status === 0) return false;
    served?.({ method, host: req.headers.host, url, status, ms: performance.now() - t0 });
    return true;
  }

  private sendDocument(req: IncomingMessage, res: ServerResponse, a: DocumentAnswer): number {
    // A neighbour's frame is answered by the route (no-store, never a 304: src/http/framing.ts).
    if (framedByAnotherOrigin(req.headers)) return 0;
    const cookie = req.headers.cookie;
    if (cookie !== undefined && cookie !== a.knownCookie) return 0;
    const known = cookie !== undefined;
    if (ifNoneMatchHits(req.headers['if-none-match'], a.checksum)) {
      res.writeHead(304, known ? a.notModifiedKnown : a.notModified);
      res.end();
      return 304;
    }
    res.writeHead(200, known ? a.headersKnown : a.headers);
    if (req.method === 'HEAD') res.end();
    else res.end(a.body);
    return 200;
  }

  private sendData(req: IncomingMessage, res: ServerResponse, a: DataAnswer): number {
    const now = this.now();
    if (now >= a.expiresAt) return 0;
    if (ifNoneMatchHits(req.headers['if-none-match'], a.etag.slice(1, -1))) {
      res.writeHead(304, a.notModified);
      res.end();
      return 304;
    }
    res.writeHead(200, {
      ...a.headers,
      'x-cache': 'HIT',
      age: String(Math.max(0, Math.floor((now - a.createdAt) / 1000))),
    });
    if (req.method === 'HEAD') res.end();
    else res.end(a.body);
    return 200;
  }

  /** Called by a route before it reads storage: a ticket when its answer to this request may be kept
   *  (else null; the account's watch starts, so a later request may). Documents: only for a request
   *  without cookies; data answers (`cookies: 'any'`) depend on none. */
  ticket(req: FastifyRequest, accountId: number, opts: { cookies?: 'none' | 'any' } = {}): Ticket | null {
    if (req.method !== 'GET' || req.headers['if-none-match'] !== undefined) return null;
    if (opts.cookies !== 'any' && (req.url.includes('?') || req.headers.cookie !== undefined)) return null;
    const w = this.watch(accountId);
    if (!w.live) return null;
    return { key: `${hostnameOf(req)} ${req.url}`, accountId, generation: w.generation };
  }

  /** Keeps a data API 200 for a ticket (headers as the route sent them, but X-Cache and Age). */
  keepData(
    ticket: Ticket,
    headers: OutgoingHttpHeaders,
    body: Buffer,
    etag: string,
    createdAt: number,
    expiresAt: number,
  ) {
    const notModified: OutgoingHttpHeaders = { ...headers };
    delete notModified['content-type'];
    this.store(ticket, {
      kind: 'data',
      accountId: ticket.accountId,
      headers: { ...headers, 'content-length': String(body.length) },
      notModified,
      body,
      etag,
      createdAt,
      expiresAt,
    });
  }

  /** Keeps the route's 200 for a ticket, when no event of the account came since it was handed out
   *  and the URL is the document's own address (one answer per document, never one per route path
   *  below it). */
  keep(
    ticket: Ticket,
    node: { name: string; path: string },
    url: string,
    headers: OutgoingHttpHeaders,
    body: Buffer,
    checksum: string,
  ) {
    if (url !== nodeUrlPath(node) && !(url === '/' && node.path === '' && node.name === ROOT_DOCUMENT)) return;
    const full = { ...headers, 'content-length': String(body.length) };
    const headersKnown = { ...full };
    delete headersKnown['set-cookie'];
    const notModified = { ...headers };
    delete notModified['content-type'];
    delete notModified['content-length'];
    const notModifiedKnown = { ...notModified };
    delete notModifiedKnown['set-cookie'];
    this.store(ticket, {
      kind: 'document',
      accountId: ticket.accountId,
      headers: full,
      headersKnown,
      notModified,
      notModifiedKnown,
      body,
      checksum,
      knownCookie: `${RESOURCE_COOKIE}=${encodeURIComponent(resourceNameOf(node))}`,
    });
  }

  /** Keeps an answer when no event of its account came since the ticket was handed out. */
  private store(ticket: Ticket, answer: Answer) {
    const w = this.watches.get(ticket.accountId);
    if (!w || w.generation !== ticket.generation) return;
    if (w.keys.size >= MAX_KEYS_PER_ACCOUNT) {
      for (const k of w.keys) if (this.answers.stale(k) === undefined) w.keys.delete(k);
      if (w.keys.size >= MAX_KEYS_PER_ACCOUNT) return;
    }
    this.answers.set(ticket.key, answer);
    w.keys.add(ticket.key);
  }

  /** Forgets every kept answer of an account (also what the account's events do). */
  forget(accountId: number) {
    const w = this.watches.get(accountId);
    if (!w) return;
    w.generation++;
    for (const k of w.keys) this.answers.delete(k);
    w.keys.clear();
  }

  close() {
    this.hostsOff();
    for (const w of this.watches.values()) w.off();
    this.watches.clear();
  }

  private watch(accountId: number): Watch {
    let w = this.watches.get(accountId);
    if (w) return w;
    if (this.watches.size >= MAX_WATCHES) {
      const [oldest, ow] = this.watches.entries().next().value as [number, Watch];
      this.forget(oldest);
      ow.off();
      this.watches.delete(oldest);
    }
    const channel = channels.account(accountId);
    const created: Watch = {
      generation: 0,
      live: false,
      keys: new Set(),
      // An editor's live snapshot relayed to sync tools changes nothing stored: it keeps what is kept.
      off: this.bus.watch(channel, (event) => event.type !== 'live-sync' && this.forget(accountId)),
    };
    this.watches.set(accountId, (w = created));
    this.bus.subscribed(channel).then(
      () => {
        created.live = this.watches.get(accountId) === created;
      },
      () => {
        // No subscription (the bus is away): nothing is kept for the account; a later request tries again.
        if (this.watches.get(accountId) !== created) return;
        created.off();
        this.watches.delete(accountId);
      },
    );
    return w;
  }
}
