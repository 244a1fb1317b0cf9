// POST /_/upload — files into the account's tree. Two shapes:
//  - hyperclayjs: JSON {fileName, fileBody (base64)} with a Page-URL header; the file lands in the page's folder.
//  - multipart: field `file` (and optional `parentId` on the main app, e.g. from the dashboard).
// Both are one declared body schema (UPLOAD); a multipart body is read into it before it is judged.
// Success is exactly 200 {msg, msgType, urls} (the browser library treats any other status as failure).
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { RoutePlugin } from './plugin.ts';
import type { NodeRow } from '../../nodes/find.ts';
import { KilnError, badRequest } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { assertSameOrigin } from '../origin.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { receiveUpload, refuseNobody, type UploadPlace } from '../../uploads/receive.ts';
import { isDocumentName } from '../../core/names.ts';
import { documentHostUrl, nodeUrlPath } from '../../core/urls.ts';
import { z } from 'zod';
import { id, parse, type FieldCodes } from '../io.ts';
import { fields } from '../schema.ts';

/** The file's part of a multipart body, as `readMultipart` leaves it for the schema. */
const FILE_PART = z.object({ name: z.string(), bytes: z.instanceof(Buffer) });
/** The form fields a main-app upload may carry (TARGET reads them); absent on a document host. */
const formField = z.string().optional();

/** The body in either shape, as one file with the main app's folder and owner fields as sent (`TARGET` reads
 *  them on the main app; document hosts ignore them): hyperclayjs's JSON (the file as base64, optionally into a
 *  folder), or a multipart form (field `file`, read before the schema by `readMultipart`). */
const UPLOAD = fields(
  z.union([
    z
      .object({ file: FILE_PART, parentId: formField, ownerId: formField, replaces: formField })
      .transform(({ file, ...target }) => ({ fileName: file.name, bytes: file.bytes, fields: target })),
    z.object({ fileName: z.string(), fileBody: z.string(), parentId: z.unknown().optional() }).transform((b) => ({
      fileName: b.fileName,
      bytes: Buffer.from(b.fileBody, 'base64'),
      fields: { parentId: b.parentId },
    })),
  ]),
  {
    '': {
      code: 'invalid',
      msg: 'Send the file in the multipart field "file", or JSON {fileName, fileBody} with the file as base64.',
    },
  },
);

/** A form field left empty is absent. */
const absentWhenEmpty = (v: unknown) => (v === '' || v === null ? undefined : v);
/** Where a main-app upload goes: a folder id (0, the default: the top level), and whose tree (`ownerId`, a
 *  team's; none: one's own). Document hosts ignore both: the page's folder is the place. */
const TARGET = z.object({
  parentId: z.preprocess(absentWhenEmpty, id.default(0)),
  ownerId: z.preprocess(absentWhenEmpty, id.optional()),
  /** The dashboard's "Replace": the id of an upload in that folder, which the new file takes the place of. */
  replaces: z.preprocess(absentWhenEmpty, id.optional()),
});
const TARGET_CODES: FieldCodes = {
  parentId: { code: 'invalid', msg: 'parentId must be a folder id.' },
  ownerId: { code: 'invalid', msg: 'ownerId must be a team’s id.' },
  replaces: { code: 'invalid', msg: 'replaces must be the id of a file.' },
};

/** The most an administrator may set a plan's file size to (src/billing/plan-settings.ts). */
const MAX_UPLOAD = limits.body.jsonSyncAndUpload;

/** Where the request asks the file to go: the page the Page-URL names (document hosts), or the main app's
 *  folder, owner and replaced file fields. */
function placeOf(req: FastifyRequest, target: Record<string, unknown>): UploadPlace {
  if (req.site.kind === 'main') return parse(TARGET, target, TARGET_CODES);
  const url = documentUrlHeader(req.headers);
  if (!url) throw badRequest('The Page-URL header is required.', 'missing-document-url');
  return { page: documentPathOf(url).path };
}

/** The page a Page-URL names, or undefined when it names none (the handler then says what is wrong). */
function pathOf(url: string): string | undefined {
  try {
    return documentPathOf(url).path;
  } catch {
    return undefined;
  }
}

/** A multipart body is read before the schema judges it, as a JSON body is parsed: each file part as
 *  {name, bytes} under its field's name, each other field as its text (the schema keeps what it knows). */
async function readMultipart(req: FastifyRequest): Promise<void> {
  if (!req.isMultipart()) return;
  const body: Record<string, unknown> = {};
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') body[part.fieldname] = { name: part.filename, bytes: await part.toBuffer() };
      else body[part.fieldname] = part.value;
    }
  } catch (err) {
    // The parser's own refusals (too large, too many parts) keep their status; a body that is not
    // multipart at all (no boundary, cut short) is the client's fault, not a server error.
    if (err instanceof KilnError || (err as { statusCode?: number }).statusCode) throw err;
    throw badRequest('The multipart body is malformed.', 'malformed-multipart');
  }
  req.body = body;
}

/** A document is not an upload (hyperclay-local's host conformance page): it is made on the dashboard,
 *  with the sync API or /_/save, and saved through the one save pipeline. */
function refuseDocument(fileName: string): void {
  if (isDocumentName(fileName.split(/[\\/]/).pop() ?? '') || /\.htm$/i.test(fileName))
    throw new KilnError(
      415,
      'HTML documents are not uploads: create them on the dashboard (or with the sync API) instead.',
      'unsupported-type',
    );
}

/** The success answer: `urls`/`msg` are what hyperclayjs 1.38 reads; `uploads` is the shape of the host
 *  conformance page. */
function uploaded(node: NodeRow, url: string, msg: string) {
  return {
    msg,
    msgType: 'success',
    urls: [url],
    uploads: [{ name: node.name, url, size: node.size, contentType: node.content_type }],
    node: { id: node.id, name: node.name, size: node.size },
  };
}

const plugin: RoutePlugin = async (app, { services: s }) => {
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD, files: 1, fields: 10, fieldSize: 1024 } });

  // Credentials before the body: nobody signed in is refused before its (up to 150 MB) body is read, with the
  // table's answer for the page the Page-URL names (a document host's: its share guest is told 403).
  const signedInFirst = async (req: FastifyRequest) => {
    const url = req.site.kind === 'main' ? undefined : documentUrlHeader(req.headers);
    await refuseNobody(req.ctx, url ? pathOf(url) : undefined);
  };
  // Another origin is refused before a multipart body is read and the schema judges it.
  const sameOriginThenBody = async (req: FastifyRequest) => {
    assertSameOrigin(req);
    await readMultipart(req);
  };
  const route = {
    bodyLimit: limits.body.jsonSyncAndUpload,
    preParsing: signedInFirst,
    preValidation: sameOriginThenBody,
    schema: { body: UPLOAD },
  };
  app.post('/_/upload', route, async (req, reply) => {
    const { fileName, bytes, fields: target } = req.body;
    refuseDocument(fileName);
    const { node, replaced, hostUsername } = await receiveUpload(req.ctx, {
      place: placeOf(req, target),
      fileName,
      bytes,
    });
    const origin =
      req.site.kind === 'main' ? documentHostUrl(s.config, hostUsername) : `${req.protocol}://${req.headers.host}`;
    const msg = replaced
      ? `Replaced ${node.name} (the old file is in the trash).`
      : node.name === fileName
        ? `Uploaded ${node.name}.`
        : `Uploaded as ${node.name}: ${fileName} was taken in that folder.`;
    return reply.code(200).send(uploaded(node, origin + nodeUrlPath(node), msg));
  });
};
export default plugin;
