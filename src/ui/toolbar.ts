// The owner's toolbar on their documents: one script tag added to the bytes at serve time, for the
// owner only (visitors, share guests and app users get the stored bytes). It is never stored: the tag
// and the element its script creates carry `no-save`/`save-remove`, which hyperclayjs strips from every
// save and snapshot, and the save pipeline removes the exact tag from any body that still has it.
import { isChecksum } from '../core/checksum.ts';

const SRC = '/_/assets/toolbar.js';
const TAG =
  /<script src="\/_\/assets\/toolbar\.js\?[^"<>]*" data-kiln-toolbar(?: data-etag="[0-9a-f]*")? no-save save-remove><\/script>/g;

/** The toolbar's tag. `etag`: the ETag of the bytes served, which the toolbar opens its notices lane `since` (a
 *  change made elsewhere before the lane opens is told then). With `confirm` (an app user who has not confirmed
 *  their email yet, on their own copy) it shows a notice instead: confirm the address to edit, and a button that
 *  sends the link again. */
export function toolbarTag(
  documentPath: string,
  mainUrl: string,
  opts: { etag?: string; confirm?: string; appUser?: boolean } = {},
): string {
  // Built by hand (every owner's page view): encodeURIComponent leaves no `"`, `&`, `<` or `>` to escape.
  const q = `path=${encodeURIComponent(documentPath)}&amp;main=${encodeURIComponent(mainUrl)}`;
  // The ETag rides beside the address, not in it: the script's URL (cached an hour) stays the same across saves.
  const e = opts.etag && isChecksum(opts.etag) ? ` data-etag="${opts.etag}"` : '';
  const c = opts.confirm ? `&amp;confirm=${encodeURIComponent(opts.confirm)}` : '';
  // An app user's own copy: no code editor (app users may not edit code) and no dashboard to go to.
  const a = opts.appUser ? '&amp;app=1' : '';
  return `<script src="${SRC}?${q}${c}${a}" data-kiln-toolbar${e} no-save save-remove></script>`;
}

/** The document as its owner gets it: the toolbar's tag just before the last `</body>`, in any case (or at the
 *  end), as the pieces to send in order. Every owner's page view comes here: the stored bytes are neither
 *  copied (a copy of a 100 KB page cost ~24 µs per view), nor decoded, nor lower-cased. */
export function withToolbar(bytes: Buffer, tag: string): Buffer[] {
  const at = lastBodyClose(bytes);
  const insert = Buffer.from(tag, 'utf8');
  if (at === -1) return [bytes, insert];
  return [bytes.subarray(0, at), insert, bytes.subarray(at)];
}

const BODY_CLOSE = Buffer.from('</body>');

/** Where the last `</body>` (any case) starts, or -1: searched back from the end, where it usually is. */
function lastBodyClose(bytes: Buffer): number {
  for (let at = bytes.lastIndexOf(0x3c); at !== -1; at = at === 0 ? -1 : bytes.lastIndexOf(0x3c, at - 1)) {
    if (at + BODY_CLOSE.length > bytes.length) continue;
    let same = true;
    for (let i = 1; same && i < BODY_CLOSE.length; i++) {
      const want = BODY_CLOSE[i];
      // `body` in any case: an ASCII lower-case letter, or the same letter upper-case (0x20 less).
      same = bytes[at + i] === want || (want >= 0x61 && want <= 0x7a && bytes[at + i] === want - 0x20);
    }
    if (same) return at;
  }
  return -1;
}

/** A save body without the toolbar's tag (a page saved by something that did not strip it). */
export function withoutToolbar(bytes: Buffer): Buffer {
  if (bytes.indexOf('data-kiln-toolbar') === -1) return bytes;
  return Buffer.from(bytes.toString('latin1').replace(TAG, ''), 'latin1');
}

/** `withoutToolbar` for a body already decoded (the tag is ASCII: the same bytes go). */
export function withoutToolbarText(text: string): string {
  return text.includes('data-kiln-toolbar') ? text.replace(TAG, '') : text;
}
