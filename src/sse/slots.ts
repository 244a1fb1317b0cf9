// How many event streams each client address holds open in this process. Beyond the cap
// (MAX_STREAMS_PER_ADDRESS, default limits.streamsPerAddress) a new stream is refused with 429
// `rate-limited` and Retry-After; a stream that closes frees its slot. A stream is not also one of the
// address's requests in flight (src/http/slow-clients.ts): taking a stream slot gives that one back.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpServices } from '../http/services.ts';
import { tooMany } from '../errors.ts';

const RETRY_AFTER_SECONDS = 30;

/** Takes a stream slot for the request's address, or throws 429. Call it right before
 *  `reply.hijack()`: the slot is given back when the answer's connection closes. */
export function takeStreamSlot(
  s: Pick<HttpServices, 'config' | 'streamsByAddress' | 'requestsInFlight'>,
  req: FastifyRequest,
  reply: FastifyReply,
): void {
  const address = req.ip;
  const cap = s.config.maxStreamsPerAddress;
  if (s.streamsByAddress.get(address) >= cap) {
    throw tooMany(
      `Too many open live streams from your address: at most ${cap}. Close some, or try again in ${RETRY_AFTER_SECONDS} seconds.`,
      RETRY_AFTER_SECONDS,
    );
  }
  reply.raw.on('close', s.streamsByAddress.take(address));
  // Counted here from now on, not also among the address's requests in flight.
  s.requestsInFlight.release(req.raw);
}
