// Reading a request's input without casts: route parameters, query fields and bodies are checked
// (zod schemas) and typed here, and what does not fit answers 400 `invalid` naming the field (ids that
// cannot name anything answer like missing ones).
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type KilnError, badRequest, notFound } from '../errors.ts';

/** A body (or query) through a schema: the parsed value, or 400 naming the first bad field. */
export function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue.path.join('.') || 'body';
  throw badRequest(`Invalid ${field}: ${issue.message}`, 'invalid');
}

/** A node, version or domain id as the API takes it (a number or its decimal text). */
export const id = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** A yes/no field as forms and JSON send it. */
export const flag = z
  .union([z.boolean(), z.enum(['1', '0', 'true', 'false', 'on', 'yes', 'no', ''])])
  .transform((v) => v === true || v === '1' || v === 'true' || v === 'on' || v === 'yes');

const params = z.record(z.string(), z.string().optional());
const decimal = z
  .string()
  .regex(/^\d{1,15}$/)
  .transform(Number);

/** A route parameter as text ('' when absent). */
export function textParam(req: FastifyRequest, name: string): string {
  return params.parse(req.params ?? {})[name] ?? '';
}

/** A route parameter naming a row by id: a malformed id answers `missing()` (404 by default), as an
 *  unknown one would. */
export function idParam(req: FastifyRequest, name = 'id', missing: () => KilnError = () => notFound()): number {
  const r = decimal.safeParse(textParam(req, name));
  if (!r.success) throw missing();
  return r.data;
}

/** A query field given once as text, or undefined (given twice or not text: undefined). */
export function queryText(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
}
