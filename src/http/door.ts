// A decision a plugin's hook makes once per request, before the input is judged (who may use the door: the
// administration, the message bus), handed to its handlers as the ctx their use cases run with. The use cases
// take that ctx's type, so none runs without the decision, and none asks it again.
import type { FastifyRequest } from 'fastify';

export interface Decided<T> {
  /** Decides for the request (in the hook). */
  decide(req: FastifyRequest, value: T): void;
  /** What the hook decided for the request (in a handler). */
  of(req: FastifyRequest): T;
}

export function decidedOnce<T extends object>(what: string): Decided<T> {
  const made = new WeakMap<FastifyRequest, T>();
  return {
    decide: (req, value) => made.set(req, value),
    of(req) {
      const value = made.get(req);
      if (!value) throw new Error(`${req.url}: ${what} was not decided by its hook`);
      return value;
    },
  };
}
