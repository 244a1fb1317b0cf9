// Slow clients. Node cuts a request whose headers or whole body take too long (HEADERS_TIMEOUT_MS,
// REQUEST_TIMEOUT_MS, src/http/app.ts); the body's deadline is long for uploads, so two more bounds:
//
// - Requests in flight per client address (`req.ip`, so TRUST_PROXY decides, as for the stream cap):
//   at most MAX_REQUESTS_PER_ADDRESS in one process; more answer 429 `rate-limited` with Retry-After
//   and `Connection: close`. A slot is taken when the request reaches the framework and given back
//   when its answer's connection closes ('close' fires once for answered, aborted and cut requests
//   alike). An event stream hands its slot over to the stream cap (src/sse/slots.ts). Public pages
//   answered from memory before the framework (src/http/hot-path.ts) never wait on the client and
//   take no slot.
// - A short body deadline for requests without credentials (src/http/auth.ts `hasCredentials`): their
//   body must arrive within ANON_BODY_TIMEOUT_MS of the request's start, else the framework answers
//   408 and closes the connection. Credentials other than a session are checked only then, when a body
//   is late, so ordinary requests pay nothing for it.
//
// Whatever answers a request before its body has arrived closes the connection: otherwise Node would
// keep reading (and the client keep dripping) the rest on a connection that no longer holds a slot.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { Services } from '../services.ts';
import { tooMany } from '../errors.ts';
import { hasCredentials } from './auth.ts';

/** Seconds a client refused for too many requests in flight is told to wait. */
const RETRY_AFTER_SECONDS = 5;

/** Requests in flight per client address in this process. */
export class RequestsInFlight {
  private readonly byAddress = new Map<string, number>();
  private readonly releases = new WeakMap<IncomingMessage, () => void>();

  readonly cap: number;
  constructor(cap: number) {
    this.cap = cap;
  }

  /** Takes a slot for `address`, given back when `res` closes (or on `release`); false at the cap. */
  take(address: string, req: IncomingMessage, res: ServerResponse): boolean {
    const n = this.byAddress.get(address) ?? 0;
    if (n >= this.cap) return false;
    this.byAddress.set(address, n + 1);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.releases.delete(req);
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    };
    this.releases.set(req, release);
    res.once('close', release);
    return true;
  }

  /** Gives the request's slot back now (an event stream is counted by the stream cap instead). */
  release(req: IncomingMessage): void {
    this.releases.get(req)?.();
  }

  /** Requests in flight from `address`. */
  count(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }
}

/** The error that ends a late body: the framework answers it (408) and closes the connection. */
function lateBody(): Error & { statusCode: number } {
  return Object.assign(new Error('The request took too long to arrive.'), { statusCode: 408 });
}

/** `payload` passed through, failing with 408 when it has not ended `ms` from now, nothing has
 *  answered the request yet, and it turns out to have no credentials. */
function withDeadline(s: Services, req: FastifyRequest, reply: FastifyReply, payload: Readable, ms: number): Readable {
  const out = new PassThrough();
  // The body parser listens for the failure and answers it; a route that answered without reading
  // the body (a refusal) has no listener left, and the failure must not become an uncaught one.
  out.on('error', () => {});
  payload.on('error', (err) => out.destroy(err));
  payload.pipe(out);
  const late = () => payload.readableEnded || out.destroyed || reply.raw.writableEnded;
  const timer = setTimeout(async () => {
    if (late()) return;
    const welcome = await hasCredentials(s, req).catch(() => false);
    if (!welcome && !late()) out.destroy(lateBody());
  }, ms).unref();
  const stop = () => clearTimeout(timer);
  payload.once('end', stop);
  out.once('close', stop);
  reply.raw.once('close', stop);
  return out;
}

/** `s.requestsInFlight` is HttpServices' (src/http/services.ts, which imports this file for the class). */
export function registerSlowClients(app: FastifyInstance, s: Services & { requestsInFlight: RequestsInFlight }): void {
  const inFlight = s.requestsInFlight;
  // First of all hooks: a refused request costs no session lookup.
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (inFlight.take(req.ip, req.raw, reply.raw)) return;
    reply.header('connection', 'close');
    throw tooMany(
      `Too many requests from your address at once: at most ${inFlight.cap}. Try again in ${RETRY_AFTER_SECONDS} seconds.`,
      RETRY_AFTER_SECONDS,
    );
  });
  // Runs after the session is known (the onRequest hooks), before any body is read.
  app.addHook('preParsing', async (req: FastifyRequest, reply: FastifyReply, payload: Readable) => {
    if (req.raw.complete || req.caller?.via === 'session') return payload;
    const left = Math.max(0, s.config.anonBodyTimeoutMs - reply.elapsedTime);
    return withDeadline(s, req, reply, payload, left);
  });
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!req.raw.complete) reply.header('connection', 'close');
  });
}
