// Running compiled rules against a parsed document, inside the work budget.
import type { Document } from 'domhandler';
import { budget, spend, unbounded } from './budget.ts';
import type { CompiledRules, RuleNode } from './compile.ts';
import { readNamed, text, type ParentLike } from './dom.ts';
import { failure, RulesAbort, type RulesFailure } from './errors.ts';
import { rulesLimits, type ExtractLimits } from './limits.ts';

export type Json = null | string | Json[] | { [key: string]: Json };

function run(node: RuleNode, ctx: ParentLike): Json {
  switch (node.kind) {
    case 'null':
      spend(4);
      return null;
    case 'text': {
      const [first] = node.query.find(ctx, true);
      if (!first) {
        spend(4);
        return null;
      }
      return text(first);
    }
    case 'self-text':
      return text(ctx);
    case 'texts': {
      const matches = node.query.find(ctx, false);
      spend(matches.length * 3);
      return matches.map(text);
    }
    case 'read': {
      const target = node.query ? node.query.find(ctx, true)[0] : ctx;
      spend(4);
      return target ? readNamed(target, node.name) : null;
    }
    case 'each': {
      if (!node.query) return [];
      const matches = node.query.find(ctx, false);
      spend(matches.length * 3);
      const out: Json[] = new Array(matches.length);
      for (let i = 0; i < matches.length; i++) out[i] = run(node.shape, matches[i]);
      return out;
    }
    case 'object': {
      const out: { [key: string]: Json } = {};
      for (const e of node.entries) {
        if (e.omit) continue;
        spend(e.key.length + 4);
        out[e.key] = run(e.node, ctx);
      }
      return out;
    }
  }
}

/** Runs compiled rules against a document (or an element of one). Never throws. */
export function runRules(
  root: Document | ParentLike,
  rules: CompiledRules,
  limits: Partial<ExtractLimits> = {},
): { ok: true; data: Json } | RulesFailure {
  budget.reset({
    maxSteps: limits.maxSteps ?? rulesLimits.maxSteps,
    maxMs: limits.maxMs ?? rulesLimits.maxMs,
    maxOutputChars: limits.maxOutputChars ?? rulesLimits.maxOutputChars,
  });
  try {
    return { ok: true, data: run(rules.root, root) };
  } catch (err) {
    if (err instanceof RulesAbort) return err.failure;
    if (err instanceof RangeError) return failure('too-expensive', `Extraction too expensive: ${err.message}`);
    // Not expected: a selector engine failure at match time. Still the rules' fault, still a 400.
    return failure('selector', `Extraction failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    unbounded();
  }
}
