// What every route file exports: a Fastify plugin given the services (src/http/routes/index.ts registers them).
import type { FastifyPluginAsync } from 'fastify';
import type { HttpServices } from '../services.ts';

export type RoutePlugin = FastifyPluginAsync<{ services: HttpServices }>;
