/**
 * Benchmarks for the pure save core: formathtml, version diffs, version storage, reconstruction.
 * Run: node --import tsx bench/save-core.ts
 * No database, no HTTP: these are the CPU costs a save adds on top of the transaction.
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { formatHtml } from '../src/save/formathtml.ts';
import {
  decodeUtf8Exact,
  isSnapshot,
  makeDiff,
  packSnapshot,
  planVersion,
  reconstruct,
  unpackSnapshot,
} from '../src/save/versions.ts';

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(1234);
const int = (n: number) => Math.floor(rnd() * n);
const WORDS = ['task', 'note', 'buy milk', 'call Ana', 'ship it', 'review', 'café', 'draft', '✓ done', 'later'];

/** A document shaped like a saved single-file app: head with style/script, a long list of cards. */
function makeDocument(targetBytes: number, formathtml: boolean): string {
  const head =
    `<!DOCTYPE html>\n<html lang="en"${formathtml ? ' formathtml="true"' : ''}>\n<head>\n  <meta charset="utf-8">\n` +
    '  <title>Tasks</title>\n  <link rel="stylesheet" href="/tailwindcss/app.css">\n' +
    '  <style>\n    .card > h2 { font-weight: 600 }\n  </style>\n</head>\n<body class="p-4">\n  <ul id="list">\n';
  const tail = '  </ul>\n  <script>\n    if (a < b) { save() }\n  </script>\n</body>\n</html>\n';
  let body = '';
  let i = 0;
  while (head.length + body.length + tail.length < targetBytes) {
    const w = WORDS[int(WORDS.length)];
    body +=
      `    <li class="card flex items-center gap-2 rounded border p-2" data-id="${i}">` +
      `<input type="checkbox"${int(2) ? ' checked' : ''}><span contenteditable>${w} ${i}</span>` +
      `<button onclick="remove(${i})">×</button></li>\n`;
    i++;
  }
  return head + body + tail;
}

/** A small edit, as a browser save makes it: a few characters changed somewhere. */
function smallEdit(doc: string): string {
  const at = int(doc.length - 20);
  const kind = int(3);
  if (kind === 0) return doc.slice(0, at) + WORDS[int(WORDS.length)] + doc.slice(at);
  if (kind === 1) return doc.slice(0, at) + doc.slice(at + 1 + int(8));
  return `${doc.slice(0, at)}x${doc.slice(at + 1)}`;
}

const sha256 = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');
const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
const ms = (n: number) => `${n.toFixed(3)} ms`;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} (timings are wall-clock on this machine)`,
);

// --- formathtml ------------------------------------------------------------------
{
  const doc = makeDocument(100 * 1024, true);
  const plain = doc.replace(' formathtml="true"', '');
  for (let i = 0; i < 20; i++) formatHtml(doc);
  const times: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    formatHtml(doc);
    times.push(performance.now() - t);
  }
  const t = performance.now();
  for (let i = 0; i < 50; i++) formatHtml(plain);
  const plainTime = (performance.now() - t) / 50;
  console.log(
    `formathtml ${kb(doc.length)}: median ${ms(percentile(times, 0.5))}, p95 ${ms(percentile(times, 0.95))}; ` +
      `without the attribute ${ms(plainTime)}`,
  );
}

// --- diff time per small edit on 100 KB ----------------------------------------------------
{
  let doc = makeDocument(100 * 1024, false);
  for (let i = 0; i < 200; i++) makeDiff(doc, smallEdit(doc)); // warm up
  const times: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const next = smallEdit(doc);
    const t = performance.now();
    makeDiff(doc, next);
    times.push(performance.now() - t);
    doc = next;
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(
    `diff per small edit on ${kb(doc.length)}: mean ${ms(mean)}, p99 ${ms(percentile(times, 0.99))}, ` +
      `max ${ms(Math.max(...times))} (diff alone would allow ${Math.floor(1000 / mean)} saves/s)`,
  );
  // Whole version step as the pipeline runs it: UTF-8 check of both sides + diff (+ gzip on snapshots).
  const prevBytes = new Uint8Array(Buffer.from(doc));
  const steps: number[] = [];
  for (let n = 2; n <= 201; n++) {
    const nextBytes = new Uint8Array(Buffer.from(smallEdit(doc)));
    const t = performance.now();
    const plan = planVersion(n, prevBytes, nextBytes);
    if (!plan.isDiff) packSnapshot(nextBytes);
    steps.push(performance.now() - t);
  }
  console.log(
    `version step (planVersion incl. UTF-8 checks, gzip on every 20th): mean ${ms(steps.reduce((a, b) => a + b, 0) / steps.length)}`,
  );
}

// --- storage for 1,000 small edits vs 1,000 full copies ---------------------------------------
{
  let doc = makeDocument(100 * 1024, false);
  let full = 0;
  let raw = 0;
  let packed = 0;
  let diffs = 0;
  let snapshots = 0;
  for (let n = 1; n <= 1000; n++) {
    const next = smallEdit(doc);
    const bytes = Buffer.byteLength(next);
    full += bytes;
    if (isSnapshot(n)) {
      snapshots++;
      raw += bytes;
      packed += packSnapshot(new Uint8Array(Buffer.from(next))).length;
    } else {
      const d = Buffer.byteLength(makeDiff(doc, next));
      diffs += d;
      raw += d;
      packed += d;
    }
    doc = next;
  }
  const pct = (x: number) => `${((100 * x) / full).toFixed(2)}%`;
  console.log(
    `storage for 1,000 small edits of ${kb(doc.length)}: ${snapshots} snapshots + ${1000 - snapshots} diffs ` +
      `(diffs ${kb(diffs)}, mean ${(diffs / (1000 - snapshots)).toFixed(0)} B); ` +
      `share of 1,000 full copies: ${pct(raw)} with raw snapshots, ${pct(packed)} with gzip-packed snapshots`,
  );
}

// --- slowest reconstruction of a 1 MB document ------------------------------------------------
{
  let doc = makeDocument(1024 * 1024, false);
  type Row = { n: number; html: Uint8Array | null; diff: string | null; hash: string };
  const rows: Row[] = [];
  let prev: Uint8Array | null = null;
  for (let n = 1; n <= 60; n++) {
    if (n > 1) doc = smallEdit(doc);
    const bytes = new Uint8Array(Buffer.from(doc));
    const plan = planVersion(n, prev, bytes);
    rows.push({
      n,
      html: plan.isDiff ? null : packSnapshot(bytes),
      diff: plan.isDiff ? plan.diffContent : null,
      hash: sha256(bytes),
    });
    prev = bytes;
  }
  const read = (row: Row): { core: number; total: number } => {
    const t0 = performance.now();
    let snapIndex = row.n - 1;
    while (rows[snapIndex]!.html === null) snapIndex--;
    const base = decodeUtf8Exact(unpackSnapshot(rows[snapIndex]!.html!))!;
    const chain = rows.slice(snapIndex + 1, row.n).map((r) => r.diff!);
    const t1 = performance.now();
    const text = reconstruct(base, chain);
    const t2 = performance.now();
    if (sha256(text) !== row.hash) throw new Error(`version ${row.n} does not match its hash`);
    return { core: t2 - t1, total: performance.now() - t0 };
  };
  for (const row of rows) read(row); // warm up
  let worstCore = { n: 0, t: 0 };
  let worstTotal = { n: 0, t: 0 };
  for (const row of rows) {
    // Best of 5 per version, to keep other processes' noise out; then the slowest version.
    let core = Infinity;
    let total = Infinity;
    for (let k = 0; k < 5; k++) {
      const r = read(row);
      core = Math.min(core, r.core);
      total = Math.min(total, r.total);
    }
    if (core > worstCore.t) worstCore = { n: row.n, t: core };
    if (total > worstTotal.t) worstTotal = { n: row.n, t: total };
  }
  console.log(
    `slowest reconstruction of a ${kb(doc.length)} document (versions 1–60, up to 19 diffs): ` +
      `apply diffs ${ms(worstCore.t)} (version ${worstCore.n}); ` +
      `with gunzip + UTF-8 decode + SHA-256 check ${ms(worstTotal.t)} (version ${worstTotal.n})`,
  );
}
