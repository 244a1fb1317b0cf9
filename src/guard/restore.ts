// Writing data back into a page: the guard's "restore my data" puts the destroyed `api` data into the
// current page through the page's own rules (hyper-html-api's `apply`, the engine Hyperclay restores with),
// so everything else the page has now stays. Loaded on first use: only restores need it.
import type { CheerioAPI } from 'cheerio';

/** The page with `data` written through its `api` rules, or null when the rules cannot take it (no rules tag,
 *  a list with nothing to clone, data of another shape). A list emptied entirely has no item left to clone: its
 *  first item is taken from `earlier` (the page before the loss), put where that list stood as the engine's
 *  template seed, and removed once the list is filled. The caller checks the result extracts to `data`. */
export async function withData(html: string, data: unknown, earlier?: string): Promise<string | null> {
  // The package ships no types: what is used of it.
  type Engine = {
    bind(adapter: unknown, root: unknown, token: string, opts: object): { set(data: unknown): void };
  };
  const [{ load }, engine, adapter] = await Promise.all([
    import('cheerio'),
    import('hyper-html-api/engine' as string) as Promise<Engine>,
    import('hyper-html-api/cheerio' as string) as Promise<{ default: unknown }>,
  ]);
  const apply = (seeded: (page: CheerioAPI) => void): string | null => {
    try {
      const $ = load(html);
      seeded($);
      // A list emptied since can grow back from its `cms-template` seed, as hyper-html-api's CMS grows lists.
      engine.bind(adapter.default, $.root(), 'api', { templateAttr: 'cms-template' }).set(data);
      $(`[cms-template][${SEED}]`).remove();
      $(`[${SEED}]`).removeAttr(SEED);
      return $.html();
    } catch {
      return null;
    }
  };
  return apply(() => {}) ?? (earlier === undefined ? null : apply(($) => seedEmptyLists($, load(earlier))));
}

/** Marks the seeds this module puts in, so that only they are taken out again. */
const SEED = 'data-kiln-seed';

/** Each list of the page's `api` rules that has no item now but had some in `$old`: its first old item, put as a
 *  `cms-template` seed first in the element that held the old items, found by the same path from the root. */
function seedEmptyLists($: CheerioAPI, $old: CheerioAPI): void {
  let rules: unknown;
  try {
    rules = JSON.parse($('script[type="application/json"][data-rules-name="api"]').first().text());
  } catch {
    return;
  }
  for (const selector of listSelectors(rules)) {
    if ($(selector).length > 0) continue;
    const item = $old(selector).first();
    const path = item.length ? pathOf(item.parent()) : null;
    const holder = path ? $(path).first() : null;
    if (!holder?.length) continue;
    const seed = item.clone().attr('cms-template', '').attr(SEED, '');
    holder.prepend(seed);
  }
}

/** The selectors of the lists in a rules object: `"sel[]"` and `["sel", shape]`, at any depth of objects. */
function listSelectors(rule: unknown): string[] {
  if (typeof rule === 'string') return rule.endsWith('[]') && !rule.includes('@') ? [rule.slice(0, -2)] : [];
  if (Array.isArray(rule)) return typeof rule[0] === 'string' ? [rule[0]] : [];
  if (rule && typeof rule === 'object') return Object.values(rule).flatMap(listSelectors);
  return [];
}

/** `html > body > ul:nth-of-type(2)`: an element's place from the root, by tag and rank among its kind. */
function pathOf(el: ReturnType<CheerioAPI>): string | null {
  const steps: string[] = [];
  let at = el;
  while (at.length && at[0].type === 'tag') {
    const tag = at[0].tagName;
    steps.unshift(`${tag}:nth-of-type(${at.prevAll(tag).length + 1})`);
    at = at.parent();
  }
  return steps.length ? steps.join(' > ') : null;
}
