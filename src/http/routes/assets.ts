// Front-end files Kiln serves on every host, so documents need no CDN: the hyperclayjs browser library
// (npm package, at /_/hyperclayjs/src/hyperclay.js?preset=…) and the code editor bundle.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { ROOT } from '../../paths.ts';
import { createRequire } from 'node:module';
import fastifyStatic from '@fastify/static';
import type { RoutePlugin } from './plugin.ts';
import { editorBundle } from '../../ui/assets.ts';

// The owner's toolbar on documents (src/ui/toolbar.ts), read once.
const TOOLBAR_JS = readFileSync(path.join(ROOT, 'src/ui/client/toolbar.js'));

// The package's main file is src/hyperclay.js; its folder holds every module the loader imports.
const HYPERCLAYJS_SRC = path.dirname(createRequire(import.meta.url).resolve('hyperclayjs'));

const plugin: RoutePlugin = async (app) => {
  await app.register(fastifyStatic, {
    root: HYPERCLAYJS_SRC,
    prefix: '/_/hyperclayjs/src/',
    decorateReply: false,
    index: false,
    dotfiles: 'deny',
    maxAge: '1h',
  });

  app.get('/_/assets/toolbar.js', async (_req, reply) => {
    reply.header('Cache-Control', 'public, max-age=3600').type('text/javascript; charset=utf-8');
    return TOOLBAR_JS;
  });

  app.get('/_/assets/editor.js', async (_req, reply) => {
    reply.header('Cache-Control', 'public, max-age=3600').type('text/javascript; charset=utf-8');
    return editorBundle();
  });
};
export default plugin;
