// Framing. No page Kiln renders itself may be framed, on any host: the main app, and on document hosts
// and custom domains the editor, versions, restore, error and sign-up pages. Sibling hosts are
// same-site, so an owner's host session rides along into a frame on a neighbour's page, and one click
// there would act as the owner (restore a version, save in the upload editor). The account's own
// content (its documents and uploads, as stored) keeps its owner's choice: their pages may embed
// each other, or be embedded elsewhere, as the owner writes them.
import type { FastifyInstance, FastifyReply } from 'fastify';

const accountContent = new WeakSet<FastifyReply>();

/** This answer is the account's own document or upload: framing is its owner's choice. */
export function servesAccountContent(reply: FastifyReply): FastifyReply {
  accountContent.add(reply);
  return reply;
}

export function registerFraming(app: FastifyInstance): void {
  app.addHook('onSend', async (_req, reply) => {
    if (accountContent.has(reply)) return;
    const csp = reply.getHeader('content-security-policy');
    reply.header('Content-Security-Policy', csp ? `${String(csp)}; frame-ancestors 'none'` : "frame-ancestors 'none'");
    reply.header('X-Frame-Options', 'DENY');
  });
}
