// What the app pages share: the app a request names (judged by the access table), this host's address,
// where a signed-in app user goes, and how the pages and their refused forms are answered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../../services.ts';
import type { NodeRow } from '../../../nodes/find.ts';
import type { AppLinks } from '../../../apps/app-users.ts';
import { KilnError, badRequest } from '../../../errors.ts';
import { personFacts } from '../../../accounts/people.ts';
import { childPathOf } from '../../../nodes/tree.ts';
import { openApp, visibleDocument } from '../../../apps/use-cases.ts';
import { createInstance, findInstance, signupInstance } from '../../../apps/instances.ts';
import { documentHostUrl, nodeUrlPath } from '../../../core/urls.ts';
import { appHref, type AppRef } from '../../../ui/apps.ts';
import { formPost as formPostTo, parse, sendPage as sendFormPage, textParam } from '../../io.ts';
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
export function appOf(req: FastifyRequest, action: 'signup' | 'view'): Promise<NodeRow> {
  return openApp(req.ctx, { path: appPathOf(req), action });
}

/** The document the request names on this host, when the caller may see it (any document: an app, a
 *  copy of one, or neither); undefined otherwise. */
export function namedDocument(req: FastifyRequest): Promise<NodeRow | undefined> {
  return visibleDocument(req.ctx, { path: appPathOf(req) });
}

/** The app when one is named and visible, else undefined (pages that work without one). */
export async function optionalApp(req: FastifyRequest): Promise<NodeRow | undefined> {
  if (!appPathOf(req)) return undefined;
  try {
    return await appOf(req, 'view');
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
