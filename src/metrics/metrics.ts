// Prometheus metrics of one process (prom-client), served at GET /_/metrics: requests and their
// latency per route group, saves, PostgreSQL statements (round trips), open streams, event-bus lag, cache hits and misses, blob store
// errors, log lines dropped, and Node's own (event loop, memory, GC). One registry per Services, so that several Kilns
// in one process (the tests) keep their own.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { StatementCounts } from '../store/postgres-pool.ts';
import { logBufferStats } from '../log.ts';

export type CacheName = 'data' | 'document' | 'hot';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'group' | 'method' | 'status'>;
  readonly latency: Histogram<'group'>;
  readonly saves: Counter<'via'>;
  readonly busLag: Histogram;
  readonly cache: Counter<'cache' | 'result'>;
  readonly blobErrors: Counter<'op'>;

  constructor(openStreams: () => number, statements: StatementCounts) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'kiln_' });
    this.requests = new Counter({
      name: 'kiln_http_requests_total',
      help: 'HTTP requests answered, by route group, method and status class',
      labelNames: ['group', 'method', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'kiln_http_request_duration_seconds',
      help: 'Time to answer, by route group',
      labelNames: ['group'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    });
    this.saves = new Counter({
      name: 'kiln_saves_total',
      help: 'Document saves committed, by how they came (browser, sync, create, restore …)',
      labelNames: ['via'],
      registers,
    });
    const sent = { awaited: 0, pipelined: 0 };
    new Counter({
      name: 'kiln_database_statements_total',
      help: 'PostgreSQL statements sent: awaited each took a round trip of its own, pipelined rode the next one (none on SQLite)',
      labelNames: ['sent'],
      registers,
      collect() {
        for (const k of ['awaited', 'pipelined'] as const) {
          this.inc({ sent: k }, statements[k] - sent[k]);
          sent[k] = statements[k];
        }
      },
    });
    new Gauge({
      name: 'kiln_open_streams',
      help: 'Server-sent event streams open in this process',
      registers,
      collect() {
        this.set(openStreams());
      },
    });
    let dropped = 0;
    new Counter({
      name: 'kiln_log_lines_dropped_total',
      help: 'Log lines dropped because stdout was not read fast enough (more than the log buffer waited)',
      registers,
      collect() {
        const now = logBufferStats().dropped;
        this.inc(now - dropped);
        dropped = now;
      },
    });
    new Gauge({
      name: 'kiln_log_buffered_bytes',
      help: 'Log bytes waiting to be written to stdout (bounded: past the bound, lines are dropped)',
      registers,
      collect() {
        this.set(logBufferStats().buffered);
      },
    });
    const holds = this.holds;
    new Gauge({
      name: 'kiln_cache_bytes',
      help: 'Bytes each in-process cache holds (each is bounded: src/limits.ts memory)',
      labelNames: ['cache'],
      registers,
      collect() {
        for (const [cache, held] of holds) this.set({ cache }, held());
      },
    });
    this.busLag = new Histogram({
      name: 'kiln_bus_lag_seconds',
      help: 'From an event’s publication (in any process) to its delivery to this process’s streams',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.cache = new Counter({
      name: 'kiln_cache_lookups_total',
      help: 'Cache lookups by cache and result (hit or miss); the hit rate is hit / (hit + miss)',
      labelNames: ['cache', 'result'],
      registers,
    });
    this.blobErrors = new Counter({
      name: 'kiln_blob_store_errors_total',
      help: 'Blob store operations that failed, by operation',
      labelNames: ['op'],
      registers,
    });
  }

  /** Label children, kept: a request then costs a map lookup, not hashing its labels twice (every
   *  document GET comes here, the hot path's included). */
  private children = new Map<string, { count: Counter.Internal; time: Histogram.Internal<'group'> }>();

  /** One answered request: its count by group, method and status class, and its time by group. */
  answered(group: string, method: string, status: number, seconds: number) {
    const key = `${group} ${method} ${Math.floor(status / 100)}`;
    let c = this.children.get(key);
    if (!c) {
      c = {
        count: this.requests.labels(group, method, `${Math.floor(status / 100)}xx`),
        time: this.latency.labels(group),
      };
      // Groups and status classes are few; methods are the parser's known ones.
      if (this.children.size < 512) this.children.set(key, c);
    }
    c.count.inc();
    c.time.observe(seconds);
  }

  private lookups = new Map<string, Counter.Internal>();

  /** What each cache holds, read at each scrape (kiln_cache_bytes). */
  private readonly holds = new Map<string, () => number>();

  /** Reports `held()` as the bytes `cache` holds. */
  cacheHolds(cache: string, held: () => number): void {
    this.holds.set(cache, held);
  }

  cacheLookup(cache: CacheName, hit: boolean) {
    const key = `${cache} ${hit}`;
    let c = this.lookups.get(key);
    if (!c) this.lookups.set(key, (c = this.cache.labels(cache, hit ? 'hit' : 'miss')));
    c.inc();
  }
}

/** The group a request belongs to, for the request metrics: few values, never a path. */
export function routeGroup(site: string | undefined, route: string | undefined): string {
  if (!route) return 'unmatched';
  if (route.startsWith('/_/save')) return 'save';
  if (route === '/_/sync' || route.startsWith('/_/live-sync')) return 'live';
  if (route.startsWith('/_/sync') || route.startsWith('/_/team/')) return 'sync';
  if (route.startsWith('/_/upload')) return 'upload';
  if (route.startsWith('/_/api') || route.startsWith('/_/data')) return 'data';
  if (route.startsWith('/_/collection')) return 'collections';
  if (route.startsWith('/_/health') || route.startsWith('/_/ready') || route.startsWith('/_/metrics')) return 'ops';
  if (site !== 'main' && !route.startsWith('/_/')) return 'documents';
  return 'app';
}
