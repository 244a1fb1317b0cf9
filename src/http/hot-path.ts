// The hot path: answers served from memory before Fastify sees the request (src/http/app.ts puts it in
// front of the framework's handler), for three kinds of request:
// - a public document asked for by a visitor who carries none of Kiln's cookies (no session, share
//   grant, sign-in hint or edit flag);
// - the public data API's cached answers (`/_/api/…`, `?data=`), which depend on no cookie at all;
// - a document asked for by a person signed in on its host (its owner, a member of its team) with exactly
//   the headers of a request the route answered them before (below).
//
// It never decides anything itself. An answer is kept only after the route made it, for a request of
// exactly this kind (GET, no If-None-Match; visitors' documents: no query and no cookies), with the headers that
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
//
// A signed-in person's answer is the route's, replayed for a request whose Cookie header and every other
// header the route reads for it (`PERSONAL_HEADERS`: If-None-Match too, so a 304 is the route's as well) are
// the same bytes: it is kept under a SHA-256 of those, so it holds no token and serves only that browser's
// session. The route keeps one only for a session's caller who is no share guest, no app user (whose email's
// confirmation changes their page without an event) and no fallback, at the document's own address, without
// a query, never for a neighbour's frame (src/documents/view.ts `personsAnswer`). It depends on the document
// (the account's channel, as above), the session (revoked: `grant-revoked` session:<id>; expired: never served
// past its end), the person's account and the host's (suspended, deleted, renamed: `host-changed`), and the
// person's role on a team's host (`grant-revoked` member:<team>:<person> when removed or made a viewer,
// `role-changed` otherwise), each event dropping what it names in every process, in the publishing one at once
// (the bus's `watch`); the writer's answer waits for the event while the bus flows (src/events/revocations.ts,
// publish.ts). An answer is kept only when none of those events came since its request arrived (`drops`), and
// none is kept or served while the bus does not flow (its events could be late): then all are dropped. A change
// made by the `kiln` command line on SQLite (a process with a bus of its own, e.g. a role changed) drops them all
// too: the database says another process committed (`outsideChanges`, asked before serving and before keeping one).
// (Visitors' answers, which no command-line change touches, are not asked.)
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { channels, type EventBus, type KilnEvent } from '../events/bus.ts';
import type { Caller } from '../access/caller.ts';
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

type Answer = DocumentAnswer | DataAnswer | PersonalAnswer;

/** The request headers a signed-in person's answer is kept for (besides host and URL): every one the route reads
 *  for a document, so one with the same values is answered alike. */
const PERSONAL_HEADERS = [
  'cookie',
  'accept',
  'sec-fetch-dest',
  'sec-fetch-site',
  'sec-fetch-mode',
  'upgrade-insecure-requests',
  'if-none-match',
] as const;

/** Names of what a drop of personal answers concerns (events name them; see the header). */
const dropNames = {
  session: (writer: string) => writer,
  account: (accountId: number) => `account:${accountId}`,
  member: (teamId: number, personId: number) => `member:${teamId}:${personId}`,
};
/** Drops remembered for answers still being made; past this many, every answer in the making is refused. */
const MAX_DROPS = 10_000;

interface PersonalAnswer {
  kind: 'person';
  /** The host's account. */
  accountId: number;
  personId: number;
  /** The session's writer name (`session:<id>`). */
  session: string;
  /** The session's end (the Services clock, ms): never served after it. */
  until: number;
  status: number;
  /** As the route sent them (lowercase names), Set-Cookie included; a 200's with its length. */
  headers: OutgoingHttpHeaders;
  /** The body in the route's pieces (the stored bytes and the toolbar's tag, never copied); none for a 304. */
  body: Buffer[];
  bytes: number;
}

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
  /** A signed-in person's answer: who, and when their request arrived (the drops counter then). */
  person?: { id: number; session: string; until: number; arrived: number };
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
    sizeOf: (a) => (a.kind === 'person' ? a.bytes : a.body.length),
    ttlMs: ANSWER_TTL_MS,
  });
  private watches = new Map<number, Watch>();

  /** Personal answers: events that dropped some so far, and the count at each name's last drop. */
  private drops = 0;
  private dropped = new Map<string, number>();
  /** Requests that arrived before this count may not keep an answer (the names above were forgotten). */
  private droppedBelow = 0;
  /** Every personal answer was dropped and none kept since (the bus stopped flowing). */
  private allDropped = true;
  /** The drops counter when each request that may make a personal answer arrived. */
  private arrivals = new WeakMap<IncomingMessage, number>();
  /** The revocations and hosts channels are subscribed to (events on them reach this process). */
  private personalLive = false;
  private personalPending = false;

  private readonly bus: EventBus;
  private readonly hosts: Lru<HostInfo>;
  /** The Services clock (ms): data answers expire on it, as in the data cache. */
  private readonly now: () => number;
  /** What a host serves changed (a suspension, a disabled app user, a rename): its answers go too. */
  private readonly hostsOff: () => void;
  /** Sessions revoked, memberships ended, roles changed: the personal answers they let in go. */
  private readonly revocationsOff: () => void;
  /** Bytes of the answers kept (for the metrics). */
  get heldBytes(): number {
    return this.answers.heldBytes;
  }

  constructor(bus: EventBus, hosts: Lru<HostInfo>, now: () => number = Date.now) {
    this.bus = bus;
    this.hosts = hosts;
    this.now = now;
    this.hostsOff = bus.watch(channels.hosts, (e) => {
      if (e.type !== 'host-changed') return;
      this.forget(e.accountId);
      this.dropPersonal([dropNames.account(e.accountId)]);
    });
    this.revocationsOff = bus.watch(channels.revocations, (e) => this.revoked(e));
  }

  /** Answers the request from memory when it can (true); false leaves it to Fastify. */
  answer(req: IncomingMessage, res: ServerResponse, served?: (s: HotServed) => void): boolean {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url ?? '';
    const name = hostnameOfHeader(req.headers.host);
    const site = this.hosts.get(name);
    if (!site || site.kind === 'main' || site.suspended) return false;
    const t0 = served ? performance.now() : 0;
    const a = this.answers.get(`${name} ${url}`);
    let status = 0;
    if (a && a.accountId === site.accountId)
      status =
        a.kind === 'document' ? this.sendDocument(req, res, a) : a.kind === 'data' ? this.sendData(req, res, a) : 0;
    if (status === 0 && req.headers.cookie !== undefined)
      status = this.sendPersonal(req, res, name, url, site.accountId);
    if (status === 0) return false;
    served?.({ method, host: req.headers.host, url, status, ms: performance.now() - t0 });
    return true;
  }

  /** A signed-in person's kept answer to exactly this request; else 0, and the request's arrival is noted (it
   *  may make one). */
  private sendPersonal(req: IncomingMessage, res: ServerResponse, name: string, url: string, accountId: number) {
    // Only a document's own address is ever kept (no query; `/_/…` is Kiln's).
    if (url.includes('?') || url.startsWith('/_/')) return 0;
    // Events may be late while the bus does not flow, and another process's change (the command line on SQLite)
    // sends none here: nothing is served or kept then.
    if (!this.bus.flowing() || this.changedOutside()) {
      this.dropAllPersonal();
      return 0;
    }
    const a = this.answers.get(personalKey(name, url, req));
    if (a?.kind !== 'person' || a.accountId !== accountId || this.now() >= a.until) {
      this.arrivals.set(req, this.drops);
      return 0;
    }
    res.writeHead(a.status, a.headers);
    const last = a.body.length - 1;
    if (req.method === 'HEAD' || last < 0) res.end();
    else {
      for (let i = 0; i < last; i++) res.write(a.body[i]);
      res.end(a.body[last]);
    }
    return a.status;
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

  /** Called by the route before it reads storage, for a request of a signed-in person: a ticket when the answer to
   *  exactly this request may be kept for their session (a GET without a query, by a session of this host, that
   *  arrived through `answer` while the bus flows), else null. */
  personalTicket(req: FastifyRequest, accountId: number, caller: Caller): Ticket | null {
    const actor = caller.actor;
    if (req.method !== 'GET' || req.url.includes('?') || caller.via !== 'session' || !actor?.sessionEnds) return null;
    if (!actor.writer.startsWith('session:')) return null;
    const arrived = this.arrivals.get(req.raw);
    if (arrived === undefined || !this.bus.flowing() || !this.personalChannelsLive()) return null;
    const w = this.watch(accountId);
    if (!w.live) return null;
    return {
      key: personalKey(hostnameOf(req), req.url, req.raw),
      accountId,
      generation: w.generation,
      person: { id: actor.accountId, session: actor.writer, until: Date.parse(actor.sessionEnds), arrived },
    };
  }

  /** Keeps the route's 200 or 304 for a signed-in person's ticket (see the header): at the document's own address,
   *  when nothing it depends on changed since the request arrived. `body`: the pieces sent, none for a 304. */
  keepPersonal(
    ticket: Ticket,
    node: { name: string; path: string },
    url: string,
    status: number,
    headers: OutgoingHttpHeaders,
    body: Buffer[],
  ) {
    const p = ticket.person;
    if (!p || (status !== 200 && status !== 304) || !isOwnAddress(node, url)) return;
    if (!this.bus.flowing() || this.changedOutside()) return this.dropAllPersonal();
    if (p.arrived < this.droppedBelow) return;
    for (const name of personalNames(ticket.accountId, p.id, p.session))
      if ((this.dropped.get(name) ?? 0) > p.arrived) return;
    const bytes = body.reduce((n, b) => n + b.length, 0);
    this.allDropped = false;
    this.store(ticket, {
      kind: 'person',
      accountId: ticket.accountId,
      personId: p.id,
      session: p.session,
      until: Math.min(p.until, this.now() + ANSWER_TTL_MS),
      status,
      headers: status === 200 ? { ...headers, 'content-length': String(bytes) } : { ...headers },
      body: status === 200 ? body : [],
      bytes,
    });
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
    if (!isOwnAddress(node, url)) return;
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

  /** `grant-revoked` and `role-changed`: the personal answers of those sessions and memberships go. */
  private revoked(e: KilnEvent) {
    if (e.type === 'role-changed') this.dropPersonal([dropNames.member(e.teamId, e.personId)]);
    else if (e.type === 'grant-revoked' && Array.isArray(e.grants))
      // Session and member grants are named as the drops name them.
      this.dropPersonal(e.grants.map(String).filter((g) => g.startsWith('session:') || g.startsWith('member:')));
  }

  /** Drops the personal answers these names concern, and refuses those still being made for them. */
  private dropPersonal(names: string[]) {
    if (names.length === 0) return;
    const n = ++this.drops;
    for (const name of names) this.dropped.set(name, n);
    if (this.dropped.size > MAX_DROPS) {
      this.dropped.clear();
      this.droppedBelow = n;
    }
    const gone = new Set(names);
    this.answers.deleteWhere(
      (_, a) => a.kind === 'person' && personalNames(a.accountId, a.personId, a.session).some((x) => gone.has(x)),
    );
  }

  /** The bus's count of changes made outside it when last asked (`changedOutside`). */
  private outside = 0;
  /** True when a change was made outside the bus since the last call (see the header). */
  private changedOutside(): boolean {
    const now = this.bus.outsideChanges();
    if (now === this.outside) return false;
    this.outside = now;
    return true;
  }

  /** Every personal answer goes, and every one being made is refused (once: until one is kept again). */
  private dropAllPersonal() {
    this.droppedBelow = ++this.drops;
    if (this.allDropped) return;
    this.allDropped = true;
    this.dropped.clear();
    this.answers.deleteWhere((_, a) => a.kind === 'person');
  }

  /** True once this process hears the revocations and hosts channels; the first call subscribes. */
  private personalChannelsLive(): boolean {
    if (this.personalLive || this.personalPending) return this.personalLive;
    this.personalPending = true;
    Promise.all([this.bus.subscribed(channels.revocations), this.bus.subscribed(channels.hosts)]).then(
      () => {
        this.personalPending = false;
        this.personalLive = true;
      },
      () => {
        // Not confirmed (the bus is away): a later request asks again.
        this.personalPending = false;
      },
    );
    return false;
  }

  close() {
    this.hostsOff();
    this.revocationsOff();
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

/** The document's own address (one answer per document, never one per route path below it). */
function isOwnAddress(node: { name: string; path: string }, url: string): boolean {
  return url === nodeUrlPath(node) || (url === '/' && node.path === '' && node.name === ROOT_DOCUMENT);
}

/** What a personal answer's drops name: its session, its host's account and its person's, and the membership. */
function personalNames(accountId: number, personId: number, session: string): string[] {
  return [
    dropNames.session(session),
    dropNames.account(accountId),
    dropNames.account(personId),
    dropNames.member(accountId, personId),
  ];
}

/** The key of a signed-in person's answer: host, URL and a SHA-256 of the headers it is kept for (so the cache
 *  holds no session token). An absent header and an empty one differ. */
function personalKey(name: string, url: string, req: IncomingMessage): string {
  const hash = createHash('sha256');
  for (const h of PERSONAL_HEADERS) {
    const v = req.headers[h];
    hash.update(v === undefined ? '\n-' : `\n+${String(v)}`);
  }
  return `${name} ${url} ${hash.digest('base64url')}`;
}
