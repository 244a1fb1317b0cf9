// What the HTTP layer keeps in each process beside the services: the hosts found lately, public answers
// kept in memory, and connections, requests and streams open per client address. Made once by `withHttp` at start;
// route plugins get them with the services. Use cases never see them.
import type { Services } from '../services.ts';
import { Lru } from '../core/lru.ts';
import { limits } from '../limits.ts';
import { Counts } from '../core/counts.ts';
import type { HostInfo } from './context.ts';
import { HOST_CACHE_MS } from './hosts.ts';
import { HotDocuments } from './hot-path.ts';
import { RequestsInFlight } from './slow-clients.ts';
import { OpenConnections } from './connections.ts';

export interface HttpServices extends Services {
  /** Document hosts and custom domains found lately (src/http/hosts.ts). */
  hosts: Lru<HostInfo>;
  /** Public documents' answers to cookie-less visitors, served before the framework (src/http/hot-path.ts). */
  hot: HotDocuments;
  /** Requests in flight per client address in this process (src/http/slow-clients.ts). */
  requestsInFlight: RequestsInFlight;
  /** Open event streams per client address in this process (src/sse/slots.ts). */
  streamsByAddress: Counts<string>;
  /** Open TCP connections per socket address in this process (src/http/connections.ts). */
  connections: OpenConnections;
}

/** The services with the HTTP layer's parts; `hot` stops with `closeHttp`. */
export function withHttp(s: Services): HttpServices {
  const hosts = new Lru<HostInfo>({ maxEntries: limits.memory.hosts.entries, ttlMs: HOST_CACHE_MS });
  const hot = new HotDocuments(s.events, hosts, () => s.clock.now().getTime());
  s.metrics.cacheHolds('hot', () => hot.heldBytes);
  return {
    ...s,
    hosts,
    hot,
    requestsInFlight: new RequestsInFlight(s.config.maxRequestsPerAddress),
    streamsByAddress: new Counts<string>(),
    connections: new OpenConnections(s.config.maxConnectionsPerAddress),
  };
}
