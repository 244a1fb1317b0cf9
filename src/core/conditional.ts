// ETag helpers. Kiln's ETags are the 16-hex checksum, strong, quoted on the wire.

/** The checksum an If-Match names, accepting `"abc"`, `abc` and `W/"abc"`; `*` and absent give null. */
export function parseIfMatch(header: string | string[] | undefined): string | null {
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
