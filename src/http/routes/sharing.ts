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
import type { Actor } from '../../access/actor.ts';
import { type KilnError, badRequest } from '../../errors.ts';
import { authorizeActor } from '../../access/authorize.ts';
import { nodeToManage } from '../../nodes/manage.ts';
import { assertSameOrigin } from '../origin.ts';
import { wantsHtml, queryMsg, backWithRefusal, idParam, parse, textParam, type FieldCodes } from '../io.ts';
import { withMessage } from '../messages.ts';
import type { NodeRow } from '../../store/schema.ts';
import { regenerateShareToken, setSharing, type ShareState } from '../../sharing/share.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { sharingPage } from '../../ui/sharing.ts';
import { onlyOn } from '../hosts.ts';
import { framingAllowed, setFramingAllowed } from '../../sharing/framing.ts';

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

const bodies = { sharing: z.object({ enabled: onOff }), framing: z.object({ allowed: onOff }) };
const codes = { enabled: { code: 'invalid', msg: 'Send enabled: true or false.' } } as const satisfies FieldCodes;
const framingCodes = {
  allowed: { code: 'invalid', msg: 'Send allowed: true or false.' },
} as const satisfies FieldCodes;

const plugin: RoutePlugin = async (app, { services: s }) => {
  onlyOn(app, 'main');
  /** The document, for a signed-in developer who may manage it (strangers 401, others 400/403/404). */
  async function ownedDocument(req: FastifyRequest, write: boolean): Promise<{ actor: Actor; node: NodeRow }> {
    if (write) assertSameOrigin(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    // The dashboard's own decision, team roles included: a team's owners and editors share its documents,
    // a viewer is refused 403 `viewer` (as at every other door).
    const node = await nodeToManage(s, actor, idParam(req));
    if (node.type !== 'site') throw badRequest('Only documents can be shared.', 'not-a-document');
    return { actor, node };
  }

  function pathOf(node: NodeRow) {
    return SHARING_PATH.replace(':id', String(node.id));
  }

  function answer(req: FastifyRequest, reply: FastifyReply, actor: Actor, msg: string, state: ShareState) {
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) {
      return reply.send({
        msg,
        msgType: 'success',
        shareEnabled: state.shareEnabled,
        ...(state.shareUrl ? { shareUrl: state.shareUrl } : {}),
      });
    }
    // A link cannot travel in a redirect URL: the page itself shows it once.
    if (state.shareUrl) {
      return reply.type('text/html; charset=utf-8').send(
        sharingPage({
          username: actor.username,
          nodeId: state.node.id,
          name: state.node.name,
          shareEnabled: true,
          framingAllowed: framingAllowed(state.node),
          shareUrl: state.shareUrl,
          msg: { text: msg, type: 'success' },
        }),
      );
    }
    return reply.redirect(withMessage(s.secret, pathOf(state.node), msg, 'success'), 302);
  }

  /** Browser form posts come back to the page with a refusal; everything else meets the error handler. */
  async function operate(req: FastifyRequest, reply: FastifyReply, op: () => Promise<unknown>) {
    try {
      return await op();
    } catch (err) {
      const raw = textParam(req, 'id');
      const page =
        /^\d{1,15}$/.test(raw) && (err as KilnError).status !== 404 ? SHARING_PATH.replace(':id', raw) : '/_/dashboard';
      const back = backWithRefusal(req, reply, err, page);
      if (back) return back;
      throw err;
    }
  }

  app.get(SHARING_PATH, async (req, reply) => {
    const { actor, node } = await ownedDocument(req, false);
    const shareEnabled = node.share_enabled === 1 && !!node.share_token;
    reply.header('cache-control', 'no-store');
    const allowed = framingAllowed(node);
    if (!wantsHtml(req)) return reply.send({ msg: '', msgType: 'success', shareEnabled, framingAllowed: allowed });
    const msg = queryMsg(req);
    return reply.type('text/html; charset=utf-8').send(
      sharingPage({
        username: actor.username,
        nodeId: node.id,
        name: node.name,
        shareEnabled,
        framingAllowed: allowed,
        msg,
      }),
    );
  });

  app.post(FRAMING_PATH, (req, reply) =>
    operate(req, reply, async () => {
      const { node } = await ownedDocument(req, true);
      const { allowed } = parse(bodies.framing, req.body, framingCodes);
      const changed = await setFramingAllowed(s, node, allowed);
      const msg = allowed
        ? `Other sites may show "${changed.name}" in a frame.`
        : `Only your own pages may show "${changed.name}" in a frame now.`;
      reply.header('cache-control', 'no-store');
      if (!wantsHtml(req)) return reply.send({ msg, msgType: 'success', framingAllowed: framingAllowed(changed) });
      return reply.redirect(withMessage(s.secret, pathOf(changed), msg, 'success'), 302);
    }),
  );

  app.post(SHARING_PATH, (req, reply) =>
    operate(req, reply, async () => {
      const { actor, node } = await ownedDocument(req, true);
      const { enabled } = parse(bodies.sharing, req.body, codes);
      const was = node.share_enabled === 1 && !!node.share_token;
      const state = await setSharing(s, node, enabled);
      const msg = enabled
        ? was
          ? `Sharing of "${node.name}" is already on. Make a new link if you need one.`
          : `Sharing of "${node.name}" is on. Copy the link now: it is shown only once.`
        : was
          ? `Sharing of "${node.name}" is off: the link no longer works.`
          : `Sharing of "${node.name}" was already off.`;
      return answer(req, reply, actor, msg, state);
    }),
  );

  app.post(SHARE_REGENERATE_PATH, (req, reply) =>
    operate(req, reply, async () => {
      const { actor, node } = await ownedDocument(req, true);
      await strictAttempt(s, req, reply, 'share-token');
      const state = await regenerateShareToken(s, node);
      return answer(
        req,
        reply,
        actor,
        `New share link for "${node.name}": the old one no longer works. Copy it now: it is shown only once.`,
        state,
      );
    }),
  );
};

export default plugin;
