// The whole tree out as a zip and back in (src/accounts/export.ts), and the last export of a deleted
// account through its mailed link.
import { createReadStream } from 'node:fs';
import multipart from '@fastify/multipart';
import { z } from 'zod';
import type { RoutePlugin } from '../plugin.ts';
import { exportTree, importTree, importedInWords, lastExport } from '../../../accounts/export.ts';
import { notFound } from '../../../errors.ts';
import { limits } from '../../../limits.ts';
import { done, formPost, withUploadedFile } from '../../io.ts';
import { withMessage } from '../../messages.ts';
import { queries } from './schemas.ts';
import { ACCOUNT, developer, renderAccount } from './shared.ts';

const transfer: RoutePlugin = async (app, { services: s }) => {
  app.get(`${ACCOUNT}/export`, { schema: { querystring: queries.export } }, async (req, reply) => {
    const actor = developer(req, false);
    const versions = req.query.versions === '1';
    const stream = await exportTree(req.ctx, { ownerId: actor.accountId, versions });
    const day = s.clock.now().toISOString().slice(0, 10);
    return reply
      .header('cache-control', 'no-store')
      .header('content-type', 'application/zip')
      .header('content-disposition', `attachment; filename="kiln-${actor.username}-${day}.zip"`)
      .send(stream);
  });

  // On the account plugin's own instance, as before the split.
  await app.register(multipart, { limits: { fileSize: limits.body.jsonSyncAndUpload, files: 1, fields: 5 } });
  app.post(
    `${ACCOUNT}/import`,
    { bodyLimit: limits.body.jsonSyncAndUpload },
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const r = await withUploadedFile(req, 'file', (zip, fields) =>
          importTree(req.ctx, {
            ownerId: actor.accountId,
            file: zip,
            folder: fields.folder?.slice(0, limits.pathLength),
          }),
        );
        const msg = `Imported ${importedInWords(r)}.`;
        // `next`: where the page's script goes on, with the message (signed, as a redirect's is).
        const next = withMessage(req.messageSecret, '/_/dashboard', msg, 'success');
        return done(req, reply, msg, { redirect: '/_/dashboard', extra: { imported: r, next } });
      },
    ),
  );

  /** A last export, made before an account was deleted (the link mailed then; 7 days). */
  app.get('/_/export/:token', { schema: { params: z.object({ token: z.string() }) } }, async (req, reply) => {
    const file = await lastExport(s, req.params.token);
    if (!file) throw notFound('This export link is not valid (it expired after 7 days, or never existed).');
    return reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('content-type', 'application/zip')
      .header('content-disposition', 'attachment; filename="kiln-export.zip"')
      .send(createReadStream(file));
  });
};

export default transfer;
