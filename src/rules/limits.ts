// Every bound of the rules engine. The HTTP layer may re-export these from src/limits.ts.
const KB = 1024;
const MB = 1024 * KB;

export const rulesLimits = {
  /** Nesting of rule objects and list shapes; the root rule is at depth 0 and a rule deeper than this is refused. */
  maxDepth: 20,
  /** Length of a `?data=` value, after URL decoding. */
  maxQueryChars: 4 * KB,
  /** Length of an `api` rules tag body. */
  maxTagChars: 64 * KB,
  /** Rule nodes (objects, lists, strings, primitives) in one rules object. */
  maxRuleNodes: 2_000,
  /** Length of one selector. */
  maxSelectorChars: 1 * KB,
  /** Bracket/parenthesis nesting inside one selector (`:not(:is(:has(...)))`). */
  maxSelectorNesting: 16,
  /** Characters of output (texts, attributes, HTML) one extraction may produce. */
  maxOutputChars: 8 * MB,
  /** Units of work one extraction may spend: node visits, ancestor and sibling steps, and one per 32 characters of
   *  output. The deterministic bound: on this project's 2-core test machine a step costs 10-50 ns. */
  maxSteps: 2_000_000,
  /** Time one extraction may spend, checked every 2,048 steps: the backstop for steps that are slow. Wall-clock
   *  time by default; the extraction pool's threads count their CPU time (a busy machine makes an answer later,
   *  not a failure). The bench document's 30 rules take about 2 ms. */
  maxMs: 50,
  /** Time added to a task's budget per MB of document, for parsing it (the data API's one budget covers
   *  parse + extraction): a normal 1 MB document parses in ~130 ms on a quiet 2-core machine, a deeply
   *  nested one of the same size takes seconds. 5 MB (the largest document) gets about a second. */
  parseMsPerMb: 200,
  /** Documents longer than this are not parsed by the string-taking helpers. */
  maxDocumentChars: 16 * MB,
  /** Compiled rules kept in memory, keyed by rules text. */
  rulesCacheSize: 500,
  /** Compiled selectors kept in memory, keyed by selector text. */
  selectorCacheSize: 2_000,
} as const;

export type ExtractLimits = { maxSteps: number; maxMs: number; maxOutputChars: number };
