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
  return '/' + segments.map(encodeURIComponent).join('/');
}
