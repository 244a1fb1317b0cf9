// "Does this body have a root <html> element?" — a cheap scan of the bytes instead of a full parse (or
// even a full decode), so large saves stay fast: skip a BOM, whitespace, comments, the doctype and
// processing instructions. Only ASCII delimiters are looked for, and no byte of a multi-byte UTF-8
// character is ASCII, so scanning bytes finds what scanning the text would.
import { KilnError } from '../errors.ts';

/** The one rule every writer of a document's bytes from outside applies (`/_/save` and the sync API):
 *  a document is an HTML page with a root `<html>` element, else 422 `invalid-document`. */
export function assertDocumentBytes(body: Uint8Array): void {
  if (!hasRootHtml(body)) throw new KilnError(422, 'The document needs a root <html> element.', 'invalid-document');
}

export function hasRootHtml(body: Uint8Array): boolean {
  const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const at = (i: number, s: string) => b.toString('latin1', i, i + s.length) === s;
  let i = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  const n = b.length;
  while (i < n) {
    const c = b[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c) {
      i++;
    } else if (at(i, '<!--')) {
      const end = b.indexOf('-->', i + 4, 'latin1');
      if (end === -1) return false;
      i = end + 3;
    } else if (at(i, '<!') || at(i, '<?')) {
      const end = b.indexOf('>', i, 'latin1');
      if (end === -1) return false;
      i = end + 1;
    } else {
      return /^<html[\s>/]/i.test(b.toString('latin1', i, i + 6));
    }
  }
  return false;
}
