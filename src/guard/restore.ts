// Writing data back into a page: the guard's "restore my data" puts the destroyed `api` data into the
// current page through the page's own rules (hyper-html-api's `apply`, the engine Hyperclay restores with),
// so everything else the page has now stays. Loaded on first use: only restores need it.

/** The page with `data` written through its `api` rules, or null when the rules cannot take it (no rules tag,
 *  a list with nothing to clone, data of another shape). The caller checks the result extracts to `data`. */
export async function withData(html: string, data: unknown): Promise<string | null> {
  // The package ships no types: what is used of it.
  type Engine = {
    bind(adapter: unknown, root: unknown, token: string, opts: object): { set(data: unknown): void };
  };
  const [{ load }, engine, adapter] = await Promise.all([
    import('cheerio'),
    import('hyper-html-api/engine' as string) as Promise<Engine>,
    import('hyper-html-api/cheerio' as string) as Promise<{ default: unknown }>,
  ]);
  try {
    const $ = load(html);
    // A list emptied since can grow back from its `cms-template` seed, as hyper-html-api's CMS grows lists.
    engine.bind(adapter.default, $.root(), 'api', { templateAttr: 'cms-template' }).set(data);
    return $.html();
  } catch {
    return null;
  }
}
