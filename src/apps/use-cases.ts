// What app pages (/_/app/* on a document host) ask of an app, through the access table: the app a request
// names on the caller's host, a document the caller may see, and where a copy's "get your own copy" leads.
import type { Ctx } from '../context.ts';
import type { NodeRow } from '../nodes/tree.ts';
import { allows, resourceOf } from '../access/authorize.ts';
import { KilnError, notFound } from '../errors.ts';
import { childPathOf, getNode } from '../nodes/tree.ts';
import { usernameOf } from '../accounts/people.ts';
import { documentHostUrl } from '../core/urls.ts';
import { appAt } from './apps.ts';

/** The app at `path` on the caller's host, when the caller may do `action` on it (`signup` needs sign-ups
 *  on; `view` any document): else 404, or the table's refusal. */
export async function openApp(ctx: Ctx, input: { path: string | undefined; action: 'signup' | 'view' }) {
  if (!input.path || ctx.caller.host === null) throw notFound('Which app? Add ?app=<the app’s path> to the address.');
  const node = await appAt(ctx, ctx.caller.host, input.path, { signupsOnly: input.action === 'signup' });
  return ctx.nodes.check(node, input.action);
}

/** The document at `path` on the caller's host when the caller may see it (an app, a copy of one, or
 *  neither); undefined otherwise. */
export async function visibleDocument(ctx: Ctx, input: { path: string | undefined }): Promise<NodeRow | undefined> {
  if (!input.path || ctx.caller.host === null) return undefined;
  try {
    const node = await appAt(ctx, ctx.caller.host, input.path, { signupsOnly: false });
    return (await ctx.nodes.may(node, 'view')) ? node : undefined;
  } catch (err) {
    if (err instanceof KilnError && err.status === 404) return undefined;
    throw err;
  }
}

/** Whether the caller may sign up on this document (an app that takes sign-ups). */
export async function takesSignups(ctx: Pick<Ctx, 'nodes'>, node: NodeRow): Promise<boolean> {
  return node.enable_signups === 1 && (await ctx.nodes.may(node, 'signup'));
}

/** Where the app a copy (an instance) was made from takes sign-ups, on the app's own host: undefined when
 *  `node` is no copy, or its app is gone, takes no sign-ups, or is not one a visitor may sign up on (a
 *  private app's address is never told). A copy's page carries its app's markup, whose "get your own
 *  copy" link names the page it is on: this is where that link leads. */
export async function copySignupUrl(ctx: Ctx, node: NodeRow): Promise<string | undefined> {
  if (node.source_node_id === null) return undefined;
  const app = await getNode(ctx, node.source_node_id);
  if (app?.type !== 'site' || app.enable_signups !== 1) return undefined;
  // Asked for a visitor, whoever asks: the link is followed by someone signing up.
  if (!allows({ actor: null }, resourceOf(app), 'signup')) return undefined;
  const host = documentHostUrl(ctx.config, await usernameOf(ctx, app.owner_id));
  return `${host}/_/app/signup?app=${encodeURIComponent(childPathOf(app))}`;
}
