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
