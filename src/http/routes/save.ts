// POST /_/save — the browser save, wire-compatible with hyperclayjs: the body is the document as text,
// the document is named by the Document-URL (or Page-URL) header. Every answer is JSON {msg, msgType}.
import type { RoutePlugin } from './plugin.ts';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import { KilnError, badRequest, forbidden, notFound } from '../../errors.ts';
import { replaceUpload } from '../../uploads/upload.ts';
import { limits } from '../../limits.ts';
import { assertSameOrigin } from '../origin.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { assertDocumentBytes } from '../../save/root-html.ts';
import { saveAtPath } from '../../save/at-path.ts';
import type { SavedBy } from '../../save/saved.ts';
import { authorize, authorizeActor, ownUploads, resourceOf } from '../../access/authorize.ts';
import { findByPath } from '../../nodes/find.ts';
import { parseIfMatch } from '../../core/conditional.ts';
import { callerOf } from '../share-grant.ts';
import { saveTriggerOf } from '../../guard/guard.ts';

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.post('/_/save', { bodyLimit: limits.body.text }, async (req, reply) => {
    assertSameOrigin(req);
    if (/json/i.test(req.headers['content-type'] ?? '')) {
      throw new KilnError(415, 'Send the document as text, not JSON.', 'unsupported-media-type');
    }
    const body = req.body;
    if (!Buffer.isBuffer(body)) throw new KilnError(415, 'Send the document as text.', 'unsupported-media-type');
    const url = documentUrlHeader(req.headers);
    if (!url) throw badRequest('The Document-URL (or Page-URL) header is required.', 'missing-document-url');
    const { host, path } = documentPathOf(url);
    if (host !== (req.headers.host ?? '').toLowerCase())
      throw badRequest('Document-URL names another host.', 'bad-document-url');
    const upload = editedUploadOf(url);
    if (upload) return saveEditedUpload(s, req, upload, body);
    if (req.site.kind === 'main') throw notFound('Documents are saved on their own host.');
    // The code editor marks its saves so the version list can say who saved.
    const by: SavedBy = {
      kind: req.headers['x-kiln-editor'] ? 'editor' : 'browser',
      accountId: req.actor?.accountId ?? null,
      writer: req.actor?.writer ?? null,
      // Whether a person's gesture made this save (the data-clobber guard weighs it).
      trigger: saveTriggerOf(req.headers),
    };
    const result = await saveAtPath(s, {
      ownerId: req.site.accountId,
      path,
      check(node) {
        const caller = callerOf(req, node);
        authorize(caller, resourceOf(node), 'save');
        // Allowed by the share link alone (nobody signed in here): the history names a share-link guest.
        by.shareGuest = !req.actor && caller.shareGuest === true;
        assertDocumentBytes(body);
      },
      bytes: body,
      by,
      ifMatch: parseIfMatch(req.headers['if-match']),
    });
    reply.header('ETag', `"${result.checksum}"`);
    return { msg: result.changed ? 'Saved' : 'No changes to save', msgType: 'success', etag: result.checksum };
  });
};
/** `/_/edit/uploads/<username>/<path>` in a Document-URL names an upload open in the code editor. */
function editedUploadOf(url: string): { username: string; path: string } | null {
  const m = /^\/_\/edit\/uploads\/([^/]+)\/(.+)$/.exec(new URL(url).pathname);
  if (!m) return null;
  if (/%25/i.test(m[0]))
    throw badRequest('Document-URL may not contain an encoded percent sign (%25).', 'bad-document-url');
  try {
    return { username: decodeURIComponent(m[1]), path: m[2].split('/').map(decodeURIComponent).join('/') };
  } catch {
    throw badRequest('Document-URL has a malformed path.', 'bad-document-url');
  }
}

async function saveEditedUpload(
  s: Services,
  req: FastifyRequest,
  target: { username: string; path: string },
  body: Buffer,
) {
  const actor = authorizeActor({ actor: req.actor }, ownUploads(req.actor), 'edit');
  // Only the uploads of the account this request arrived for (the main app: the signed-in person's).
  if (target.username !== actor.username || (req.site.kind !== 'main' && target.username !== req.site.username)) {
    throw forbidden('You can only edit your own uploads.');
  }
  const node = await findByPath(s, actor.accountId, target.path);
  if (node?.type !== 'upload') throw notFound();
  authorize({ actor }, resourceOf(node), 'edit');
  const { node: saved } = await replaceUpload(s, {
    node,
    plan: actor.plan,
    bytes: body,
    by: { kind: 'upload-edit', accountId: actor.accountId, writer: actor.writer },
    ifMatch: parseIfMatch(req.headers['if-match']),
  });
  return { msg: 'Saved', msgType: 'success', etag: saved.checksum };
}

export default plugin;
