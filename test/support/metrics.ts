// What a test reads of a Kiln's Prometheus metrics (GET /_/metrics: loopback, on the main host).
import type { Client } from './client.ts';

/** Answers the hot path (src/http/hot-path.ts) has served so far in the Kiln `main` talks to. */
export async function hotAnswers(main: Client): Promise<number> {
  const text = (await main.get('/_/metrics')).text;
  return Number(/kiln_cache_lookups_total\{cache="hot",result="hit"\} (\d+)/.exec(text)?.[1] ?? 0);
}
