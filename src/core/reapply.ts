// Whether a page undid a change: the change (`before` → `changed`, as a line patch) applied to the page. Used after
// a stale tab's save (src/save/stale.ts). The pages are compared by their text (text nodes, scripts and styles
// included; tags and attributes left out): hyperclayjs writes the markup of a whole page its own way on its first
// save (`persist=""`, `style=""`, its own attributes), which would make every line of a page differ.
import { applyPatch, structuredPatch } from 'diff';
import { Parser } from 'htmlparser2';

/** A change bigger than this many changed lines is not compared (its diff could hold the event loop). */
const MAX_EDIT_LENGTH = 2_000;

/** A page's text: its text nodes in order, their line breaks kept (entities left as written). */
export function pageText(html: string): string {
  const parts: string[] = [];
  const parser = new Parser({ ontext: (t) => parts.push(t) }, { decodeEntities: false });
  parser.end(html);
  return parts.join('');
}

/** `page`'s text with the change `before` → `changed` applied, or null when it does not apply (the page has it
 *  already, or changed the same lines or the two around them itself), changes nothing, or is too big to compare.
 *  The context must match exactly: with any fuzz, a line the page already has inserted could be inserted again. */
export function reapplied(before: string, changed: string, page: string): string | null {
  const [b, c, p] = [pageText(before), pageText(changed), pageText(page)];
  if (p === c || b === c) return null;
  const patch = structuredPatch('', '', b, c, '', '', { context: 2, maxEditLength: MAX_EDIT_LENGTH });
  if (!patch || patch.hunks.length === 0) return null;
  const redone = applyPatch(p, patch);
  return redone === false || redone === p ? null : redone;
}
