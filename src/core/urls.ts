// Public URLs of hosts and nodes.
import type { Config } from '../config.ts';

/** `http://alice.kiln.localhost:8080` — the scheme follows BASE_URL. */
export function documentHostUrl(config: Config, username: string): string {
  const scheme = config.secure ? 'https' : 'http';
  return `${scheme}://${username}.${config.rootDomain}`;
}

/** `/folder/sub/name.html`, each segment percent-encoded. */
export function nodeUrlPath(node: { path: string; name: string }): string {
  const segments = [...(node.path ? node.path.split('/') : []), node.name];
  return `/${segments.map(encodeURIComponent).join('/')}`;
}

/** The origin of a document host: `<username>.<root>` as above, or a custom domain (https when BASE_URL
 *  is; the root domain's port, if it has one, since every host is served by the same listener). */
export function hostOrigin(
  config: Config,
  site: { kind: 'account' | 'domain'; username: string; domain?: string },
): string {
  if (site.kind === 'account') return documentHostUrl(config, site.username);
  const scheme = config.secure ? 'https' : 'http';
  const port = /:\d+$/.exec(config.rootDomain)?.[0] ?? '';
  return `${scheme}://${site.domain}${port}`;
}
