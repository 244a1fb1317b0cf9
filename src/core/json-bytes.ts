// A JSON string made straight from UTF-8 bytes, for embedding a document in a page's
// `<script type="application/json">`: the same text as JSON.stringify(bytes.toString()) with `<` written
// `\u003c` (so it cannot close the script), but one Buffer the size of the answer instead of a string per
// step (decode, stringify, replace, page, encode: five copies of a 4 MB document).

const SHORT: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 34: '\\"', 92: '\\\\' };

/** What a byte becomes: itself (null) or an escape. Bytes from 0x80 up are UTF-8 sequences, kept as they are. */
function escapeOf(b: number): string | null {
  if (b === 0x3c) return '\\u003c';
  const short = SHORT[b];
  if (short) return short;
  if (b < 0x20) return `\\u00${b.toString(16).padStart(2, '0')}`;
  return null;
}

const ESCAPES: (string | null)[] = Array.from({ length: 256 }, (_, b) => escapeOf(b));

/** `bytes` as a quoted JSON string (UTF-8). */
export function jsonStringOfBytes(bytes: Buffer): Buffer {
  let extra = 0;
  for (let i = 0; i < bytes.length; i++) {
    const e = ESCAPES[bytes[i]];
    if (e !== null) extra += e.length - 1;
  }
  const out = Buffer.allocUnsafe(bytes.length + extra + 2);
  out[0] = 0x22;
  let o = 1;
  let from = 0;
  for (let i = 0; i < bytes.length; i++) {
    const e = ESCAPES[bytes[i]];
    if (e === null) continue;
    o += bytes.copy(out, o, from, i);
    o += out.write(e, o, 'latin1');
    from = i + 1;
  }
  o += bytes.copy(out, o, from);
  out[o] = 0x22;
  return out;
}
