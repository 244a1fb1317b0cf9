// GET /tailwindcss/<name>.css on a document host: the utility stylesheet compiled for the document
// `<name>.html` (or `.htmlclay`). Before the first compile, and for anything unknown, empty CSS with 200.
import type { RoutePlugin } from './plugin.ts';
import { findByPath } from '../../nodes/find.ts';
import { STYLESHEET_PREFIX } from '../../stylesheet/tailwind.ts';
import { allows, resourceOf } from '../../access/authorize.ts';
import { callerOf } from '../share-grant.ts';
import { textParam } from '../io.ts';
import { hostAccount, onlyOn } from '../hosts.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'document');
  app.get(`${STYLESHEET_PREFIX}*`, async (req, reply) => {
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'no-cache');
    const rest = textParam(req, '*');
    if (!rest.endsWith('.css')) return '';
    let name: string;
    try {
      name = decodeURIComponent(rest.slice(0, -4));
    } catch {
      return '';
    }
    for (const ext of ['.html', '.htmlclay']) {
      const node = await findByPath(s, hostAccount(req), name + ext).catch(() => undefined);
      if (node?.type !== 'site') continue;
      // Whoever may view the document (owner, share guest, anyone when public) may read its stylesheet.
      if (!allows(callerOf(req, node), resourceOf(node), 'view')) return '';
      const row = await s.stylesheets.stored(node.id);
      if (!row) return '';
      reply.header('ETag', `"${row.sourceChecksum}"`);
      return row.css;
    }
    return '';
  });
};
export default plugin;
