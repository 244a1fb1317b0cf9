// The data-clobber guard's judgement, pure: given a page's `api` data before a write (the baseline) and after
// it, what was destroyed, what was only changed, and whether that warrants telling the owner.
//
// The rules are Hyperclay's (Hyperclay Local 1.22 `data-loss-core`, which hyperclay.com shares), so a page
// warns the same way on every host: an island is `{api: <the data the page's api rules extract>}`; a value
// that was meaningful (a non-blank string, any number or boolean, a non-empty list or object) and is no
// longer is destroyed; a value that changed into another meaningful one is modified. Lists of objects are
// matched item by item (id, then identical content, then similar content), so reordering destroys nothing.
// Whether a change fires depends on who wrote it (`Provenance`): a write from outside the page (sync) or by
// a page script with no user gesture fires on any destruction; a gestured edit only on a big clobber.

import { sha256 } from '../core/checksum.ts';

export type Provenance = 'external' | 'ui-background' | 'ui-gestured' | 'ui-unknown';

type Value = unknown;
export type Island = { api: Value } | null;

const FUZZY_MATCH_THRESHOLD = 0.45;
const ITEM_WIPE_FRACTION = 0.8;
const HUGE_SCALAR_CHARS = 1024;
const HUGE_SCALAR_KEEP_FRACTION = 0.2;
const HUGE_SCALAR_SIMILARITY = 0.4;
/** Above this many base × current item pairs, items are paired by position instead of by similarity. */
const FUZZY_PAIR_BUDGET = 2000;
const MAX_PATHS = 24;
const PLACEHOLDERS = new Set([
  'untitled',
  'untitled draft',
  'new item',
  'new',
  'todo',
  'to do',
  'click to edit',
  'enter text',
  'placeholder',
  'example',
]);
const ID_KEYS = ['id', '_id', 'key', 'uid', 'slug'];

const isObject = (v: Value): v is Record<string, Value> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v: Value) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** Data someone would miss: a non-blank string, any number or boolean, a non-empty list or object. */
export function meaningful(v: Value): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'string') return v.trim() !== '';
  if (typeof v === 'number' || typeof v === 'boolean') return true;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return false;
}

/** How much data a value holds: characters of its strings, 1 per number or boolean. */
function mass(v: Value): number {
  if (typeof v === 'string') return v.trim().length;
  if (typeof v === 'number' || typeof v === 'boolean') return 1;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + mass(x), 0);
  if (isObject(v)) return Object.values(v).reduce((n: number, x) => n + mass(x), 0);
  return 0;
}

function isPlaceholder(v: Value): boolean {
  if (typeof v !== 'string') return false;
  const t = v.trim().toLowerCase();
  return PLACEHOLDERS.has(t) || t.startsWith('lorem ipsum');
}

const isItemList = (v: Value): v is Record<string, Value>[] => Array.isArray(v) && v.length > 0 && v.every(isObject);

function itemId(item: Record<string, Value>): string | null {
  for (const k of ID_KEYS) {
    const v = item[k];
    if (typeof v === 'number') return `n:${v}`;
    if (typeof v === 'string' && v.trim() !== '') return `s:${v}`;
  }
  return null;
}

/** A key JavaScript lists before the others, in ascending numeric order: an array index (a canonical
 *  integer below 2^32 − 1). "9" and "10" are; "01" and "4294967295" are not. */
const isIndexKey = (k: string) => /^(?:0|[1-9]\d*)$/.test(k) && Number(k) < 4294967295;

/** An object's keys in the order Hyperclay's island hash writes them: its keys sorted, then laid out by
 *  JSON.stringify, which puts index keys first in numeric order and keeps the rest in the sorted order. */
function hashKeyOrder(keys: string[]): string[] {
  const index = keys.filter(isIndexKey).sort((a, b) => Number(a) - Number(b));
  return [...index, ...keys.filter((k) => !isIndexKey(k)).sort()];
}

/** A value JSON.stringify leaves out of an object (and writes as null in a list). */
const unwritten = (v: Value) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** JSON with every object's keys in one order: equal data, equal text (list order kept), byte for byte
 *  the text Hyperclay Local 1.22 hashes (`stableDigest`), so an island hash matches across devices. */
export function stableJson(v: Value): string {
  if (Array.isArray(v)) return `[${v.map((x) => (unwritten(x) ? 'null' : stableJson(x))).join(',')}]`;
  if (isObject(v)) {
    const keys = hashKeyOrder(Object.keys(v)).filter((k) => !unwritten(v[k]));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** Sørensen–Dice over the bigrams of two sequences (characters of a string, or tokens). */
function diceOf<T>(a: T[], b: T[], key: (x: T, y: T) => string): number {
  if (a.length < 2 || b.length < 2) return 0;
  const counts = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const k = key(a[i], a[i + 1]);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  let common = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const k = key(b[i], b[i + 1]);
    const n = counts.get(k) ?? 0;
    if (n > 0) {
      common++;
      counts.set(k, n - 1);
    }
  }
  return (2 * common) / (a.length - 1 + (b.length - 1));
}

const charDice = (a: string, b: string) => (a === b ? 1 : diceOf([...a], [...b], (x, y) => x + y));

function scalarText(v: Value, out: string[] = []): string[] {
  if (isScalar(v)) out.push(String(v).toLowerCase());
  else if (Array.isArray(v)) for (const x of v) scalarText(x, out);
  else if (isObject(v)) for (const x of Object.values(v)) scalarText(x, out);
  return out;
}

/** How alike two items read: Dice over word pairs, or over character pairs for one-word items. */
function itemSimilarity(a: Value, b: Value): number {
  const ta = scalarText(a).join(' ');
  const tb = scalarText(b).join(' ');
  const wa = ta.split(/\s+/).filter(Boolean);
  const wb = tb.split(/\s+/).filter(Boolean);
  if (wa.length < 2 || wb.length < 2) return charDice(ta, tb);
  return diceOf(wa, wb, (x, y) => `${x}\u0000${y}`);
}

/** What a write did to the data, counted. */
export interface Destruction {
  destroyedLeaves: number;
  removedItems: number;
  itemWipes: number;
  hugeWipes: number;
  placeholderResets: number;
  modifiedAtoms: number;
  leafCount: number;
  totalMass: number;
  destroyedMass: number;
  /** Where data was destroyed, e.g. `api.items[2].name` (at most 24). */
  paths: string[];
  /** Too many items to match by similarity: paired by position. */
  fuzzyFallback: boolean;
}

const anyDestruction = (d: Destruction) => d.destroyedLeaves + d.removedItems + d.itemWipes + d.hugeWipes > 0;

/** Mass of the meaningful values of `b` that are no longer meaningful at the same place in `i`. */
function destroyedMassWithin(b: Value, i: Value): number {
  if (Array.isArray(b))
    return b.reduce((n: number, x, k) => n + destroyedMassWithin(x, Array.isArray(i) ? i[k] : undefined), 0);
  if (isObject(b)) {
    return Object.keys(b).reduce((n, k) => n + destroyedMassWithin(b[k], isObject(i) ? i[k] : undefined), 0);
  }
  return meaningful(b) && !meaningful(i) ? mass(b) : 0;
}

/** Compares the data before a write (`base`) with the data after it (`current`). */
export function classify(base: Island, current: Island): Destruction {
  const d: Destruction = {
    destroyedLeaves: 0,
    removedItems: 0,
    itemWipes: 0,
    hugeWipes: 0,
    placeholderResets: 0,
    modifiedAtoms: 0,
    leafCount: 0,
    totalMass: 0,
    destroyedMass: 0,
    paths: [],
    fuzzyFallback: false,
  };
  const lost = (path: string) => {
    if (d.paths.length < MAX_PATHS) d.paths.push(path);
  };

  const walk = (b: Value, i: Value, path: string): void => {
    if (!meaningful(b)) return;
    if (isScalar(b)) {
      d.leafCount++;
      d.totalMass += mass(b);
      if (!meaningful(i)) {
        d.destroyedLeaves++;
        d.destroyedMass += mass(b);
        lost(path);
      } else if (
        typeof b === 'string' &&
        typeof i === 'string' &&
        b.length >= HUGE_SCALAR_CHARS &&
        i.length < HUGE_SCALAR_KEEP_FRACTION * b.length &&
        charDice(b, i) < HUGE_SCALAR_SIMILARITY
      ) {
        d.hugeWipes++;
        d.destroyedMass += Math.max(0, mass(b) - mass(i));
        lost(path);
      } else if (isPlaceholder(i) && !isPlaceholder(b)) {
        d.placeholderResets++;
      } else if (typeof b === 'string' && typeof i === 'string' ? b.trim() !== i.trim() : b !== i) {
        d.modifiedAtoms++;
      }
    } else if (Array.isArray(b)) {
      if (isItemList(b)) walkItems(b, Array.isArray(i) ? i : [], path);
      else walkScalars(b, Array.isArray(i) ? i : [], path);
    } else if (isObject(b)) {
      const inner = isObject(i) ? i : {};
      for (const k of Object.keys(b)) walk(b[k], Object.hasOwn(inner, k) ? inner[k] : undefined, `${path}.${k}`);
    }
  };

  // A list of strings (".tag[]") is a multiset of leaves: each base value is found again or destroyed.
  const walkScalars = (b: Value[], i: Value[], path: string) => {
    const key = (v: Value) => (typeof v === 'string' ? `s:${v.trim()}` : `${typeof v}:${stableJson(v)}`);
    const left = new Map<string, number>();
    for (const v of i) left.set(key(v), (left.get(key(v)) ?? 0) + 1);
    b.forEach((v, k) => {
      if (!meaningful(v)) return;
      d.leafCount++;
      d.totalMass += mass(v);
      const n = left.get(key(v)) ?? 0;
      if (n > 0) left.set(key(v), n - 1);
      else {
        d.destroyedLeaves++;
        d.destroyedMass += mass(v);
        lost(`${path}[${k}]`);
      }
    });
  };

  const compareItems = (b: Value, i: Value, path: string) => {
    const m = mass(b);
    if (m > 0 && destroyedMassWithin(b, i) / m >= ITEM_WIPE_FRACTION) {
      d.itemWipes++;
      lost(path);
    } else walk(b, i, path);
  };

  const walkItems = (b: Record<string, Value>[], i: Value[], path: string) => {
    if (b.length * i.length > FUZZY_PAIR_BUDGET) {
      d.fuzzyFallback = true;
      b.forEach((item, k) => {
        if (k < i.length) compareItems(item, i[k], `${path}[${k}]`);
        else {
          d.removedItems++;
          lost(`${path}[${k}]`);
        }
      });
      return;
    }
    const pairOf = new Map<number, number>(); // base index → current index
    const taken = new Set<number>();
    const pair = (bk: number, ik: number) => {
      pairOf.set(bk, ik);
      taken.add(ik);
    };
    const free = (bk: number) => !pairOf.has(bk);
    // 1. The same id; 2. the same content (a reordered list).
    for (const same of [(x: Value) => (isObject(x) ? itemId(x) : null), (x: Value) => stableJson(x)]) {
      b.forEach((item, bk) => {
        const k = same(item);
        if (!free(bk) || k === null) return;
        const ik = i.findIndex((x, n) => !taken.has(n) && same(x) === k);
        if (ik !== -1) pair(bk, ik);
      });
    }
    // 3. Similar enough, the most similar first; 4. items with no id on either side, whatever their likeness.
    const greedy = (threshold: number, eligible: (bk: number, ik: number) => boolean) => {
      const candidates: { bk: number; ik: number; sim: number }[] = [];
      b.forEach((item, bk) => {
        if (!free(bk)) return;
        i.forEach((x, ik) => {
          if (taken.has(ik) || !eligible(bk, ik)) return;
          const sim = itemSimilarity(item, x);
          if (sim >= threshold) candidates.push({ bk, ik, sim });
        });
      });
      candidates.sort((x, y) => y.sim - x.sim || x.bk - y.bk || x.ik - y.ik);
      for (const c of candidates) if (free(c.bk) && !taken.has(c.ik)) pair(c.bk, c.ik);
    };
    greedy(FUZZY_MATCH_THRESHOLD, () => true);
    greedy(-1, (bk, ik) => itemId(b[bk]) === null && !(isObject(i[ik]) && itemId(i[ik] as Record<string, Value>)));
    b.forEach((item, bk) => {
      const ik = pairOf.get(bk);
      if (ik === undefined) {
        d.removedItems++;
        lost(`${path}[${bk}]`);
      } else compareItems(item, i[ik], `${path}[${bk}]`);
    });
  };

  if (base) walk(base.api, current ? current.api : undefined, 'api');
  return d;
}

/** Whether a write warrants an event: Hyperclay's firing rules. `uiWorkPending`: a gestured edit was saved
 *  since the last external write (an external write that changes it overwrote a person's work). */
export function shouldFire(
  provenance: Provenance,
  uiWorkPending: boolean,
  base: Island,
  current: Island,
  d: Destruction,
): boolean {
  if (!base || !meaningful(base.api)) return false;
  if (!current) return true; // the api rules tag is gone
  if (provenance === 'external' && (anyDestruction(d) || (d.modifiedAtoms >= 1 && uiWorkPending))) return true;
  if (provenance === 'ui-background' && anyDestruction(d)) return true;
  // A big clobber fires whoever wrote it.
  const leafShare = d.leafCount ? d.destroyedLeaves / d.leafCount : 0;
  const massShare = d.totalMass ? d.destroyedMass / d.totalMass : 0;
  const resetShare = d.leafCount ? d.placeholderResets / d.leafCount : 0;
  return (
    d.removedItems >= 2 ||
    d.itemWipes >= 1 ||
    d.hugeWipes >= 1 ||
    (d.destroyedLeaves >= 3 && leafShare >= 0.3 && massShare >= 0.25) ||
    (d.placeholderResets >= 3 && resetShare >= 0.3) ||
    (d.leafCount <= 3 && d.destroyedLeaves > 0 && d.destroyedLeaves === d.leafCount)
  );
}

/** The destroyed data is all back: nothing destroyed, changed or reset compared with it. */
export const lossUndone = (d: Destruction) => !anyDestruction(d) && d.modifiedAtoms === 0 && d.placeholderResets === 0;

/** What the owner is told of a loss (the event's `lossSummary`). */
export function lossSummary(provenance: Provenance, d: Destruction) {
  return {
    provenance,
    destroyedAtoms: d.destroyedLeaves + d.removedItems + d.itemWipes + d.hugeWipes,
    removedItems: d.removedItems,
    modifiedAtoms: d.modifiedAtoms,
    paths: d.paths.slice(0, 12),
  };
}

const EMPTY = '— empty —';
const PREVIEW_CHARS = 80;
const cut = (s: string) => (s.length > PREVIEW_CHARS ? `${s.slice(0, PREVIEW_CHARS - 1)}…` : s);
const items = (n: number) => (n === 0 ? EMPTY : `${n} ${n === 1 ? 'item' : 'items'}`);

function formatValue(v: Value): string {
  if (!meaningful(v)) return EMPTY;
  if (typeof v === 'string') return cut(v.trim());
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v))
    return v.every(isObject)
      ? items(v.length)
      : cut(v.map((x) => (isScalar(x) ? String(x) : stableJson(x))).join(', '));
  return cut(JSON.stringify(v));
}

export interface PreviewRow {
  key: string;
  now: string;
  yours: string;
}

/** The rows the panel shows (what the page has now against the owner's data) and how many items added since
 *  the loss a restore would drop. Only these short strings ever reach the browser, never the raw data. */
export function buildPreview(yours: Value, now: Value): { preview: PreviewRow[]; droppedAdditions: number } {
  if (Array.isArray(yours) || Array.isArray(now)) {
    const y = Array.isArray(yours) ? yours.length : 0;
    const n = Array.isArray(now) ? now.length : 0;
    return {
      preview: y === n ? [] : [{ key: 'items', now: items(n), yours: items(y) }],
      droppedAdditions: Math.max(0, n - y),
    };
  }
  const a = isObject(yours) ? yours : {};
  const b = isObject(now) ? now : {};
  const preview: PreviewRow[] = [];
  let droppedAdditions = 0;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const row = { key, now: formatValue(b[key]), yours: formatValue(a[key]) };
    if (row.now !== row.yours) preview.push(row);
    if (Array.isArray(a[key]) && Array.isArray(b[key])) {
      droppedAdditions += Math.max(0, (b[key] as Value[]).length - (a[key] as Value[]).length);
    }
  }
  return { preview, droppedAdditions };
}

/** The island's fingerprint that devices compare before acting on a dismissal (`recoverableDataHash`):
 *  SHA-256 of its JSON with sorted keys. */
export function islandHash(island: Island): string {
  return sha256(stableJson(island));
}
