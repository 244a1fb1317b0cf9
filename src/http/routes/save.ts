// POST /_/save — the browser save, wire-compatible with hyperclayjs: the body is the document as text,
// the document is named by the Document-URL (or Page-URL) header. Every answer is JSON {msg, msgType}.
import type { RoutePlugin } from './plugin.ts';
import { KilnError, badRequest } from '../../errors.ts';
import { limits } from '../../limits.ts';
import { assertSameOrigin } from '../origin.ts';
import { documentPathOf, documentUrlHeader } from '../../save/document-url.ts';
import { saveAtPath } from '../../save/at-path.ts';
import { saveEditedUpload } from '../../uploads/edit.ts';
import { parseIfMatch } from '../../core/conditional.ts';
import { saveTriggerOf } from '../../guard/guard.ts';

const plugin: RoutePlugin = async (app) => {
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
    const ifMatch = parseIfMatch(req.headers['if-match']);
    const upload = editedUploadOf(url);
    if (upload) {
      const { etag } = await saveEditedUpload(req.ctx, { ...upload, bytes: body, ifMatch });
      return { msg: 'Saved', msgType: 'success', etag };
    }
    // The code editor marks its saves so the version list can say who saved; whether a person's gesture made
    // this save, the data-clobber guard weighs.
    const by = {
      kind: req.headers['x-kiln-editor'] ? 'editor' : 'browser',
      trigger: saveTriggerOf(req.headers),
    } as const;
    const result = await saveAtPath(req.ctx, { path, bytes: body, by, ifMatch });
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

export default plugin;
