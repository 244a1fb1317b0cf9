// Signing up on an app: the form, and the new app user with their own instance of the app.
import type { RoutePlugin } from '../plugin.ts';
import { KilnError, badRequest, notFound } from '../../../errors.ts';
import type { NodeRow } from '../../../nodes/tree.ts';
import { childPathOf } from '../../../nodes/tree.ts';
import { copySignupUrl, takesSignups } from '../../../apps/use-cases.ts';
import { findInstance } from '../../../apps/instances.ts';
import { signUpOnApp } from '../../../apps/app-users.ts';
import { appSignupPage } from '../../../ui/apps.ts';
import { queryMsg, wantsHtml } from '../../io.ts';
import { refuseCrossSite } from '../../origin.ts';
import { handoff, signIn } from '../../sessions.ts';
import { strictAttempt } from '../../../ratelimit/http.ts';
import { bodies, bodyOf, pageQuery } from './schemas.ts';
import {
  appOf,
  backTo,
  formPost,
  hostUrl,
  instanceUrl,
  linksFor,
  mainLogin,
  namedApp,
  namedDocument,
  refOf,
  sendPage,
} from './shared.ts';

const signup: RoutePlugin = async (app, { services: s }) => {
  app.get('/_/app/signup', { schema: { querystring: pageQuery } }, async (req, reply) => {
    let node: NodeRow;
    try {
      node = await appOf(req, 'signup');
    } catch (err) {
      // The "get your own copy" link of an app's page, followed on someone's copy of it: the app's sign-up.
      const copy = err instanceof KilnError && err.status === 404 ? await namedDocument(req) : undefined;
      const elsewhere = copy && (await copySignupUrl(req.ctx, copy));
      if (elsewhere) return reply.redirect(elsewhere, 302);
      throw err;
    }
    const actor = req.caller.actor;
    const instance = actor ? await findInstance(s, actor.accountId, node.id) : undefined;
    const signedIn = actor
      ? { username: actor.username, instanceUrl: instance ? instanceUrl(s, actor.username, instance) : undefined }
      : undefined;
    return sendPage(reply, appSignupPage({ app: refOf(node), msg: queryMsg(req), signedIn, mainLogin: mainLogin(s) }));
  });

  // What an app's page may ask about itself (the app starter's script): whether it is the app (it takes
  // sign-ups) or someone's copy of one, and where "get your own copy" signs up. 404 for a document the
  // caller cannot see.
  app.get('/_/app/info', { schema: { querystring: pageQuery } }, async (req, reply) => {
    const node = await namedDocument(req);
    if (!node) throw notFound('No such document.');
    const isApp = await takesSignups(req.ctx, node);
    const signupUrl = isApp
      ? `${hostUrl(s, req)}/_/app/signup?app=${encodeURIComponent(childPathOf(node))}`
      : ((await copySignupUrl(req.ctx, node)) ?? null);
    return reply
      .header('cache-control', 'private, no-cache')
      .send({ app: isApp, copy: node.source_node_id !== null, signupUrl });
  });

  app.post(
    '/_/app/signup',
    { schema: { body: bodies.signup }, attachValidation: true },
    formPost(
      backTo('signup'),
      (req, msg) => appSignupPage({ app: namedApp(req), msg, mainLogin: mainLogin(s) }),
      async (req, reply) => {
        await refuseCrossSite(req, s);
        await strictAttempt(s, req, reply, 'app-signup');
        const node = await appOf(req, 'signup');
        const { email, password, username } = bodyOf(bodies.signup, req);
        if (!email) throw badRequest('Email is required.', 'missing-field');
        if (!password) throw badRequest('Password is required.', 'missing-field');
        const links = linksFor(s, req, node);
        const { person, instance } = await signUpOnApp(s, { app: node, email, password, username, links });
        const login = await signIn(req, reply, s, person.id);
        const url = instanceUrl(s, person.username, instance);
        // The app user's session lives on their own host: the browser goes there through the handshake.
        const next = await handoff(s, req, login, url);
        if (wantsHtml(req)) return reply.redirect(next, 302);
        return reply.code(201).send({
          signInUrl: next,
          msg: `Welcome, ${person.username}. Your copy is ${instance.name}; confirm your email (we sent a link) to save it.`,
          msgType: 'success',
          username: person.username,
          emailConfirmed: false,
          instance: { id: instance.id, name: instance.name, url, sourceNodeId: node.id },
        });
      },
    ),
  );
};

export default signup;
