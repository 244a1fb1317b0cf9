// A request in, an answer out: the one module routes use to read input and shape answers.
// - Input: bodies, queries and route parameters read without casts (zod schemas; `parse`, `idParam`,
//   `textParam`, `queryText`, `optionalText`); what does not fit is 400 naming the field in words (its code: `parse`),
//   and an id that cannot name anything answers like a missing one.
// - Answers: browsers (by Accept) get a page or a 302 carrying a signed msg/msgType/sig and return
//   (src/http/messages.ts); AJAX and programs get JSON {msg, msgType, ...}; `config.answers = 'json'`
//   makes a whole plugin JSON-only. A refused form POST goes back to its form with the message.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { KilnError, badRequest, notFound, type CodeWithStatus } from '../errors.ts';
import { verifiedMessage, withMessage } from './messages.ts';
import type { Msg } from '../ui/pages.ts';

// ---------------------------------------------------------------- answers

export function wantsHtml(req: FastifyRequest): boolean {
  if (req.routeOptions?.config?.answers === 'json') return false;
  if (req.headers['x-requested-with']) return false;
  const accept = req.headers.accept ?? '';
  return accept.includes('text/html');
}

/** A success answer: JSON for programs, a redirect for browsers. */
export function done(
  req: FastifyRequest,
  reply: FastifyReply,
  msg: string,
  opts: { redirect?: string; extra?: Record<string, unknown>; status?: number } = {},
) {
  if (opts.redirect && wantsHtml(req))
    return reply.redirect(withMessage(req.messageSecret, opts.redirect, msg, 'success'), 302);
  return reply.code(opts.status ?? 200).send({ msg, msgType: 'success', ...opts.extra });
}

/** Longest `return` target accepted. */
export const MAX_RETURN = 2048;

/** Why a `return` target is refused, or null when it is a same-origin path. Refused: anything that
 *  is not a path starting with one `/`, control characters (< 0x20, 0x7f: CR, LF, tab …), backslashes,
 *  characters outside ASCII, and the same once percent-decoded (`/%2f%2fx`, `/%5cx`, `/%0d%0a…`, `/%09/x`), or undecodable. */
export function returnProblem(value: string): string | null {
  if (value.length > MAX_RETURN) return 'is too long';
  const bad = (v: string) =>
    !v.startsWith('/') || v.startsWith('//') || v.includes('\\') || /[\u0000-\u001f\u007f]/.test(v);
  if (bad(value)) return 'must be a path on this site';
  // A Location header carries ASCII only: a path with other characters must come percent-encoded.
  if (/[^\u0020-\u007e]/.test(value)) return 'must be a percent-encoded path';
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return 'is not a valid address';
  }
  if (bad(decoded)) return 'must be a path on this site';
  return null;
}

/** Only local paths may be used as `return` targets (no open redirects, no header injection). */
export function safeReturn(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || returnProblem(value) !== null) return fallback;
  return value;
}

/** A `return` value that is a safe local path, or undefined. */
export function returnPathOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= 2048 ? safeReturn(value, '') || undefined : undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `'json'`: every answer of the route, errors included, is JSON whatever the client accepts
     *  (sync clients may send `Accept: text/html`). Set for a whole plugin with `jsonAnswers`. */
    answers?: 'json';
  }
}

/** Marks every route the plugin registers after this call as answering JSON only (see above). */
export function jsonAnswers(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), answers: 'json' };
  });
}

// ---------------------------------------------------------------- forms

export type Fields = Record<string, unknown>;

export function bodyOf(req: FastifyRequest): Fields {
  const b = req.body;
  return b && typeof b === 'object' && !Array.isArray(b) && !Buffer.isBuffer(b) ? (b as Fields) : {};
}

export function queryOf(req: FastifyRequest): Fields {
  return (req.query ?? {}) as Fields;
}

/** The message a redirect carried in `msg`/`msgType`, only when Kiln issued it for this page (its
 *  `sig` verifies); bounded. The one reader of `?msg=` for every page. */
export function queryMsg(req: FastifyRequest): Msg | undefined {
  return verifiedMessage(req.messageSecret, req);
}

export function sendPage(reply: FastifyReply, body: string, status = 200) {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
}

/** A body sent as several buffers in order, never joined into a copy (a stored page with something put
 *  into it); HEAD gets the same Content-Length without them. */
export function sendPieces(reply: FastifyReply, pieces: Buffer[]) {
  let size = 0;
  for (const p of pieces) size += p.length;
  const body = new Readable({
    read() {
      for (const p of pieces) this.push(p);
      this.push(null);
    },
  });
  return reply.header('content-length', String(size)).send(body);
}

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Wraps a form POST: a browser's 400/401/409 goes back to its form (`back`) with the message, a 429
 *  gets the form page with Retry-After; everything else reaches the app's error handler (JSON for AJAX). */
export function formPost(
  back: (req: FastifyRequest, status: number) => string,
  render: (req: FastifyRequest, msg: Msg) => string,
  handler: Handler,
  opts: {
    sendPage?: typeof sendPage;
    returnTo?: (req: FastifyRequest) => string | undefined;
    /** More statuses that go back to the form (e.g. 403 when a form's door closed meanwhile). */
    back?: number[];
  } = {},
): Handler {
  const send = opts.sendPage ?? sendPage;
  return async (req, reply) => {
    try {
      // A route with `attachValidation: true` hands its schema's refusal here, to go back to the form too.
      if (req.validationError) throw req.validationError;
      return await handler(req, reply);
    } catch (err) {
      if (!(err instanceof KilnError) || !wantsHtml(req)) throw err;
      if (err.status === 429) {
        reply.header('Retry-After', String(err.extra?.retryAfter ?? 60));
        return send(reply, render(req, { text: err.message, type: 'error' }), 429);
      }
      if (err.status === 400 || err.status === 401 || err.status === 409 || opts.back?.includes(err.status)) {
        return reply.redirect(
          withMessage(req.messageSecret, back(req, err.status), err.message, 'error', opts.returnTo?.(req)),
          302,
        );
      }
      throw err;
    }
  };
}

/** A main-app form POST refused: the browser goes back to `page` with the refusal in words (sign-in
 *  pages and 429s keep their own answers; programs get the error handler's JSON). Null when `err` is
 *  not answered this way: rethrow it. */
export function backWithRefusal(
  req: FastifyRequest,
  reply: FastifyReply,
  err: unknown,
  page: string,
): FastifyReply | null {
  if (!(err instanceof KilnError) || !wantsHtml(req) || err.status === 401 || err.status === 429) return null;
  if (req.site.kind !== 'main') return null;
  return reply.redirect(withMessage(req.messageSecret, page, err.message, 'error'), 302);
}

// ---------------------------------------------------------------- input

/** What a field's refusal carries, by the field's top-level name: its registered code (e.g. the sync
 *  API's `name` → `invalid-name`, which the desktop client compares), or the code and the words. Other
 *  fields: `too-long` for text over its bound, else `invalid`. */
export type FieldCodes = Partial<Record<string, CodeWithStatus<400> | { code: CodeWithStatus<400>; msg: string }>>;

/** A body (or query) through a schema: the parsed value, or 400 naming the first bad field in words. */
export function parse<T extends z.ZodType>(schema: T, value: unknown, codes: FieldCodes = {}): z.infer<T> {
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const own = codes[String(issue.path[0] ?? '')];
  if (typeof own === 'object') throw badRequest(own.msg, own.code);
  const words = wordsOf(issue, value);
  if (own) throw badRequest(words, own);
  if (issue.code === 'too_big' && issue.origin === 'string') throw badRequest(words, 'too-long');
  throw badRequest(words, 'invalid');
}

/** What is wrong with a field, as a person reads it ("Email must be at most 254 characters."). */
function wordsOf(issue: z.core.$ZodIssue, value: unknown): string {
  const field = issue.path.join('.') || 'body';
  const label = field.charAt(0).toUpperCase() + field.slice(1);
  const given = issue.path.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Fields)[k as string] : undefined),
    value,
  );
  switch (issue.code) {
    case 'too_big':
      return issue.origin === 'string'
        ? `${label} must be at most ${issue.maximum} characters.`
        : `${label} is too large.`;
    case 'too_small':
      return issue.origin === 'string' && Number(issue.minimum) <= 1
        ? `${label} is required.`
        : `${label} is too ${issue.origin === 'string' ? 'short' : 'small'}.`;
    case 'invalid_type':
      if (given === undefined || given === null) return `${label} is required.`;
      return `${label} must be ${issue.expected === 'string' ? 'text' : issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}.`;
    case 'invalid_value':
      return `${label} must be one of ${issue.values.map(String).join(', ')}.`;
    case 'custom':
      // A refinement's own words, when it gave some.
      return issue.message && issue.message !== 'Invalid input' ? issue.message : `${label} is not valid.`;
    default:
      return `${label} is not valid.`;
  }
}

/** A node, version or domain id as the API takes it (a number or its decimal text). */
export const id = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Text a form may leave out, bounded: '' and null are absent (undefined). */
export const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v || undefined);

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

/** Runs `use` with the multipart file field `field` written to a temporary file, removed afterwards: a
 *  large upload (an import's zip) is read from disk, never held whole in memory. `use` gets the text
 *  fields too (the first of each name; the plugin bounds their number and size). 400 when the body is
 *  malformed or has no such file; 413 past the multipart plugin's file size. */
export async function withUploadedFile<T>(
  req: FastifyRequest,
  field: string,
  use: (file: string, fields: Record<string, string>) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kiln-upload-'));
  try {
    const file = path.join(dir, 'upload');
    let received = false;
    const fields: Record<string, string> = {};
    try {
      if (req.isMultipart()) {
        for await (const part of req.parts()) {
          if (part.type !== 'file') {
            if (typeof part.value === 'string' && !(part.fieldname in fields)) fields[part.fieldname] = part.value;
            continue;
          }
          if (part.fieldname === field && !received) {
            await pipeline(part.file, createWriteStream(file));
            received = true;
          } else part.file.resume();
        }
      }
    } catch (err) {
      if (err instanceof KilnError || (err as { statusCode?: number }).statusCode) throw err;
      throw badRequest('The multipart body is malformed.', 'malformed-multipart');
    }
    if (!received) throw badRequest(`Send the file in the field "${field}".`, 'invalid-body');
    return await use(file, fields);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
