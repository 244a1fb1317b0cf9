// A rules value (parsed JSON) compiled once into a tree of nodes with their selectors compiled, cached by text.
import { failure, type RulesFailure } from './errors.ts';
import { rulesLimits } from './limits.ts';
import { parseRelaxed } from './relaxed.ts';
import { SelectorQuery } from './selectors.ts';
import { scalarForm } from './syntax.ts';

export type RuleNode =
  | { kind: 'null' } //                                              numbers, booleans, null: always null
  | { kind: 'text'; query: SelectorQuery } //                        "<sel>"
  | { kind: 'self-text' } //                                         "."
  | { kind: 'texts'; query: SelectorQuery } //                       "<sel>[]"
  | { kind: 'read'; query: SelectorQuery | null; name: string } //   "<sel>@<name>", "@<name>" (query null)
  | { kind: 'each'; query: SelectorQuery | null; shape: RuleNode } // ["<sel>", shape] (query null: never matches)
  | { kind: 'object'; entries: ObjectEntry[] }; //                   {key: rule, ...}

/** `omit`: the key `__proto__`, checked like any rule but never in the output (as in the reference). */
export type ObjectEntry = { key: string; node: RuleNode; omit: boolean };

/** Rules ready to run against any document. Opaque to callers; obtained from compileRules/compileRulesText. */
export type CompiledRules = { readonly root: RuleNode; readonly selectors: number };

class Lru<V> {
  private readonly map = new Map<string, V>();
  private readonly size: number;
  constructor(size: number) {
    this.size = size;
  }
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.size) this.map.delete(this.map.keys().next().value as string);
  }
  clear(): void {
    this.map.clear();
  }
}

const selectorCache = new Lru<SelectorQuery | RulesFailure>(rulesLimits.selectorCacheSize);
const rulesCache = new Lru<CompiledRules | RulesFailure>(rulesLimits.rulesCacheSize);

function compileSelector(source: string): SelectorQuery | RulesFailure {
  let q = selectorCache.get(source);
  if (q === undefined) {
    q = SelectorQuery.compile(source);
    selectorCache.set(source, q);
  }
  return q;
}

class CompileError extends Error {
  readonly failure: RulesFailure;
  constructor(failure: RulesFailure) {
    super(failure.error);
    this.failure = failure;
  }
}

function pathText(path: string[]): string {
  return path.length === 0 ? '(root)' : path.join('.').replace(/\.\[\]/g, '[]');
}

type Counter = { nodes: number; selectors: number };

function selectorAt(source: string, path: string[], counter: Counter): SelectorQuery {
  const q = compileSelector(source);
  if (!(q instanceof SelectorQuery)) {
    throw new CompileError({ ...q, error: path.length ? `${q.error} (at ${pathText(path)})` : q.error });
  }
  counter.selectors++;
  return q;
}

function compileNode(rule: unknown, depth: number, path: string[], counter: Counter): RuleNode {
  if (depth > rulesLimits.maxDepth) {
    throw new CompileError(
      failure('rules-depth', `Rules nested too deeply (max depth ${rulesLimits.maxDepth}) at ${pathText(path)}`),
    );
  }
  if (++counter.nodes > rulesLimits.maxRuleNodes) {
    throw new CompileError(failure('too-large', `Too many rules (max ${rulesLimits.maxRuleNodes})`));
  }
  if (typeof rule === 'string') {
    const f = scalarForm(rule);
    switch (f.form) {
      case 'list':
        return { kind: 'texts', query: selectorAt(f.selector, path, counter) };
      case 'read-self':
        return { kind: 'read', query: null, name: f.name };
      case 'read':
        return { kind: 'read', query: selectorAt(f.selector, path, counter), name: f.name };
      case 'self-text':
        return { kind: 'self-text' };
      case 'text':
        return { kind: 'text', query: selectorAt(f.selector, path, counter) };
    }
  }
  if (Array.isArray(rule)) {
    const [selector, shape] = rule as unknown[];
    const query = typeof selector === 'string' && selector !== '' ? selectorAt(selector, path, counter) : null;
    return { kind: 'each', query, shape: compileNode(shape, depth + 1, [...path, '[]'], counter) };
  }
  if (typeof rule === 'object' && rule !== null) {
    const entries: ObjectEntry[] = [];
    for (const [key, sub] of Object.entries(rule)) {
      entries.push({ key, node: compileNode(sub, depth + 1, [...path, key], counter), omit: key === '__proto__' });
    }
    return { kind: 'object', entries };
  }
  return { kind: 'null' };
}

/** Compiles a parsed rules value. Never throws. */
export function compileRules(rules: unknown): { ok: true; rules: CompiledRules } | RulesFailure {
  const counter = { nodes: 0, selectors: 0 };
  try {
    return { ok: true, rules: { root: compileNode(rules, 0, [], counter), selectors: counter.selectors } };
  } catch (err) {
    if (err instanceof CompileError) return err.failure;
    return failure('rules-syntax', `Invalid rules: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Parses (leniently) and compiles rules text, cached by text. Never throws. */
export function compileRulesText(text: string): { ok: true; rules: CompiledRules } | RulesFailure {
  let cached = rulesCache.get(text);
  if (cached === undefined) {
    const parsed = parseRelaxed(text);
    if (!parsed.ok) cached = failure('rules-syntax', `Invalid rules syntax: ${parsed.message}`);
    else {
      const c = compileRules(parsed.value);
      cached = c.ok ? c.rules : c;
    }
    rulesCache.set(text, cached);
  }
  return 'ok' in cached ? cached : { ok: true, rules: cached };
}

/** For tests and benchmarks: forget every compiled selector and rules text. */
export function clearRulesCaches(): void {
  selectorCache.clear();
  rulesCache.clear();
}
