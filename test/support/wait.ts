// Waiting in tests: on a condition, never for a fixed time. A busy machine (CI runs two files at once on
// two cores beside PostgreSQL) makes things slower, not different: a test waits until what it needs has
// happened, with a generous deadline that only turns a hang into a clear failure.

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Resolves once `cond()` is truthy (checked now, then every `every` ms; it may be async), with its value;
 *  rejects naming `what` when it is still falsy after `timeout` ms (or when `cond` throws). */
export async function until<T>(
  cond: () => T | Promise<T>,
  opts: { what: string; timeout?: number; every?: number },
): Promise<Truthy<T>> {
  const timeout = opts.timeout ?? 30_000;
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await cond();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${opts.what}`);
    await new Promise((r) => setTimeout(r, opts.every ?? 20));
  }
}

/** `p`, or a rejection naming `what` when it has not settled within `ms` (a deadline for a hang, not a
 *  bound on how fast something must be). */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
