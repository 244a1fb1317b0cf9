// Which document a browser request is about, from its Document-URL / Page-URL header.
import { badRequest } from '../errors.ts';

/** The document path named by a page URL: pathname decoded once, `/` → `index.html`, anything after
 *  a `.html`/`.htmlclay` segment dropped (`/app.html/spa/route` → `app.html`). Query and fragment ignored. */
export function documentPathOf(pageUrl: string): { host: string; path: string } {
  let u: URL;
  try {
    u = new URL(pageUrl);
  } catch {
    throw badRequest('Document-URL must be an absolute URL.', 'bad-document-url');
  }
  let pathname: string;
  try {
    pathname = decodeURIComponent(u.pathname);
  } catch {
    throw badRequest('Document-URL has a malformed path.', 'bad-document-url');
  }
  const segments = pathname.split('/').filter((s) => s !== '');
  const end = segments.findIndex((s) => /\.(html|htmlclay)$/i.test(s));
  const kept = end === -1 ? segments : segments.slice(0, end + 1);
  const path = kept.length === 0 || end === -1 ? [...kept, 'index.html'].join('/') : kept.join('/');
  return { host: u.host.toLowerCase(), path };
}

/** The header a browser library sends to name its document: Document-URL first, then Page-URL. */
export function documentUrlHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers['document-url'] ?? headers['page-url'];
  return Array.isArray(v) ? v[0] : v;
}
