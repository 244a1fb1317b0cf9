// Reading a URL of a document host: what the host answers for a path, and what this caller may do with it.
// The route (src/http/routes/documents.ts) parses the request, calls `viewDocument` once and presents the
// answer (cookies, caching and framing headers, the bytes). Every access decision is the table's, through
// `ctx.nodes`: a private name answers as a missing one (its fallback too), a share link's token sets its
// cookie, edit controls go to whoever may save. A neighbour's frame is a visitor (`asVisitor`), whoever's
// cookies ride along.
import type { Actor } from '../access/actor.ts';
import type { Ctx } from '../context.ts';
import type { Row } from '../store/schema.ts';
import { contextOf } from '../context.ts';
import { anonymous } from '../access/caller.ts';
import { KilnError, notFound } from '../errors.ts';
import { isStorageUnavailable } from '../store/errors.ts';
import { nodesFor } from '../nodes/open.ts';
import { resolveDocumentPath, rootFallback, servedBefore, type Resolved } from '../nodes/serve.ts';
import { isValidShareToken } from '../sharing/share.ts';

type NodeRow = Row<'nodes'>;
type ViewCtx = Pick<Ctx, 'caller' | 'nodes' | 'database' | 'clock' | 'documents' | 'metrics'>;

export interface ViewInput {
  /** The host's account. */
  host: number;
  /** The decoded URL path (`/a/app.html/spa/route`). */
  path: string;
  /** A share link's `?token=`: taken on a top-level visit only (never in a neighbour's frame). */
  shareToken?: string;
  /** How the request asks. `pageLoad`: a browser's top-level page load; `wantsHtml`: it accepts a page;
   *  `subresource`: a browser's image, script or style request (never answered by the root fallback). */
  asks: { pageLoad: boolean; wantsHtml: boolean; subresource: boolean };
}

export type View =
  /** The database is away: the public document this URL served last. */
  | { kind: 'last'; last: NonNullable<ReturnType<typeof servedBefore>> }
  /** A valid share link: set its cookie and send the browser to the URL without the token. */
  | { kind: 'share-link'; node: NodeRow; token: string }
  /** Nothing here, asked by whoever keeps the host's pages: the page that says so, with the fix. */
  | { kind: 'no-home'; username: string }
  /** A name that is not there, opened by whoever keeps the host's pages: never an editable fallback. */
  | { kind: 'nothing-here'; username: string; own404: boolean }
  /** The old address of a renamed or moved document. */
  | { kind: 'redirect'; node: NodeRow; rest: string }
  | { kind: 'upload'; node: NodeRow }
  | ({ kind: 'document' } & DocumentView);

export interface DocumentView {
  node: NodeRow;
  /** The URL named no document: the root document (200) or the account's 404.html (`notFound`: 404). */
  fallback: boolean;
  notFound: boolean;
  /** The caller may save it (edit controls). */
  saver: boolean;
  /** The caller is let in by the document's share grant. */
  shareGuest: boolean;
  /** The owner's page load carries the toolbar; an app user not confirmed yet is told why they cannot edit. */
  toolbar: { unconfirmedEmail?: string; appUser: boolean } | null;
  /** What any cookie-less visitor gets (the hot path may keep it). */
  visitorsAnswer: boolean;
  /** What this signed-in person gets on every such request while their session, their account, their role and the
   *  document stay as they are (the hot path may keep it for their session; it hears of every change to those):
   *  never a share guest's (a grant is judged per request), an app user's (confirming their email changes it, and
   *  no event says so) or a fallback's. */
  personsAnswer: boolean;
  /** Anyone may view it (a visitor's `ctx.nodes`): what may be served while the database is away. */
  forAll: boolean;
}

/** The same request as a visitor: a neighbour's frame is answered so, whoever's cookies came. */
export function asVisitor<C extends Ctx>(ctx: C): C {
  return contextOf(ctx, anonymous(ctx.caller.host));
}

export async function viewDocument(ctx: ViewCtx, input: ViewInput): Promise<View> {
  let found: Resolved;
  try {
    found = await resolveDocumentPath(ctx, input.host, input.path);
  } catch (err) {
    const last = isStorageUnavailable(err) ? servedBefore(ctx, input.host, input.path) : null;
    if (!last) throw err;
    return { kind: 'last', last };
  }
  const visit = shareLink(found, input.shareToken);
  if (visit) return visit;
  // A name the caller may not see (private) answers exactly as a name nobody has: the fallback too.
  if (found && !(found.kind === 'document' && found.fallback) && !(await ctx.nodes.may(found.node, 'view'))) {
    found = await rootFallback(ctx, input.host);
    const rootVisit = shareLink(found, input.shareToken);
    if (rootVisit) return rootVisit;
  }
  // The root document answers unknown paths for page loads and scripts (single-page apps), never for a
  // browser's image, script or style request (a missing /favicon.ico is not the home page).
  if (found?.kind === 'document' && found.fallback && input.asks.subresource) throw notFound();
  // Whoever keeps this host's pages, opening an address in a browser: told what is (not) there, with one
  // click to the fix, never an editable fallback page whose save would fail.
  if (!found) {
    const keeper = input.asks.wantsHtml ? await keeperOf(ctx, input.host) : null;
    if (keeper) return { kind: 'no-home', username: keeper.username };
    throw notFound();
  }
  if (found.kind === 'document' && found.fallback && input.asks.wantsHtml && input.asks.pageLoad) {
    const keeper = await keeperOf(ctx, input.host);
    if (keeper) return { kind: 'nothing-here', username: keeper.username, own404: !!found.notFound };
  }
  // A renamed or moved document leads to where it is now (it was judged above, as any name is).
  if (found.kind === 'redirect') return found;
  // A share guest (valid `share_<sitename>` cookie) may open the document even when it is private.
  await ctx.nodes.check(found.node, 'view');
  if (found.kind === 'upload') return found;
  return { kind: 'document', ...(await documentView(ctx, found, input.asks.pageLoad)) };
}

/** `?token=` of the document about to answer, when valid (sharing on, the current token). */
function shareLink(found: Resolved, token: string | undefined): View | null {
  if (found?.kind !== 'document' || token === undefined || !isValidShareToken(found.node, token)) return null;
  return { kind: 'share-link', node: found.node, token };
}

/** Whoever keeps the host's pages: the person who may save the host's own documents (its account, a team's
 *  owners and editors, an app user on their own host), asked of the table with the host as its account's
 *  document. Not `manage` (an app user keeps their own host's pages but manages no tree), and not a save of
 *  the fallback node (a share grant is of one document, not of the host). */
async function keeperOf(ctx: ViewCtx, host: number): Promise<Actor | null> {
  const actor = ctx.caller.actor;
  if (!actor) return null;
  return (await ctx.nodes.mayOnHost(host, 'save')) ? actor : null;
}

async function documentView(
  ctx: ViewCtx,
  found: { node: NodeRow; fallback: boolean; notFound?: boolean },
  pageLoad: boolean,
): Promise<DocumentView> {
  const { node, fallback } = found;
  const actor = ctx.caller.actor;
  const { shareGuest = false } = await ctx.nodes.standingOn(node);
  const saver = await ctx.nodes.may(node, 'save');
  // The owner's page load carries the toolbar (a share guest's never does).
  const owner = saver && !shareGuest && pageLoad;
  // An app user on their own copy before confirming their email cannot edit it yet: the page says why.
  const unconfirmed =
    !owner &&
    !shareGuest &&
    pageLoad &&
    actor?.accountType === 'app_user' &&
    !actor.emailConfirmed &&
    (await refusalOf(ctx, node, 'save')) === 'email-unconfirmed';
  return {
    node,
    fallback,
    notFound: !!found.notFound,
    saver,
    shareGuest,
    toolbar:
      owner || unconfirmed
        ? { unconfirmedEmail: unconfirmed ? actor?.email : undefined, appUser: actor?.accountType === 'app_user' }
        : null,
    visitorsAnswer: !owner && !unconfirmed && !fallback && !shareGuest && !actor,
    personsAnswer: !!actor && actor.accountType !== 'app_user' && !fallback && !shareGuest,
    forAll: nodesFor(ctx.database.db, anonymous(ctx.caller.host)).mayNow(node, 'view'),
  };
}

/** The code of the table's refusal of `action`, or null when the caller may. */
async function refusalOf(ctx: ViewCtx, node: NodeRow, action: 'save'): Promise<string | null> {
  try {
    await ctx.nodes.check(node, action);
    return null;
  } catch (err) {
    if (err instanceof KilnError) return err.code ?? 'refused';
    throw err;
  }
}
