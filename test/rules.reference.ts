// The reference engine (hyper-html-api over cheerio, dev-dependencies) for the differential tests and the bench.
// Loaded through untyped dynamic imports: the package ships no types.
/* eslint-disable @typescript-eslint/no-explicit-any */

export type Reference = {
  /** Rules from the query face: relaxed text, extracted from the whole document. Throws what the engine throws. */
  extractData(html: string, rulesText: string): unknown;
  /** Rules from the document's `api` tag. Throws on a missing tag (`NoRulesTag`) and what the engine throws. */
  extractApi(html: string): unknown;
  /** The reference's relaxed parser. Throws RulesParseError. */
  parseRelaxed(text: string): unknown;
};

export async function loadReference(): Promise<Reference> {
  const engine: any = await import('hyper-html-api/engine' as string);
  const adapter: any = (await import('hyper-html-api/cheerio' as string)).default;
  const cheerio: any = await import('cheerio' as string);
  return {
    extractData(html, rulesText) {
      const $ = cheerio.load(html);
      return engine.extract(adapter, $.root(), engine.parseRelaxed(rulesText));
    },
    extractApi(html) {
      const $ = cheerio.load(html);
      const found = engine.findRulesIn(adapter, $.root(), 'api');
      if (!found) throw Object.assign(new Error('no script[data-rules-name~="api"]'), { name: 'NoRulesTag' });
      return engine.extract(adapter, $.root(), found.rules);
    },
    parseRelaxed: (text) => engine.parseRelaxed(text),
  };
}
