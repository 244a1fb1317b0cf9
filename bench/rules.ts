// Rules engine benchmark: `node --import tsx bench/rules.ts [seconds per engine, default 3]`.
// Prints per-call medians of wall and CPU time (process CPU, GC threads included); engines take turns so a busy
// machine slows them alike.
// Builds a ~110 KB document with a 30-rule `api` tag (a dozen scalar rules, :nth-of-type selectors, a 600-item
// list shape) and runs, in this process, on the same inputs: Kiln's engine (parse + extract), Kiln on a cached
// parsed document (extract only), and the reference engine (hyper-html-api over cheerio, parse + extract).
// Then the path the data API takes: the extraction pool (src/data/pool.ts, worker threads), its throughput with
// every task a new document (parse + extract) and with the document parsed already, against the reference.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { clearRulesCaches, extractApi, parseDocument } from '../src/rules/index.ts';
import { loadReference } from '../test/rules.reference.ts';
import { ExtractionPool } from '../src/data/pool.ts';

export const BENCH_RULES = {
  title: 'head title',
  description: 'meta[name="description"]@content',
  canonical: 'link[rel="canonical"]@href',
  heading: 'header h1',
  tagline: 'header .tagline',
  lang: 'html@lang',
  secondNav: 'nav a:nth-of-type(2)',
  secondNavHref: 'nav a:nth-of-type(2)@href',
  thirdSection: 'main section:nth-of-type(3) h2',
  lastSectionIntro: 'main section:last-of-type p:nth-of-type(1)',
  footer: 'footer p',
  updated: 'footer time@datetime',
  author: 'meta[name="author"]@content',
  image: 'meta[property="og:image"]@content',
  skipLink: 'body > a.skip@href',
  stats: { total: '#stats .total', average: '#stats .average', currency: '#stats@data-currency' },
  navLinks: 'nav a[]',
  sectionTitles: 'main section h2[]',
  tableCells: 'table.specs td:nth-of-type(2)[]',
  firstSpecs: ['table.specs tr:nth-of-type(-n+3)', { name: 'td:nth-of-type(1)', value: 'td:nth-of-type(2)' }],
  products: [
    '.products > li.product',
    {
      id: '@data-id',
      name: '.name',
      price: '.price',
      url: 'a.link@href',
      badge: '.badge',
      firstTag: '.tag:nth-of-type(1)',
      tags: '.tag[]',
    },
  ],
};

export function benchDocument(): string {
  const nav = Array.from({ length: 8 }, (_, i) => `<a href="/page-${i}">Page ${i}</a>`).join('\n      ');
  const sections = Array.from(
    { length: 6 },
    (_, s) => `
    <section id="s${s}">
      <h2>Section ${s}</h2>
      ${Array.from({ length: 4 }, (_, p) => `<p>Paragraph ${p} of section ${s}: ${'lorem ipsum dolor sit amet'}</p>`).join('\n      ')}
    </section>`,
  ).join('');
  const rows = Array.from({ length: 20 }, (_, r) => `<tr><td>Spec ${r}</td><td>Value ${r}</td><td>Unit</td></tr>`).join(
    '\n        ',
  );
  const products = Array.from(
    { length: 600 },
    (_, i) =>
      `\n<li class="product" data-id="p${i}"><h3 class="name">Item ${i}</h3><span class="price">${(i * 1.25).toFixed(2)}</span>` +
      `${i % 7 === 0 ? '<b class="badge">new</b>' : ''}<a class="link" href="/p/${i}">go</a>` +
      `<span class="tag">t${i % 5}</span>${i % 2 ? `<span class="tag">k${i % 3}</span>` : ''}</li>`,
  ).join('');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Benchmark catalogue</title>
  <meta name="description" content="A catalogue used to benchmark the rules engine">
  <link rel="canonical" href="https://example.test/catalogue">
  <meta name="author" content="Bench">
  <meta property="og:image" content="https://example.test/cover.png">
  <style>body { font-family: sans-serif } .product { margin: 0 }</style>
  <script type="application/json" data-rules-name="api" data-rules-version="1">${JSON.stringify(BENCH_RULES)}</script>
</head>
<body>
  <a class="skip" href="#main">Skip</a>
  <header>
    <h1>Catalogue</h1>
    <p class="tagline">Everything, listed</p>
    <nav>
      ${nav}
    </nav>
  </header>
  <main id="main">${sections}
    <table class="specs">
      <tbody>
        ${rows}
      </tbody>
    </table>
    <div id="stats" data-currency="EUR"><span class="total">600</span> <span class="average">374.38</span></div>
    <ul class="products">${products}
    </ul>
  </main>
  <footer><p>Made for benchmarks</p><time datetime="2026-01-01">Jan 1</time><small>(c) Bench</small></footer>
  <script>console.log('app code');</script>
</body>
</html>
`;
}

/** Counts leaf rules (strings) in a rules value. */
export function countRules(rules: unknown): number {
  if (typeof rules === 'string') return 1;
  if (Array.isArray(rules)) return countRules(rules[1]);
  if (rules && typeof rules === 'object') return Object.values(rules).reduce((n: number, r) => n + countRules(r), 0);
  return 0;
}

type Engine = { name: string; fn: () => void; times: number[]; cpu: number[] };

/** Runs the engines in turns until `seconds` have passed, timing every call: on a machine shared with other
 *  work, interleaving keeps the comparison fair and the median ignores the calls a load spike hit. */
function measure(seconds: number, engines: Engine[]): void {
  for (const e of engines) for (let i = 0; i < 5; i++) e.fn(); // warm up
  const until = performance.now() + seconds * 1000 * engines.length;
  while (performance.now() < until) {
    for (const e of engines) {
      // Equal time per engine per round: repeat the fast ones.
      const roundEnd = performance.now() + 20;
      do {
        const c = process.cpuUsage();
        const t = performance.now();
        e.fn();
        e.times.push(performance.now() - t);
        const used = process.cpuUsage(c);
        e.cpu.push((used.user + used.system) / 1000);
      } while (performance.now() < roundEnd);
    }
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 3);
  const html = benchDocument();
  const ref = await loadReference();

  const kilnOut = extractApi(html, { maxMs: 10_000 });
  if (!kilnOut.ok) throw new Error(`Kiln failed on the bench document: ${kilnOut.error}`);
  const refOut = ref.extractApi(html);
  const same = JSON.stringify(kilnOut.data) === JSON.stringify(refOut);

  console.log(
    `document: ${(html.length / 1024).toFixed(1)} KB, ${countRules(BENCH_RULES)} rules, ${(kilnOut.data as { products: unknown[] }).products.length} list items`,
  );
  console.log(`outputs identical to the reference: ${same ? 'yes' : 'NO'}`);

  const parsed = parseDocument(html);
  const engine = (name: string, fn: () => void): Engine => ({ name, fn, times: [], cpu: [] });
  const reference = engine('reference: hyper-html-api + cheerio (parse + extract)', () => ref.extractApi(html));
  const kiln = engine('kiln: parse + extract (compiled rules cached)', () => extractApi(html));
  const kilnCold = engine('kiln: parse + compile + extract (no caches)', () => {
    clearRulesCaches();
    extractApi(html);
  });
  const kilnCached = engine('kiln: extract on a cached parsed document', () => extractApi(parsed));
  const parseOnly = engine('kiln: parse only', () => parseDocument(html));
  const all = [reference, kiln, kilnCold, kilnCached, parseOnly];
  measure(seconds, all);

  console.log(
    `${'engine (median per call, calls interleaved)'.padEnd(56)} ${'per s'.padStart(9)} ${'wall ms'.padStart(9)} ${'cpu ms'.padStart(9)} calls`,
  );
  for (const e of all) {
    const m = median(e.times);
    console.log(
      `${e.name.padEnd(56)} ${(1000 / m).toFixed(1).padStart(9)} ${m.toFixed(3).padStart(9)} ${median(e.cpu).toFixed(3).padStart(9)} ${e.times.length}`,
    );
  }
  const ratio = (e: Engine, of: 'times' | 'cpu') => (median(reference[of]) / median(e[of])).toFixed(1);
  console.log(
    `ratio kiln/reference, parse included: ${ratio(kiln, 'times')}x wall, ${ratio(kiln, 'cpu')}x cpu (goal >= 10x)`,
  );
  console.log(
    `ratio kiln/reference, parse + compile, no caches: ${ratio(kilnCold, 'times')}x wall, ${ratio(kilnCold, 'cpu')}x cpu`,
  );
  console.log(
    `ratio kiln on a cached parsed document/reference: ${ratio(kilnCached, 'times')}x wall, ${ratio(kilnCached, 'cpu')}x cpu`,
  );

  // The pool: what the data API runs. Throughput over `seconds`, twice as many tasks in flight as threads.
  const pool = new ExtractionPool();
  try {
    const bytes = Buffer.from(html);
    const rules = { kind: 'api' as const };
    // A fresh thread is slow for its first extractions (compilation): warm up, then check the answer.
    for (let i = 0; i < 20; i++) await pool.run({ checksum: `warm${i}`, bytes, rules });
    const check = await pool.run({ checksum: 'warm0', bytes, rules });
    if (!check.result.ok || JSON.stringify(check.result.data) !== JSON.stringify(kilnOut.data)) {
      throw new Error(`the pool answers differently: ${JSON.stringify(check.result).slice(0, 300)}`);
    }
    // One task in flight, taking turns with the reference as the engines above do (medians per call: the pool's
    // wall time includes handing the bytes to the thread and the answer back; CPU is the process's, the main
    // thread only waits). Then throughput with twice as many tasks in flight as threads.
    const perTask = async (name: string, checksumOf: (i: number) => string) => {
      const times: number[] = [];
      const cpu: number[] = [];
      const refTimes: number[] = [];
      const refCpu: number[] = [];
      let n = 0;
      let tooExpensive = 0;
      const until = performance.now() + seconds * 1000 * 2;
      while (performance.now() < until) {
        let c = process.cpuUsage();
        let t = performance.now();
        ref.extractApi(html);
        refTimes.push(performance.now() - t);
        let used = process.cpuUsage(c);
        refCpu.push((used.user + used.system) / 1000);
        const roundEnd = performance.now() + 200;
        do {
          c = process.cpuUsage();
          t = performance.now();
          const r = await pool.run({ checksum: checksumOf(n++), bytes, rules });
          times.push(performance.now() - t);
          used = process.cpuUsage(c);
          cpu.push((used.user + used.system) / 1000);
          if (!r.result.ok) tooExpensive++;
        } while (performance.now() < roundEnd);
      }
      const wallRatio = median(refTimes) / median(times);
      const cpuRatio = median(refCpu) / median(cpu);
      console.log(
        `${name.padEnd(56)} ${(1000 / median(times)).toFixed(1).padStart(9)} ${median(times).toFixed(3).padStart(9)} ${median(cpu).toFixed(3).padStart(9)} ${times.length}` +
          `   vs reference ${median(refTimes).toFixed(1)} ms: ${wallRatio.toFixed(1)}x wall, ${cpuRatio.toFixed(1)}x cpu` +
          `${tooExpensive ? ` (${tooExpensive} too-expensive: busy machine)` : ''}`,
      );
      return { wallRatio, cpuRatio };
    };
    const throughput = async (checksumOf: (i: number) => string) => {
      let n = 0;
      const until = performance.now() + seconds * 1000;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 2 * pool.threads }, async () => {
          while (performance.now() < until) await pool.run({ checksum: checksumOf(n++), bytes, rules });
        }),
      );
      return n / ((performance.now() - t0) / 1000);
    };
    console.log(
      `pool: ${pool.threads} thread(s) of ${os.availableParallelism()} cores (the document's bytes copied to the thread per task):`,
    );
    const cold = await perTask('pool: parse + extract (a new document every task)', (i) => `new${i}`);
    await perTask('pool: extract on a document the thread has parsed', () => 'same');
    console.log(
      `ratio pool/reference, parse included: ${cold.wallRatio.toFixed(1)}x wall, ${cold.cpuRatio.toFixed(1)}x cpu (goal >= 10x)`,
    );
    const coldRate = await throughput((i) => `again${i}`);
    const hotRate = await throughput(() => 'same');
    console.log(
      `pool throughput, ${2 * pool.threads} tasks in flight: ${coldRate.toFixed(1)} per s parse + extract, ${hotRate.toFixed(1)} per s on a parsed document`,
    );
  } finally {
    await pool.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
