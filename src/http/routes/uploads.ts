// POST /_/upload — files into the account's tree. Two shapes:
//  - hyperclayjs: JSON {fileName, fileBody (base64)} with a Page-URL header; the file lands in the page's folder.
//  - multipart: field `file` (and optional `parentId` on the main app, e.g. from the dashboard).
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

/** The JSON upload hyperclayjs sends: the file as base64, optionally into a folder. */
const JSON_UPLOAD = z.object({ fileName: z.string(), fileBody: z.string(), parentId: z.unknown().optional() });

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
function placeOf(req: FastifyRequest, fields: Record<string, unknown>): UploadPlace {
  if (req.site.kind === 'main') return parse(TARGET, fields, TARGET_CODES);
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

/** A file as the request carries it, with the main app's optional folder and owner fields. */
interface Received {
  fileName: string;
  bytes: Buffer;
  /** The main app's `parentId` and `ownerId` as sent, read by TARGET. */
  fields: { parentId?: unknown; ownerId?: unknown; replaces?: unknown };
}

/** The multipart shape: field `file`, optional `parentId` and `ownerId`. */
async function multipartUpload(req: FastifyRequest): Promise<Received> {
  let file: { name: string; bytes: Buffer } | null = null;
  const fields: Received['fields'] = {};
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw badRequest('Send the file in the field "file".');
        file = { name: part.filename, bytes: await part.toBuffer() };
      } else if (part.fieldname === 'parentId' || part.fieldname === 'ownerId' || part.fieldname === 'replaces')
        fields[part.fieldname] = part.value;
    }
  } catch (err) {
    // The parser's own refusals (too large, too many parts) keep their status; a body that is not
    // multipart at all (no boundary, cut short) is the client's fault, not a server error.
    if (err instanceof KilnError || (err as { statusCode?: number }).statusCode) throw err;
    throw badRequest('The multipart body is malformed.', 'malformed-multipart');
  }
  if (!file) throw badRequest('Send the file in the field "file".');
  return { fileName: file.name, bytes: file.bytes, fields };
}

/** The upload in either shape. */
async function receivedUpload(req: FastifyRequest): Promise<Received> {
  if (req.isMultipart()) return multipartUpload(req);
  const body = JSON_UPLOAD.safeParse(req.body ?? {});
  if (!body.success) throw badRequest('Send {fileName, fileBody} with the file as base64.');
  const { fileName, fileBody, parentId } = body.data;
  return { fileName, bytes: Buffer.from(fileBody, 'base64'), fields: { parentId } };
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
  app.post('/_/upload', { bodyLimit: limits.body.jsonSyncAndUpload, preParsing: signedInFirst }, async (req, reply) => {
    assertSameOrigin(req);
    const { fileName, bytes, fields } = await receivedUpload(req);
    refuseDocument(fileName);
    const { node, replaced, hostUsername } = await receiveUpload(req.ctx, {
      place: placeOf(req, fields),
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
