// One error type for everything a request can be refused for.
export class KilnError extends Error {
  constructor(
    readonly status: number,
    msg: string,
    readonly code?: string,
    /** Extra fields merged into the JSON answer (e.g. `etag` on 412). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(msg);
  }
}

export const badRequest = (msg: string, code?: string) => new KilnError(400, msg, code);
export const unauthorized = (msg = 'Sign in first.', code?: string) => new KilnError(401, msg, code);
export const forbidden = (msg = 'You do not have access to this.', code?: string) => new KilnError(403, msg, code);
export const notFound = (msg = 'Not found.') => new KilnError(404, msg);
export const conflict = (msg: string, code?: string, extra?: Record<string, unknown>) => new KilnError(409, msg, code, extra);
export const tooLarge = (msg: string) => new KilnError(413, msg, 'too-large');
export const tooMany = (msg: string, retryAfterSeconds: number) =>
  new KilnError(429, msg, 'rate-limited', { retryAfter: retryAfterSeconds });
