// Share tokens of a document, for its owner (developers, main app). Bodies may be JSON or form-encoded.
//
//   GET  /_/dashboard/nodes/:id/sharing              page; JSON {msg, msgType, shareEnabled} for programs
//   POST /_/dashboard/nodes/:id/sharing              {enabled: true|false}: turning it on makes a new link
//   POST /_/dashboard/nodes/:id/sharing/regenerate   a new link; the old one (and its cookies) stop at once
//   POST /_/dashboard/nodes/:id/framing              {allowed: true|false}: may other sites show the
//                                                    document in a frame (default true); JSON {msg, msgType,
//                                                    framingAllowed}, forms come back to the page
//
// AJAX answers: JSON {msg, msgType, shareEnabled, shareUrl?}; `shareUrl` only when a link was just made
// (only a hash of the token is kept, so it cannot be shown again). Browser form posts that make a link
// get the page itself showing it once; turning sharing off redirects back to the page.
// Regeneration is a sensitive operation: it counts on the strict limiter (5 an hour per account) once
// the request has passed the cheap refusals.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import type { KilnError } from '../../errors.ts';
import { signedIn } from '../../nodes/manage.ts';
import { assertSameOrigin } from '../origin.ts';
import { wantsHtml, queryMsg, backWithRefusal, type FieldCodes } from '../io.ts';
import { fields } from '../schema.ts';
import { withMessage } from '../messages.ts';
import type { NodeRow } from '../../nodes/tree.ts';
import { allowFraming, newShareLink, shareDocument, sharingOf, type ShareState } from '../../sharing/share.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { sharingPage } from '../../ui/sharing.ts';
import { onlyOn } from '../hosts.ts';
import { framingAllowed } from '../../sharing/framing.ts';
import { nodeParams } from './dashboard/shared.ts';

const SHARING_PATH = '/_/dashboard/nodes/:id/sharing';
const SHARE_REGENERATE_PATH = `${SHARING_PATH}/regenerate`;
const FRAMING_PATH = '/_/dashboard/nodes/:id/framing';

/** On or off, as JSON and forms send it (text in any case, spaces around); required. */
const onOff = z.union([
  z.boolean(),
  z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['1', 'true', 'on', 'yes', '0', 'false', 'off', 'no', '']))
    .transform((v) => ['1', 'true', 'on', 'yes'].includes(v)),
]);

const codes = { enabled: { code: 'invalid', msg: 'Send enabled: true or false.' } } as const satisfies FieldCodes;
const framingCodes = {
  allowed: { code: 'invalid', msg: 'Send allowed: true or false.' },
} as const satisfies FieldCodes;
const bodies = {
  sharing: fields(z.object({ enabled: onOff }), codes),
  framing: fields(z.object({ allowed: onOff }), framingCodes),
  none: z.unknown(),
};

/** A change's route: its refused field answers after who is asking (`gate`). */
const on = <B extends z.ZodType>(body: B) => ({ schema: { params: nodeParams, body }, attachValidation: true });

/** A signed-in developer (strangers 401, app users 403), from the main app's own pages for a change; then the
 *  route's schema. Which documents they may share is the use cases' (src/sharing/share.ts). */
function gate(req: FastifyRequest, write: boolean) {
  if (write) assertSameOrigin(req);
  const me = signedIn(req.ctx, 'manage');
  if (req.validationError) throw req.validationError;
  return me;
}

const pathOf = (node: Pick<NodeRow, 'id'>) => SHARING_PATH.replace(':id', String(node.id));

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main');

  function answer(req: FastifyRequest, reply: FastifyReply, msg: string, state: ShareState) {
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) {
      const url = state.shareUrl ? { shareUrl: state.shareUrl } : {};
      return reply.send({ msg, msgType: 'success', shareEnabled: state.shareEnabled, ...url });
    }
    // A link cannot travel in a redirect URL: the page itself shows it once.
    if (!state.shareUrl) return reply.redirect(withMessage(s.secret, pathOf(state.node), msg, 'success'), 302);
    return reply.type('text/html; charset=utf-8').send(
      sharingPage({
        username: gate(req, false).username,
        nodeId: state.node.id,
        name: state.node.name,
        shareEnabled: true,
        framingAllowed: framingAllowed(state.node),
        shareUrl: state.shareUrl,
        msg: { text: msg, type: 'success' },
      }),
    );
  }

  /** Browser form posts come back to the page with a refusal; everything else meets the error handler. */
  async function operate(
    req: FastifyRequest<{ Params: { id: number } }>,
    reply: FastifyReply,
    op: () => Promise<unknown>,
  ) {
    try {
      gate(req, true);
      return await op();
    } catch (err) {
      const { id } = req.params;
      const page = id > 0 && (err as KilnError).status !== 404 ? pathOf({ id }) : '/_/dashboard';
      const back = backWithRefusal(req, reply, err, page);
      if (back) return back;
      throw err;
    }
  }

  app.get(SHARING_PATH, { schema: { params: nodeParams } }, async (req, reply) => {
    const me = gate(req, false);
    const { node, shareEnabled, framingAllowed: allowed } = await sharingOf(req.ctx, { nodeId: req.params.id });
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', shareEnabled, framingAllowed: allowed });
    const page = { username: me.username, nodeId: node.id, name: node.name, shareEnabled, framingAllowed: allowed };
    return reply.type('text/html; charset=utf-8').send(sharingPage({ ...page, msg: queryMsg(req) }));
  });

  app.post(FRAMING_PATH, on(bodies.framing), (req, reply) =>
    operate(req, reply, async () => {
      const { allowed } = req.body;
      const changed = await allowFraming(req.ctx, { nodeId: req.params.id, allowed });
      const msg = allowed
        ? `Other sites may show "${changed.name}" in a frame.`
        : `Only your own pages may show "${changed.name}" in a frame now.`;
      reply.header('cache-control', 'no-store');
      if (!wantsHtml(req)) return reply.send({ msg, msgType: 'success', framingAllowed: framingAllowed(changed) });
      return reply.redirect(withMessage(s.secret, pathOf(changed), msg, 'success'), 302);
    }),
  );

  app.post(SHARING_PATH, on(bodies.sharing), (req, reply) =>
    operate(req, reply, async () => {
      const { enabled } = req.body;
      const state = await shareDocument(req.ctx, { nodeId: req.params.id, enabled });
      const name = state.node.name;
      const msg = enabled
        ? state.was
          ? `Sharing of "${name}" is already on. Make a new link if you need one.`
          : `Sharing of "${name}" is on. Copy the link now: it is shown only once.`
        : state.was
          ? `Sharing of "${name}" is off: the link no longer works.`
          : `Sharing of "${name}" was already off.`;
      return answer(req, reply, msg, state);
    }),
  );

  app.post(SHARE_REGENERATE_PATH, on(bodies.none), (req, reply) =>
    operate(req, reply, async () => {
      const allowed = () => strictAttempt(s, req, reply, 'share-token');
      const state = await newShareLink(req.ctx, { nodeId: req.params.id, allowed });
      const msg = `New share link for "${state.node.name}": the old one no longer works. Copy it now: it is shown only once.`;
      return answer(req, reply, msg, state);
    }),
  );
};

export default plugin;
