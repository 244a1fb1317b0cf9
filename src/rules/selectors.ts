// Selectors: parsed with css-what and compiled ONCE with css-select, then run against any root of any document.
//
// Matching follows the reference engine (hyper-html-api over cheerio) where it is deliberate:
// - A selector matches among the DESCENDANTS of the current root (the document, or one list item). Inside a list
//   item the whole selector is scoped to the item (`ul li` needs the ul inside the item too), as cheerio's
//   `find` does; from the document or a top-level element it is not. `> li`, `+ p`, `~ p` and `:scope` are
//   relative to the current root.
// - jQuery positional pseudo-classes `:first`, `:last`, `:eq(n)`, `:nth(n)`, `:gt(n)`, `:lt(n)`, `:even`, `:odd`
//   filter the matches so far in document order (`li:first a` is the links of the first li).
// - Never matched: rules tags (`script[data-rules-name]`) and anything inside a `[cms-template]` element (or that
//   element itself). Kiln, like browsers and unlike cheerio, also never looks inside `<template>` content.
//
// Queries run over the document's flat index (doc-index.ts): a subtree is a range of it, and when the last
// compound of a selector names an id, a class or a tag, only the elements with it are tested.
import { compile } from 'css-select';
import { parse, SelectorType, type Selector, type PseudoSelector } from 'css-what';
import type { AnyNode, Element } from 'domhandler';
import { removeSubsets } from 'domutils';
import { tick, ticks } from './budget.ts';
import { IN_CMS_TEMPLATE, lookup, lowerBound, type DocIndex } from './doc-index.ts';
import { attribute, isElement, textContent } from './dom.ts';
import { failure, type RulesFailure } from './errors.ts';
import { rulesLimits } from './limits.ts';

type Test = ((el: Element) => boolean) & { shouldTestNextSiblings?: boolean };

const POSITIONAL = new Set(['first', 'last', 'eq', 'nth', 'gt', 'lt', 'even', 'odd']);
const TRAVERSALS = new Set<string>([
  SelectorType.Adjacent,
  SelectorType.Child,
  SelectorType.Descendant,
  SelectorType.Parent,
  SelectorType.Sibling,
  SelectorType.ColumnCombinator,
]);
const isTraversal = (t: Selector) => TRAVERSALS.has(t.type);
const isPositional = (t: Selector): t is PseudoSelector => t.type === SelectorType.Pseudo && POSITIONAL.has(t.name);
const SCOPE: Selector = { type: SelectorType.Pseudo, name: 'scope', data: null };
const DESCENDANT: Selector = { type: SelectorType.Descendant };
const IN_SET = '-kiln-in-set';

// The adapter css-select walks the tree through; every step is charged to the extraction budget.
const adapter = {
  isTag: (node: AnyNode): node is Element => isElement(node),
  getAttributeValue: (el: Element, name: string) => attribute(el, name),
  getChildren: (node: AnyNode): AnyNode[] => {
    const children = (node as { children?: AnyNode[] }).children;
    if (!children) return [];
    ticks(children.length + 1);
    return children;
  },
  getName: (el: Element) => el.name,
  getParent: (node: AnyNode) => {
    tick();
    return node.parent as AnyNode | null;
  },
  getSiblings: (node: AnyNode): AnyNode[] => {
    const siblings = node.parent ? (node.parent.children as AnyNode[]) : [node];
    ticks(siblings.length + 1);
    return siblings;
  },
  prevElementSibling: (node: AnyNode): Element | null => {
    let prev = node.prev;
    while (prev) {
      tick();
      if (isElement(prev)) return prev;
      prev = prev.prev;
    }
    return null;
  },
  getText: (node: AnyNode) => textContent(node, false),
  hasAttrib: (el: Element, name: string) => Object.hasOwn(el.attribs, name) && el.attribs[name] != null,
  removeSubsets: (nodes: AnyNode[]) => removeSubsets(nodes),
};

/** A compiled test plus the holders its dynamic parts read: the current root for `:scope`, the current set. */
type Compiled = { test: Test; scope: AnyNode[]; set: { current: ReadonlySet<AnyNode> } };
const PLACEHOLDER = {} as AnyNode;
const NOTHING: ReadonlySet<AnyNode> = new Set();

function compileTokens(groups: Selector[][]): Compiled {
  const scope: AnyNode[] = [PLACEHOLDER];
  const set = { current: NOTHING };
  const test = compile<AnyNode, Element>(
    groups,
    {
      xmlMode: false,
      adapter,
      cacheResults: false, // results depend on the current root and set
      relativeSelector: false, // the scope is spelled out below
      pseudos: { [IN_SET]: (el: Element) => set.current.has(el) },
    },
    scope,
  ) as Test;
  return { test, scope, set };
}

/** Every token inside `:not()`, `:is()`, `:has()`... (at any depth). */
function nestedTokens(tokens: Selector[], visit: (t: Selector) => void): void {
  for (const t of tokens) {
    if (t.type === SelectorType.Pseudo && Array.isArray(t.data)) {
      for (const g of t.data) {
        for (const n of g) visit(n);
        nestedTokens(g, visit);
      }
    }
  }
}

/** Which index list can stand in for a full scan: the last compound's id, else class, else tag. */
type Key = { map: 'byId' | 'byClass' | 'byTag'; value: string } | null;

function keyOf(group: Selector[]): Key {
  let start = group.length;
  while (start > 0 && !isTraversal(group[start - 1])) start--;
  let tag: Key = null;
  let cls: Key = null;
  for (const t of group.slice(start)) {
    if (t.type === SelectorType.Attribute && t.ignoreCase !== true) {
      if (t.name === 'id' && t.action === 'equals') return { map: 'byId', value: t.value };
      if (t.name === 'class' && t.action === 'element' && !/\s/.test(t.value))
        cls ??= { map: 'byClass', value: t.value };
    } else if (t.type === SelectorType.Tag && t.namespace === null)
      tag ??= { map: 'byTag', value: t.name.toLowerCase() };
  }
  return cls ?? tag;
}

type Step =
  | { kind: 'position'; token: PseudoSelector }
  | { kind: 'filter'; test: Compiled }
  | { kind: 'search'; test: Compiled; siblings: boolean };

/** A selector group with positional pseudo-classes: a head query, then position filters and follow-up queries. */
type PositionalGroup = { head: Selector[] | null; steps: Step[]; scoped?: Compiled; unscoped?: Compiled };

const clone = (tokens: Selector[]): Selector[] => structuredClone(tokens);

function scopedTokens(group: Selector[], scoped: boolean): Selector[] {
  const tokens = clone(group);
  if (tokens.length > 0 && isTraversal(tokens[0])) return [{ ...SCOPE }, ...tokens];
  if (!scoped || tokens.some((t) => t.type === SelectorType.Pseudo && t.name === 'scope')) return tokens;
  return [{ ...SCOPE }, { ...DESCENDANT }, ...tokens];
}

/** What one query costs beyond its candidates, in steps (about a microsecond). */
const QUERY_STEPS = 32;

function ascending(a: number, b: number): number {
  return a - b;
}

/** Where a query looks, as a range of the flat index: [lo, hi). `ctx` -1 is the document. */
function range(ix: DocIndex, ctx: number, self: boolean, nextSiblings: boolean): [number, number] {
  if (ctx < 0) return [0, ix.els.length];
  const lo = self ? ctx : ctx + 1;
  if (!nextSiblings) return [lo, ix.end[ctx]];
  const p = ix.parent[ctx];
  return [lo, p < 0 ? ix.els.length : ix.end[p]];
}

export class SelectorQuery {
  readonly source: string;
  private readonly plain: Selector[][];
  private readonly key: Key;
  private readonly positional: PositionalGroup[];
  private readonly includeSelf: boolean;
  private readonly includeNextSiblings: boolean;
  private scopedTest: Compiled | null = null;
  private unscopedTest: Compiled | null = null;

  private constructor(source: string, plain: Selector[][], positional: PositionalGroup[]) {
    this.source = source;
    this.plain = plain;
    this.key = plain.length === 1 ? keyOf(plain[0]) : null;
    this.positional = positional;
    this.includeSelf = /^\s*(?:[+~]|:scope\b)/.test(source);
    this.includeNextSiblings = /^\s*[+~]/.test(source);
  }

  /** Parses and compiles `source`, or says why not. Never throws. */
  static compile(source: string): SelectorQuery | RulesFailure {
    const shown = JSON.stringify(source.length > 80 ? `${source.slice(0, 80)}…` : source);
    if (source.length > rulesLimits.maxSelectorChars) {
      return failure('too-large', `Selector too long (max ${rulesLimits.maxSelectorChars} characters): ${shown}`);
    }
    if (nestingDepth(source) > rulesLimits.maxSelectorNesting) {
      return failure(
        'selector',
        `Invalid selector ${shown}: nested deeper than ${rulesLimits.maxSelectorNesting} brackets`,
      );
    }
    try {
      const plain: Selector[][] = [];
      const positional: PositionalGroup[] = [];
      for (const group of parse(source)) {
        nestedTokens(group, (t) => {
          if (isPositional(t)) throw new Error(`:${t.name} is only supported outside :not(), :is() and :has()`);
        });
        if (!group.some(isPositional)) plain.push(group);
        else positional.push(positionalGroup(group));
      }
      const q = new SelectorQuery(source, plain, positional);
      q.compiled(false); // surfaces css-select's compile errors (unknown pseudo-classes...) now, not at match time
      for (const g of positional) if (g.head) g.unscoped = compileTokens([scopedTokens(g.head, false)]);
      return q;
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      return failure('selector', `Invalid selector ${shown}: ${msg}`);
    }
  }

  private compiled(scoped: boolean): Compiled | null {
    if (this.plain.length === 0) return null;
    if (scoped) return (this.scopedTest ??= compileTokens(this.plain.map((g) => scopedTokens(g, true))));
    return (this.unscopedTest ??= compileTokens(this.plain.map((g) => scopedTokens(g, false))));
  }

  /** Indexes (into ix.els) of the matches under `ctx` (-1: the document), in document order; only the first
   *  when `first`. Throws RulesAbort when the extraction's budget runs out. */
  find(ix: DocIndex, ctx: number, first: boolean): number[] {
    try {
      return this.search(ix, ctx, first);
    } finally {
      this.release();
    }
  }

  /** Drops the references to the last document searched, so a cached selector never keeps a document alive. */
  private release(): void {
    if (this.scopedTest) this.scopedTest.scope[0] = PLACEHOLDER;
    if (this.unscopedTest) this.unscopedTest.scope[0] = PLACEHOLDER;
    for (const g of this.positional) {
      if (g.scoped) g.scoped.scope[0] = PLACEHOLDER;
      if (g.unscoped) g.unscoped.scope[0] = PLACEHOLDER;
      for (const step of g.steps) if (step.kind === 'search') step.test.set.current = NOTHING;
    }
  }

  private search(ix: DocIndex, ctx: number, first: boolean): number[] {
    ticks(QUERY_STEPS);
    const scoped = ctx >= 0 && ix.parent[ctx] >= 0;
    let lo = 0;
    let hi = ix.els.length;
    if (ctx >= 0) {
      lo = this.includeSelf ? ctx : ctx + 1;
      const p = ix.parent[ctx];
      hi = !this.includeNextSiblings ? ix.end[ctx] : p < 0 ? ix.els.length : ix.end[p];
    }
    const root: AnyNode = ctx < 0 ? ix.doc : ix.els[ctx];
    let out: number[] = [];
    const plain = this.compiled(scoped);
    if (plain) {
      plain.scope[0] = root;
      const test = plain.test;
      const { els, flags } = ix;
      const onlyFirst = first && this.positional.length === 0;
      const list = this.key ? lookup(ix, this.key.map, this.key.value) : undefined;
      if (this.key && !list) {
        // nothing has the id, class or tag
      } else if (list) {
        for (let j = lowerBound(list, lo); j < list.length; j++) {
          const i = list[j];
          if (i >= hi) break;
          tick();
          if (flags[i] === 0 && test(els[i])) {
            out.push(i);
            if (onlyFirst) break;
          }
        }
      } else {
        for (let i = lo; i < hi; i++) {
          tick();
          if (flags[i] === 0 && test(els[i])) {
            out.push(i);
            if (onlyFirst) break;
          }
        }
      }
    }
    if (this.positional.length > 0) {
      const seen = new Set(out);
      for (const g of this.positional)
        for (const i of this.findPositional(g, ix, ctx, root, lo, hi, scoped)) seen.add(i);
      out = [...seen].sort(ascending);
      if (first) out.length = Math.min(out.length, 1);
    }
    return out;
  }

  private findPositional(
    g: PositionalGroup,
    ix: DocIndex,
    ctx: number,
    root: AnyNode,
    lo: number,
    hi: number,
    scoped: boolean,
  ): number[] {
    let current: number[] = [];
    if (g.head === null) {
      // A group that starts with a positional (`:first`): the root's element children (or the root itself).
      if (this.includeSelf && ctx >= 0) current = [ctx];
      else {
        const childrenEnd = ctx < 0 ? ix.els.length : ix.end[ctx];
        for (let i = ctx + 1; i < childrenEnd; i = ix.end[i]) current.push(i);
      }
    } else {
      const head = scoped ? (g.scoped ??= compileTokens([scopedTokens(g.head, true)])) : g.unscoped!;
      head.scope[0] = root;
      for (let i = lo; i < hi; i++) {
        tick();
        if (head.test(ix.els[i])) current.push(i);
      }
    }
    for (const step of g.steps) {
      if (current.length === 0) break;
      if (step.kind === 'position') current = byPosition(step.token, current);
      else if (step.kind === 'filter') {
        ticks(current.length);
        current = current.filter((i) => step.test.test(ix.els[i]));
      } else {
        step.test.set.current = new Set(current.map((i) => ix.els[i]));
        const found: number[] = [];
        let covered = -1; // roots are in document order; skip those inside an earlier root's range
        for (const r of current) {
          const [from, to] = step.siblings ? range(ix, r, true, true) : [r, ix.end[r]];
          for (let i = Math.max(from, covered); i < to; i++) {
            tick();
            if (step.test.test(ix.els[i])) found.push(i);
          }
          covered = Math.max(covered, to);
        }
        current = found;
      }
    }
    return current.filter((i) => ix.flags[i] === 0);
  }
}

/** Splits a group at its positional pseudo-classes. */
function positionalGroup(group: Selector[]): PositionalGroup {
  const at = group.findIndex(isPositional);
  const head = at === 0 ? null : group.slice(0, at);
  const steps: Step[] = [];
  let rest = group.slice(at);
  while (rest.length > 0) {
    if (isPositional(rest[0])) {
      steps.push({ kind: 'position', token: rest[0] });
      rest = rest.slice(1);
      continue;
    }
    const next = rest.findIndex(isPositional);
    const segment = next === -1 ? rest : rest.slice(0, next);
    rest = next === -1 ? [] : rest.slice(next);
    if (!segment.some(isTraversal)) {
      steps.push({ kind: 'filter', test: compileTokens([clone(segment)]) });
    } else {
      // The leftmost element of the follow-up must be one of the current matches.
      const inSet: Selector = { type: SelectorType.Pseudo, name: IN_SET, data: null };
      const siblings = segment[0].type === SelectorType.Adjacent || segment[0].type === SelectorType.Sibling;
      steps.push({ kind: 'search', test: compileTokens([[inSet, ...clone(segment)]]), siblings });
    }
  }
  return { head, steps };
}

/** jQuery's positional filters over matches in document order. */
function byPosition(token: PseudoSelector, els: number[]): number[] {
  const n = typeof token.data === 'string' ? parseInt(token.data, 10) : NaN;
  switch (token.name) {
    case 'first':
      return els.slice(0, 1);
    case 'last':
      return els.slice(-1);
    case 'eq':
    case 'nth':
      return Number.isFinite(n) && Math.abs(n) < els.length ? [els[n < 0 ? els.length + n : n]] : [];
    case 'gt':
      return Number.isFinite(n) ? els.slice(n + 1) : [];
    case 'lt':
      return Number.isFinite(n) ? (n >= 0 ? els.slice(0, n) : els) : [];
    case 'even':
      return els.filter((_, i) => i % 2 === 0);
    case 'odd':
      return els.filter((_, i) => i % 2 === 1);
  }
  return els;
}

/** Deepest bracket/parenthesis nesting outside quotes. */
function nestingDepth(s: string): number {
  let depth = 0;
  let max = 0;
  let quote = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[') max = Math.max(max, ++depth);
    else if ((c === ')' || c === ']') && depth > 0) depth--;
  }
  return max;
}

/** The rules tags named `token` (a `<script data-rules-name>` whose space-separated names include it), in
 *  document order, leaving out any inside a `[cms-template]`. */
export function findRulesTags(ix: DocIndex, token: string): Element[] {
  const out: Element[] = [];
  for (const i of ix.byTag.get('script') ?? []) {
    const el = ix.els[i];
    const names = attribute(el, 'data-rules-name');
    if (names !== undefined && !(ix.flags[i] & IN_CMS_TEMPLATE) && names.split(/[\t\n\f\r ]+/).includes(token))
      out.push(el);
  }
  return out;
}
