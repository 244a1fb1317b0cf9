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
import { compile } from 'css-select';
import { parse, SelectorType, type Selector, type PseudoSelector } from 'css-what';
import type { AnyNode, Element } from 'domhandler';
import { removeSubsets, uniqueSort } from 'domutils';
import { tick, ticks } from './budget.ts';
import { attribute, isElement, textContent, type ParentLike } from './dom.ts';
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

function compileTokens(groups: Selector[][]): Compiled {
  const scope: AnyNode[] = [PLACEHOLDER];
  const set = { current: new Set<AnyNode>() as ReadonlySet<AnyNode> };
  const test = compile<AnyNode, Element>(groups, {
    xmlMode: false,
    adapter,
    cacheResults: false, // results depend on the current root and set
    relativeSelector: false, // the scope is spelled out by the caller
    pseudos: { [IN_SET]: (el: Element) => set.current.has(el) },
  }, scope) as Test;
  return { test, scope, set };
}
const PLACEHOLDER = {} as AnyNode;

/** Whether the parse tree has this pseudo-class anywhere inside `:not()`, `:is()`, `:has()`... */
function nestedTokens(tokens: Selector[], visit: (t: Selector) => void): void {
  for (const t of tokens) {
    if (t.type === SelectorType.Pseudo && Array.isArray(t.data)) for (const g of t.data) { for (const n of g) visit(n); nestedTokens(g, visit); }
  }
}

type Step = { kind: 'position'; token: PseudoSelector } | { kind: 'filter'; test: Compiled } | { kind: 'search'; test: Compiled; siblings: boolean };

/** A selector group with positional pseudo-classes: a head query, then position filters and follow-up queries. */
type PositionalGroup = { head: Selector[] | null; steps: Step[]; scoped?: Compiled; unscoped?: Compiled };

const clone = (tokens: Selector[]): Selector[] => structuredClone(tokens);

function scopedTokens(group: Selector[], scoped: boolean): Selector[] {
  const tokens = clone(group);
  if (tokens.length > 0 && isTraversal(tokens[0])) return [{ ...SCOPE }, ...tokens];
  if (!scoped || tokens.some((t) => t.type === SelectorType.Pseudo && t.name === 'scope')) return tokens;
  return [{ ...SCOPE }, { ...DESCENDANT }, ...tokens];
}

export class SelectorQuery {
  readonly source: string;
  private readonly plain: Selector[][];
  private readonly positional: PositionalGroup[];
  private readonly includeSelf: boolean;
  private readonly includeNextSiblings: boolean;
  private scopedTest: Compiled | null = null;
  private unscopedTest: Compiled | null = null;

  private constructor(source: string, plain: Selector[][], positional: PositionalGroup[]) {
    this.source = source;
    this.plain = plain;
    this.positional = positional;
    this.includeSelf = /^\s*(?:[+~]|:scope\b)/.test(source);
    this.includeNextSiblings = /^\s*[+~]/.test(source);
  }

  /** Parses and compiles `source`, or says why not. Never throws. */
  static compile(source: string): SelectorQuery | RulesFailure {
    const shown = JSON.stringify(source.length > 80 ? source.slice(0, 80) + '…' : source);
    if (source.length > rulesLimits.maxSelectorChars) {
      return failure('too-large', `Selector too long (max ${rulesLimits.maxSelectorChars} characters): ${shown}`);
    }
    if (nestingDepth(source) > rulesLimits.maxSelectorNesting) {
      return failure('selector', `Invalid selector ${shown}: nested deeper than ${rulesLimits.maxSelectorNesting} brackets`);
    }
    try {
      const groups = parse(source);
      const plain: Selector[][] = [];
      const positional: PositionalGroup[] = [];
      for (const group of groups) {
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

  /** Matches under `root` in document order (only the first when `first`). */
  find(root: ParentLike, first: boolean): Element[] {
    const scoped = isElement(root) && root.parent !== null && isElement(root.parent);
    const results: Element[][] = [];
    const plain = this.compiled(scoped);
    if (plain) {
      plain.scope[0] = root;
      const out: Element[] = [];
      search(plain.test, this.candidates(root), first && this.positional.length === 0, out, true);
      results.push(out);
    }
    for (const g of this.positional) results.push(this.findPositional(g, root, scoped));
    const nonEmpty = results.filter((r) => r.length > 0);
    if (nonEmpty.length === 0) return [];
    const all = nonEmpty.length === 1 ? nonEmpty[0] : (uniqueSort(nonEmpty.flat()) as Element[]);
    return first ? all.slice(0, 1) : all;
  }

  /** The lists whose members (and their subtrees) are searched, in document order. */
  private candidates(root: ParentLike): AnyNode[][] {
    const lists: AnyNode[][] = [];
    if (this.includeSelf && isElement(root)) lists.push([root]);
    else lists.push(root.children as AnyNode[]);
    if (this.includeNextSiblings && root.parent) {
      const siblings = root.parent.children as AnyNode[];
      const at = siblings.indexOf(root as AnyNode);
      if (at !== -1 && at + 1 < siblings.length) lists.push(siblings.slice(at + 1));
    }
    return lists;
  }

  private findPositional(g: PositionalGroup, root: ParentLike, scoped: boolean): Element[] {
    let current: Element[];
    if (g.head === null) {
      // A group that starts with a positional (`:first`): the root's element children.
      current = (this.includeSelf && isElement(root) ? [root] : (root.children as AnyNode[])).filter(isElement);
    } else {
      const head = scoped ? (g.scoped ??= compileTokens([scopedTokens(g.head, true)])) : g.unscoped!;
      head.scope[0] = root;
      current = [];
      search(head.test, this.candidates(root), false, current, false);
    }
    for (const step of g.steps) {
      if (current.length === 0) break;
      if (step.kind === 'position') current = byPosition(step.token, current);
      else if (step.kind === 'filter') {
        ticks(current.length);
        current = current.filter(step.test.test);
      } else {
        step.test.set.current = new Set(current);
        let roots: AnyNode[] = current;
        if (step.siblings) {
          roots = [...current];
          for (const el of current) {
            const siblings = el.parent ? (el.parent.children as AnyNode[]) : [];
            roots.push(...siblings.slice(siblings.indexOf(el) + 1).filter(isElement));
          }
        }
        const found: Element[] = [];
        search(step.test.test, [removeSubsets(roots)], false, found, false);
        current = found;
      }
    }
    return current.filter((el) => !excluded(el));
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
function byPosition(token: PseudoSelector, els: Element[]): Element[] {
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

const isRulesTag = (el: Element) => el.name === 'script' && Object.hasOwn(el.attribs, 'data-rules-name');
const isCmsTemplate = (el: Element) => Object.hasOwn(el.attribs, 'cms-template');

/** Whether `el` is never a match: a rules tag, or inside (or itself) a `[cms-template]` element. */
function excluded(el: Element): boolean {
  if (isRulesTag(el)) return true;
  for (let node: AnyNode | null = el; node && isElement(node); node = node.parent) {
    tick();
    if (isCmsTemplate(node)) return true;
  }
  return false;
}

/**
 * Depth-first over the members of `lists` and their subtrees, in document order, collecting elements that pass
 * `test`. `<template>` content is never entered. With `skipExcluded`, `[cms-template]` subtrees are not entered
 * and rules tags are not collected (the caller's root is known not to be inside a cms-template).
 */
function search(test: Test, lists: AnyNode[][], first: boolean, out: Element[], skipExcluded: boolean): void {
  const stack: AnyNode[][] = [];
  const index: number[] = [];
  for (let l = lists.length - 1; l >= 0; l--) {
    stack.push(lists[l]);
    index.push(0);
  }
  while (stack.length > 0) {
    const top = stack.length - 1;
    const list = stack[top];
    const i = index[top];
    if (i >= list.length) {
      stack.pop();
      index.pop();
      continue;
    }
    index[top] = i + 1;
    const node = list[i];
    tick();
    if (!isElement(node)) continue;
    if (skipExcluded && isCmsTemplate(node)) continue;
    if (test(node) && !(skipExcluded && isRulesTag(node))) {
      out.push(node);
      if (first) return;
    }
    if (node.name !== 'template' && node.children.length > 0) {
      stack.push(node.children);
      index.push(0);
    }
  }
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

/** Finds the rules tags named `token` in the document, in document order (the engine never matches them). */
export function findRulesTags(root: ParentLike, token: string): Element[] {
  const out: Element[] = [];
  const stack: AnyNode[][] = [root.children as AnyNode[]];
  const index: number[] = [0];
  while (stack.length > 0) {
    const top = stack.length - 1;
    const list = stack[top];
    if (index[top] >= list.length) {
      stack.pop();
      index.pop();
      continue;
    }
    const node = list[index[top]++];
    if (!isElement(node) || isCmsTemplate(node)) continue;
    if (node.name === 'script') {
      const names = node.attribs['data-rules-name'];
      if (names !== undefined && Object.hasOwn(node.attribs, 'data-rules-name') && names.split(/[\t\n\f\r ]+/).includes(token)) out.push(node);
    }
    if (node.name !== 'template' && node.children.length > 0) {
      stack.push(node.children);
      index.push(0);
    }
  }
  return out;
}
