// ETag helpers. Kiln's ETags are the 16-hex checksum, strong, quoted on the wire.

/** An If-Match as a write reads it: absent (no condition), `*` (any current version), or a list of tags,
 *  one of which must be the current etag. An empty or unreadable header is a list of none: a condition
 *  nothing meets (412), never a blind write. */
export type IfMatch = { kind: 'none' } | { kind: 'any' } | { kind: 'tags'; tags: string[] };

export const NO_CONDITION: IfMatch = { kind: 'none' };

/** The condition "the current etag is `tag`" (a caller that read the version it writes over). */
export const exactly = (tag: string): IfMatch => ({ kind: 'tags', tags: [tag] });

/** One entity tag at the start of `rest`: `"…"`, `W/"…"` (weak: a proxy that compresses weakens an ETag,
 *  and the version it names is the same), or bare (clayjs sends the etag unquoted). */
const TAG = /^\s*(?:W\/)?(?:"([\x21\x23-\x7e\x80-\xff]*)"|([\x21\x23-\x2b\x2d-\x7e\x80-\xff]+))\s*(?:,|$)/;

/** Reads an If-Match header (RFC 9110 §13.1.1: `*` or a comma-separated list of entity tags; several
 *  header lines are one list). */
export function parseIfMatch(header: string | string[] | undefined): IfMatch {
  if (header === undefined) return NO_CONDITION;
  const v = (Array.isArray(header) ? header.join(',') : header).trim();
  if (v === '*') return { kind: 'any' };
  const tags: string[] = [];
  let rest = v;
  while (rest.trim() !== '') {
    // Empty list elements (`a, , b`) are allowed and name nothing.
    const empty = /^\s*,/.exec(rest);
    if (empty) {
      rest = rest.slice(empty[0].length);
      continue;
    }
    const m = TAG.exec(rest);
    // Unreadable: no tag of it can be trusted, so none is taken (the condition fails).
    if (!m) return { kind: 'tags', tags: [] };
    // `*` stands alone or not at all.
    if (m[2] === '*') return { kind: 'tags', tags: [] };
    tags.push(m[1] ?? m[2]);
    rest = rest.slice(m[0].length);
  }
  return { kind: 'tags', tags };
}

/** Whether a write under this condition may go ahead over a resource whose current version is named by
 *  any of `current` (a file's etag; for the sync API's structure changes, its structure version too).
 *  `*` holds for any resource that exists, which every caller has found before asking. */
export function ifMatchHolds(cond: IfMatch | null | undefined, ...current: Array<string | null>): boolean {
  if (cond?.kind !== 'tags') return true;
  return cond.tags.some((t) => current.includes(t));
}

/** The one entity tag an If-Range names (`"abc"`, `abc` or `W/"abc"`), or null. */
export function ifRangeTag(header: string | string[] | undefined): string | null {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!v || v === '*') return null;
  return v.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/** True when an If-None-Match header matches the checksum (a list, weak or strong, or `*`). */
export function ifNoneMatchHits(header: string | string[] | undefined, checksum: string): boolean {
  const v = Array.isArray(header) ? header.join(',') : header;
  if (!v) return false;
  return v.split(',').some((t) => {
    const tag = t
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1');
    return tag === '*' || tag === checksum;
  });
}

/** The one byte range a `Range: bytes=…` header asks of a body of `size` bytes: `{start, end}` (both
 *  included), `'unsatisfiable'` (416), or null to send the whole body (no header, several ranges, or
 *  a form Kiln does not serve by range). */
export function byteRange(
  header: string | string[] | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  const v = Array.isArray(header) ? header[0] : header;
  const m = v ? /^bytes=(\d*)-(\d*)$/.exec(v.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    // The last N bytes.
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}
