// One thread of the extraction pool (src/data/pool.ts): parses a document and runs rules on it, under one time
// budget that covers both, and answers the pool. It keeps its own small LRU of parsed documents by checksum
// (a checksum names exact bytes, so an entry is never stale); the pool routes a document back to the thread
// that parsed it last when that thread is free.
//
// Run as a worker only: from src/ (as it is on Node 24; through tsx, which the pool registers first, on
// Node 22), or as dist/extract-worker.mjs (scripts/build.ts bundles it next to dist/kiln.mjs).
import { parentPort, workerData } from 'node:worker_threads';
import {
  compileRulesText,
  extract,
  findRulesTag,
  parseDocumentWithin,
  type Deadline,
  type ParsedDocument,
  type CompiledRules,
} from '../rules/index.ts';
import type { ExtractWorkerData, PoolReply, PoolTask } from './pool.ts';
import { cpuDeadline, currentThreadId } from './thread-priority.ts';

/** A parsed tree takes about 16 bytes of heap per source character (measured on the bench document):
 *  4 M characters of source is about 64 MB per thread. */
const MAX_SOURCE_CHARS = 4 * 1024 * 1024;
const MAX_ENTRIES = 256;

const parsed = new Map<string, ParsedDocument>();
let sourceChars = 0;
/** Checksums parsed once lately: a document is kept only when it is asked for a second time, so documents asked
 *  once do not push out the ones asked often, nor cost the collector a retained tree each (measured: a thread
 *  parsing a new 110 KB document per task spent 10-15% more CPU when it kept them all). */
const seenOnce = new Set<string>();
const MAX_SEEN = 1024;

function remember(checksum: string, doc: ParsedDocument) {
  if (doc.chars > MAX_SOURCE_CHARS / 2) return;
  if (!seenOnce.delete(checksum)) {
    seenOnce.add(checksum);
    if (seenOnce.size > MAX_SEEN) seenOnce.delete(seenOnce.values().next().value!);
    return;
  }
  parsed.set(checksum, doc);
  sourceChars += doc.chars;
  for (const [k, v] of parsed) {
    if (sourceChars <= MAX_SOURCE_CHARS && parsed.size <= MAX_ENTRIES) break;
    parsed.delete(k);
    sourceChars -= v.chars;
  }
}

function cachedDocument(checksum: string): ParsedDocument | undefined {
  const hit = parsed.get(checksum);
  if (hit) {
    parsed.delete(checksum);
    parsed.set(checksum, hit);
  }
  return hit;
}

const decoder = new TextDecoder();

/** Set by the pool when it has answered the current task over budget (none when run outside a pool). */
const stop = (workerData as ExtractWorkerData | null)?.stop;

/** This thread's CPU-time budget for a task, ended early when the pool says stop. */
function taskDeadline(maxMs: number): Deadline {
  const own = cpuDeadline(maxMs);
  if (!stop) return own;
  return { passed: () => Atomics.load(stop, 0) === 1 || own.passed() };
}

/** Parse (or reuse) + find and compile the rules + extract, all inside `task.maxMs` of this thread's CPU time
 *  from the start. */
export function run(task: PoolTask, onParse?: () => void): PoolReply {
  const deadline = taskDeadline(task.maxMs);
  // `?data=` rules first: bad rules answer without parsing (the pool's caller compiled them once already;
  // this is the thread's own compiled-rules cache).
  const query = task.rules.kind === 'query' ? compileRulesText(task.rules.text) : null;
  if (query && !query.ok) return { result: query, cached: false };
  let doc = cachedDocument(task.checksum);
  const wasCached = !!doc;
  if (!doc) {
    onParse?.();
    const d = parseDocumentWithin(decoder.decode(task.bytes), task.maxMs, deadline);
    if ('ok' in d) return { result: d, cached: false, phase: 'parse' };
    doc = d;
    remember(task.checksum, doc);
  }
  let rules: CompiledRules;
  if (query) rules = query.rules;
  else {
    const tag = findRulesTag(doc, 'api');
    if (!tag.ok) return { result: tag, cached: wasCached };
    const compiled = compileRulesText(tag.text);
    if (!compiled.ok) return { result: compiled, cached: wasCached };
    rules = compiled.rules;
  }
  return { result: extract(doc, rules, { maxMs: task.maxMs }, deadline), cached: wasCached };
}

if (parentPort) {
  const port = parentPort;
  // A fresh thread compiles the parser and the selector engine on its first tasks, which can take longer than
  // the budget: warm them up before taking tasks.
  const sample = new TextEncoder().encode(
    '<!doctype html><html><head><title>t</title><script type="application/json" data-rules-name="api" data-rules-version="1">{"t": "title", "l": ["li", {"a": "a@href", "b": "b"}]}</script></head>' +
      '<body>' +
      '<ul><li><a href="/x">x</a><b>y</b></li></ul>'.repeat(50) +
      '</body></html>',
  );
  for (let i = 0; i < 5; i++) {
    run({ checksum: `warm-up-${i}`, bytes: sample, rules: { kind: 'api' }, maxMs: 1e9 });
    run({
      checksum: `warm-up-${i}`,
      bytes: sample,
      rules: { kind: 'query', text: `{h: 'ul > li:nth-of-type(2) a@href', n${i}: b}` },
      maxMs: 1e9,
    });
  }
  parsed.clear();
  seenOnce.clear();
  sourceChars = 0;
  port.on('message', (task: PoolTask) => {
    let reply: PoolReply;
    try {
      reply = run(task, () => port.postMessage('parsing'));
    } catch (err) {
      // Not expected (the engine never throws); a stack overflow while parsing a deep tree is the likely one.
      const tooDeep = err instanceof RangeError;
      reply = {
        result: tooDeep
          ? { ok: false, status: 400, code: 'too-expensive', error: `Extraction too expensive: ${err.message}` }
          : {
              ok: false,
              status: 400,
              code: 'selector',
              error: `Extraction failed: ${err instanceof Error ? err.message : String(err)}`,
            },
        cached: false,
      };
    }
    port.postMessage(reply);
  });
  port.postMessage({ ready: true, tid: currentThreadId() });
}
