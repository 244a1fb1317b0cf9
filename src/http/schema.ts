// Input schemas declared on the route, zod all through:
//
//   app.post('/x', { schema: { body: fields(z.object({…}), { name: 'invalid-name' }), querystring: … } }, handler)
//
// Fastify runs them before the handler (the validator compiler below) and the handler reads typed, parsed input
// (`req.body`, `req.query`, `req.params`: the ZodProvider type provider, which every RoutePlugin's `app` has).
// A refusal is `parse`'s (src/http/io.ts): 400 naming the first bad field in words, with the code the field
// registered (`fields`), so a bad field is reported one way wherever it comes in. A route that answers a
// browser's form by going back to it sets `attachValidation: true` and hands `req.validationError` to its
// form wrapper (io.ts formPost does).
import type { FastifyInstance, FastifySchemaCompiler, FastifyTypeProvider } from 'fastify';
import type { z } from 'zod';
import { parse, type FieldCodes } from './io.ts';

export interface ZodProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

const codesOf = new WeakMap<z.ZodType, FieldCodes>();

/** A schema whose fields' refusals carry these registered codes (e.g. the sync API's `name` → `invalid-name`,
 *  which the desktop client compares). */
export function fields<T extends z.ZodType>(schema: T, codes: FieldCodes): T {
  codesOf.set(schema, codes);
  return schema;
}

const compiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (data) => {
    try {
      return { value: parse(schema, data, codesOf.get(schema)) };
    } catch (error) {
      return { error: error as Error };
    }
  };

/** Every route's schemas are zod schemas, checked by `parse`. */
export function registerSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(compiler);
}
