// What the app pages share: the app a request names (judged by the access table), this host's address,
// where a signed-in app user goes, and how the pages and their refused forms are answered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../../services.ts';
import type { NodeRow } from '../../../store/schema.ts';
import type { AppLinks } from '../../../apps/app-users.ts';
import { KilnError, badRequest, notFound } from '../../../errors.ts';
import { allows, authorize, resourceOf } from '../../../access/authorize.ts';
import { personFacts, usernameOf } from '../../../accounts/people.ts';
import { getNode } from '../../../nodes/tree.ts';
import { childPathOf } from '../../../nodes/find.ts';
import { appAt } from '../../../apps/apps.ts';
import { createInstance, findInstance, signupInstance } from '../../../apps/instances.ts';
import { documentHostUrl, nodeUrlPath } from '../../../core/urls.ts';
import { appHref, type AppRef } from '../../../ui/apps.ts';
import { formPost as formPostTo, parse, sendPage as sendFormPage, textParam } from '../../io.ts';
import { hostAccount } from '../../hosts.ts';
import { appRef } from './schemas.ts';

/** App pages send `Referrer-Policy: same-origin`: with no-referrer Chromium posts their forms with
 *  `Origin: null`, which the cross-site check refuses. */
export function sendPage(reply: FastifyReply, body: string, status = 200) {
  return sendFormPage(reply.header('referrer-policy', 'same-origin'), body, status);
}

/** App form posts go back to their form; a 429 page carries the app pages' referrer policy. */
export const formPost = (
  back: (req: FastifyRequest) => string,
  render: Parameters<typeof formPostTo>[1],
  handler: Parameters<typeof formPostTo>[2],
) => formPostTo(back, render, handler, { sendPage });

/** The `app` path from the body or the query (undefined when neither has one). */
export function appPathOf(req: FastifyRequest): string | undefined {
  return parse(appRef, req.body).app ?? parse(appRef, req.query).app;
}

/** Where a refused form goes back to: its page for the same app. */
export const backTo = (page: 'signup' | 'login' | 'reset') => (req: FastifyRequest) =>
  `/_/app/${page}?app=${encodeURIComponent(appPathOf(req) ?? '')}`;

/** The app as a refused form named it (its page is drawn again without looking it up). */
export function namedApp(req: FastifyRequest): AppRef {
  const path = appPathOf(req) ?? '';
  return { name: path, path };
}

export const refOf = (app: NodeRow): AppRef => ({ name: app.name, path: childPathOf(app) });

/** Where developers sign in (never on an app's host). */
export const mainLogin = (s: Services) => `${s.config.baseUrl}/_/login`;

/** The app named by the request: `signup` needs signups on; the others any visible document. */
export async function appOf(s: Services, req: FastifyRequest, action: 'signup' | 'view'): Promise<NodeRow> {
  const accountId = hostAccount(req);
  const path = appPathOf(req);
  if (!path) throw notFound('Which app? Add ?app=<the app’s path> to the address.');
  const node = await appAt(s, accountId, path, { signupsOnly: action === 'signup' });
  authorize({ actor: req.actor }, resourceOf(node), action);
  return node;
}

/** The document the request names on this host, when the caller may see it (any document: an app, a
 *  copy of one, or neither); undefined otherwise. */
export async function namedDocument(s: Services, req: FastifyRequest): Promise<NodeRow | undefined> {
  const path = appPathOf(req);
  if (!path) return undefined;
  try {
    const node = await appAt(s, hostAccount(req), path, { signupsOnly: false });
    return allows({ actor: req.actor }, resourceOf(node), 'view') ? node : undefined;
  } catch (err) {
    if (err instanceof KilnError && err.status === 404) return undefined;
    throw err;
  }
}

/** Where the app a copy (an instance) was made from takes sign-ups, on the app's own host: undefined when
 *  `node` is no copy, or its app is gone, takes no sign-ups, or is not one a visitor may sign up on (a
 *  private app's address is never told). A copy's page carries its app's markup, whose "get your own
 *  copy" link names the page it is on: this is where that link leads. */
export async function copySignupUrl(s: Services, node: NodeRow): Promise<string | undefined> {
  if (node.source_node_id === null) return undefined;
  const app = await getNode(s, node.source_node_id);
  if (app?.type !== 'site' || app.enable_signups !== 1) return undefined;
  if (!allows({ actor: null }, resourceOf(app), 'signup')) return undefined;
  const host = documentHostUrl(s.config, await usernameOf(s, app.owner_id));
  return `${host}/_/app/signup?app=${encodeURIComponent(childPathOf(app))}`;
}

/** The app when one is named and visible, else undefined (pages that work without one). */
export async function optionalApp(s: Services, req: FastifyRequest): Promise<NodeRow | undefined> {
  if (!appPathOf(req)) return undefined;
  try {
    return await appOf(s, req, 'view');
  } catch (err) {
    if (err instanceof KilnError && err.status === 404) return undefined;
    throw err;
  }
}

/** The base URL of this request's host, built from configuration (never from a spoofable header
 *  on Kiln's own hosts; a custom domain was matched against the active domains). */
export function hostUrl(s: Services, req: FastifyRequest): string {
  if (req.site.kind === 'account') return documentHostUrl(s.config, req.site.username);
  if (req.site.kind === 'domain') return `${s.config.secure ? 'https' : 'http'}://${req.site.domain}`;
  return s.config.baseUrl;
}

export function linksFor(s: Services, req: FastifyRequest, app: NodeRow): AppLinks {
  return { hostUrl: hostUrl(s, req), appName: app.name, appPath: childPathOf(app) };
}

export const instanceUrl = (s: Services, username: string, instance: NodeRow) =>
  documentHostUrl(s.config, username) + nodeUrlPath(instance);

/** Where a signed-in person goes for this app: their instance (an app user of it without one gets
 *  one while the app takes signups), else the app itself. */
export async function destination(
  s: Services,
  req: FastifyRequest,
  who: { accountId: number; username: string },
  app: NodeRow,
): Promise<string> {
  let instance = await findInstance(s, who.accountId, app.id);
  if (!instance && app.enable_signups === 1) {
    const person = await personFacts(s, who.accountId);
    if (person?.accountType === 'app_user' && person.signupAppId === app.id)
      instance = await createInstance(s, who.accountId, app.id, { reuseExisting: true });
  }
  return instance ? instanceUrl(s, who.username, instance) : hostUrl(s, req) + appHref(refOf(app));
}

/** The account's instance of the app it signed up on (for pages after a link). */
export async function ownInstanceUrl(s: Services, accountId: number): Promise<string | undefined> {
  const person = await personFacts(s, accountId);
  const instance = await signupInstance(s, accountId);
  return person && instance ? instanceUrl(s, person.username, instance) : undefined;
}

/** The token of a mailed link, by its shape (400 `invalid-token` otherwise). */
export function tokenOf(req: FastifyRequest): string {
  const t = textParam(req, 'token');
  if (!/^[A-Za-z0-9_-]{10,200}$/.test(t)) throw badRequest('This link is invalid or has expired.', 'invalid-token');
  return t;
}
