import type { FastifyRequest } from 'fastify';

/** The id a reconnecting EventSource sends in `Last-Event-ID`, or null (absent or not one of ours). */
export function lastEventIdOf(req: FastifyRequest): number | null {
  const raw = req.headers['last-event-id'];
  const v = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!v || !/^\d{1,16}$/.test(v)) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}
