// GET /tailwindcss/<name>.css on a document host: the utility stylesheet compiled for the document
// `<name>.html` (or `.htmlclay`). Before the first compile, and for anything unknown, empty CSS with 200.
import type { RoutePlugin } from './plugin.ts';
import { z } from 'zod';
import { STYLESHEET_PREFIX } from '../../stylesheet/tailwind.ts';
import { stylesheetOf } from '../../stylesheet/serve.ts';
import { onlyOn } from '../hosts.ts';

const params = z.object({ '*': z.string() });

const plugin: RoutePlugin = async (app) => {
  onlyOn(app, 'document');
  app.get(`${STYLESHEET_PREFIX}*`, { schema: { params } }, async (req, reply) => {
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'no-cache');
    const rest = req.params['*'];
    if (!rest.endsWith('.css')) return '';
    let name: string;
    try {
      name = decodeURIComponent(rest.slice(0, -4));
    } catch {
      return '';
    }
    const row = await stylesheetOf(req.ctx, { name });
    if (!row) return '';
    reply.header('ETag', `"${row.sourceChecksum}"`);
    return row.css;
  });
};
export default plugin;
