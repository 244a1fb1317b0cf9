// JSON nesting, measured on the text before anything parses it. JSON.parse itself survives any depth,
// but what walks the value afterwards (JSON.stringify when a record is stored, sent back or relayed,
// schema checks) recurses, and 100 000 levels overflow the stack: a 500 for a 200 KB body. So depth is
// refused where JSON comes in (src/http/app.ts for every JSON body, and record files read back).
import { limits } from '../limits.ts';

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_ARRAY = 91;
const OPEN_OBJECT = 123;

/** True when the JSON text nests arrays and objects more than `max` levels deep. Brackets inside
 *  strings do not count. Linear and without recursion; malformed text is left to the parser (false
 *  unless it already went too deep). */
export function nestsDeeperThan(text: string, max: number = limits.jsonDepth): boolean {
  let depth = 0;
  // Only the structural characters matter; a regex finds them natively, and a string is skipped with
  // indexOf, so a large base64 string (a sync upload) costs one scan.
  const structural = /["[\]{}]/g;
  for (let m = structural.exec(text); m; m = structural.exec(text)) {
    const c = text.charCodeAt(m.index);
    if (c === QUOTE) {
      let end = m.index;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return false;
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      structural.lastIndex = end + 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else depth--;
  }
  return false;
}

/** The refusal's words, the same wherever JSON comes in. */
export const TOO_DEEP = `The JSON nests deeper than ${limits.jsonDepth} levels.`;

/** A value as JSON.parse makes it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
