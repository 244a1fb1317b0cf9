// What every route file exports: a Fastify plugin given the services (src/http/routes/index.ts registers them).
// Its `app` takes zod schemas on routes and types their parsed input (src/http/schema.ts).
import type { FastifyPluginAsync, RawServerDefault } from 'fastify';
import type { HttpServices } from '../services.ts';
import type { ZodProvider } from '../schema.ts';

export type RoutePlugin = FastifyPluginAsync<{ services: HttpServices }, RawServerDefault, ZodProvider>;
