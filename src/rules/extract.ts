// Running compiled rules against a parsed document, inside the work budget.
import type { AnyNode } from 'domhandler';
import { budget, spend, unbounded, type Deadline } from './budget.ts';
import type { CompiledRules, RuleNode } from './compile.ts';
import type { DocIndex } from './doc-index.ts';
import { readNamed, text } from './dom.ts';
import { failure, RulesAbort, type RulesFailure } from './errors.ts';
import { rulesLimits, type ExtractLimits } from './limits.ts';

export type Json = null | string | Json[] | { [key: string]: Json };

// No closures inside run(): under tsx every function expression is wrapped (keepNames) at each evaluation.
function at(ix: DocIndex, i: number): AnyNode {
  return i < 0 ? ix.doc : ix.els[i];
}

/** `ctx`: the current root as an index into ix.els, -1 for the document. */
function run(node: RuleNode, ix: DocIndex, ctx: number): Json {
  switch (node.kind) {
    case 'null':
      spend(4);
      return null;
    case 'text': {
      const [first] = node.query.find(ix, ctx, true);
      if (first === undefined) {
        spend(4);
        return null;
      }
      return text(ix.els[first]);
    }
    case 'self-text':
      return text(at(ix, ctx));
    case 'texts': {
      const matches = node.query.find(ix, ctx, false);
      spend(matches.length * 3);
      const out: Json[] = new Array(matches.length);
      for (let k = 0; k < matches.length; k++) out[k] = text(ix.els[matches[k]]);
      return out;
    }
    case 'read': {
      spend(4);
      if (!node.query) return readNamed(at(ix, ctx), node.name);
      const [first] = node.query.find(ix, ctx, true);
      return first === undefined ? null : readNamed(ix.els[first], node.name);
    }
    case 'each': {
      if (!node.query) return [];
      const matches = node.query.find(ix, ctx, false);
      spend(matches.length * 3);
      const out: Json[] = new Array(matches.length);
      for (let k = 0; k < matches.length; k++) out[k] = run(node.shape, ix, matches[k]);
      return out;
    }
    case 'object': {
      const out: { [key: string]: Json } = {};
      for (const e of node.entries) {
        if (e.omit) continue;
        spend(e.key.length + 4);
        out[e.key] = run(e.node, ix, ctx);
      }
      return out;
    }
  }
}

/** Runs compiled rules against an indexed document. Never throws. `deadline` (default: `maxMs` of wall-clock
 *  time from now) says when `maxMs` ran out. */
export function runRules(
  ix: DocIndex,
  rules: CompiledRules,
  limits: Partial<ExtractLimits> = {},
  deadline?: Deadline,
): { ok: true; data: Json } | RulesFailure {
  budget.reset(
    {
      maxSteps: limits.maxSteps ?? rulesLimits.maxSteps,
      maxMs: limits.maxMs ?? rulesLimits.maxMs,
      maxOutputChars: limits.maxOutputChars ?? rulesLimits.maxOutputChars,
    },
    deadline,
  );
  try {
    return { ok: true, data: run(rules.root, ix, -1) };
  } catch (err) {
    if (err instanceof RulesAbort) return err.failure;
    if (err instanceof RangeError) return failure('too-expensive', `Extraction too expensive: ${err.message}`);
    // Not expected: a selector engine failure at match time. Still the rules' fault, still a 400.
    return failure('selector', `Extraction failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    unbounded();
  }
}
