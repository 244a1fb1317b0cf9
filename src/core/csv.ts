// One CSV cell, for every CSV Kiln makes: the messages inbox (on the server) and a collection's
// dashboard page (in the browser: src/collections/starters.ts embeds this function's source).

/** A CSV cell: quoted when it holds a quote, comma or line break; a value a spreadsheet would run as a
 *  formula (a leading =, +, -, @, or a tab or carriage return, which some of them skip before looking)
 *  gets a leading apostrophe, so it is shown as text. Self-contained (no imports, no outer names), since
 *  a page runs a copy of its source. */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) || safe !== value ? `"${safe.replace(/"/g, '""')}"` : safe;
}
