// The scalar rule forms and where a rule's `@` is.

/**
 * Index of the `@` that separates selector from attribute/property name: the LAST `@` outside brackets,
 * parentheses and quotes (a backslash escapes the next character). -1 when there is none. So
 * `a[href="mailto:me@x.org"]@href` splits at the final `@`, and `a[href*="@"]` has no split at all.
 */
export function attrSplitIndex(rule: string): number {
  let depth = 0;
  let quote = '';
  let found = -1;
  for (let i = 0; i < rule.length; i++) {
    const c = rule[i];
    if (c === '\\') i++;
    else if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      if (depth > 0) depth--;
    } else if (c === '@' && depth === 0) found = i;
  }
  return found;
}

export type ScalarForm =
  | { form: 'list'; selector: string } //          "<selector>[]"     texts of all matches
  | { form: 'read-self'; name: string } //         "@<name>"          attribute/property of the current root
  | { form: 'read'; selector: string; name: string } // "<selector>@<name>" attribute/property of the first match
  | { form: 'self-text' } //                       "."                text of the current root
  | { form: 'text'; selector: string }; //         "<selector>"       text of the first match

/** Which form a string rule is. The order of the tests is the reference engine's, and it matters:
 *  `@x[]` is a list (of the invalid selector `@x`), `.@x` reads `x` of the selector `.`. */
export function scalarForm(rule: string): ScalarForm {
  if (rule.endsWith('[]')) return { form: 'list', selector: rule.slice(0, -2) };
  if (rule.startsWith('@')) return { form: 'read-self', name: rule.slice(1) };
  const at = attrSplitIndex(rule);
  if (at !== -1) return { form: 'read', selector: rule.slice(0, at), name: rule.slice(at + 1) };
  if (rule === '.') return { form: 'self-text' };
  return { form: 'text', selector: rule };
}
