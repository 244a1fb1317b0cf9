// The utility stylesheet: a document that links `/tailwindcss/<name>.css` gets Tailwind CSS v4
// compiled from the classes it uses. Pure helpers here; compile() is the only call into Tailwind.
import { ROOT } from '../paths.ts';

/** The href a document uses to link its utility stylesheet (the reference service's convention). */
export const STYLESHEET_PREFIX = '/tailwindcss/';
const LINK = /<link\b[^>]*\bhref\s*=\s*["']?\/tailwindcss\/[^"'\s>]+\.css/i;

export function linksUtilityStylesheet(html: string): boolean {
  return LINK.test(html);
}

/** Every token that could be a utility class. Tailwind ignores the ones that are not. */
export function candidates(html: string): string[] {
  const out = new Set<string>();
  for (const m of html.matchAll(/[^<>"'`\s=]+/g)) {
    const t = m[0];
    if (t.length <= 100) out.add(t);
  }
  return [...out];
}

/** Tailwind resolves `@import "tailwindcss"` from the package root. */
const BASE = ROOT;

// Tailwind is imported at the first compile, not at start: it costs almost half a second of CPU to load,
// and a process that compiles no stylesheet (most starts, every CLI command) never needs it.
let tailwind: Promise<typeof import('@tailwindcss/node')> | undefined;
const loadTailwind = () => (tailwind ??= import('@tailwindcss/node'));

/** Compiles the stylesheet for one document's HTML. A fresh compiler each time: builds accumulate. */
export async function compileUtilityCss(html: string): Promise<string> {
  const { compile } = await loadTailwind();
  const compiler = await compile('@import "tailwindcss";', { base: BASE, onDependency: () => {} });
  return compiler.build(candidates(html));
}
