// Share tokens: the owner of a document hands out a link `…/<document>?token=<share token>`; whoever
// opens it while sharing is on becomes a share guest of that one document (the access table's
// `owner_or_guest`): nobody signed in is raised to `app_user`, a developer stays a developer, and the
// guest may view (even a private document), save and use the live lane, never edit code or see versions.
//
// - The token is 32 random bytes, base64url (43 characters). Only its SHA-256 is stored (in
//   `nodes.share_token`), like sessions and sync keys: the link is shown when it is made (enabling
//   sharing, or regenerating) and cannot be shown again.
// - `?token=` sets the cookie `share_<sitename>` (host-only, httpOnly, SameSite=lax, Secure when
//   BASE_URL is https, one year) holding the token; every later request proves the grant with it
//   (reading and setting it: src/http/share-grant.ts).
// - Disabling sharing or regenerating clears or replaces the stored hash in one UPDATE, so every old
//   cookie stops working on its next request; a `share-revoked` event on the document's channel
//   closes streams that were opened on a share grant (in every process).
import { usernameOf } from '../store/accounts.ts';
import { sharedNodeByToken, updateNodeIf } from '../store/nodes.ts';
import { timingSafeEqual } from 'node:crypto';
import type { Services } from '../services.ts';
import type { Ctx } from '../context.ts';
import { framingAllowed, setFramingAllowed } from './framing.ts';
import type { Config } from '../config.ts';
import type { NodeRow } from '../store/schema.ts';
import { getNode } from '../nodes/tree.ts';
import { randomToken } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import { channels } from '../events/bus.ts';
import { publishSoon } from '../events/publish.ts';
import { badRequest, notFound } from '../errors.ts';
import { documentHostUrl, nodeUrlPath } from '../core/urls.ts';

/** Random bytes in a share token. */
const SHARE_TOKEN_BYTES = 32;
/** base64url of 32 bytes. Anything else presented is not even hashed. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** The query parameter of a share link. */
export const TOKEN_PARAM = 'token';

// ------------------------------------------------------------------ checking a grant

/** The cookie that carries a document's share token: `share_<sitename>`, where sitename is the
 *  document's name without extension (lowercased; characters a cookie name cannot hold become `_`).
 *  Index documents in folders (whose names repeat within an account) carry their folder path too. */
export function shareCookieName(node: Pick<NodeRow, 'name' | 'path'>): string {
  let site = node.name.replace(/\.(html|htmlclay)$/i, '');
  if (node.path && site.toLowerCase() === 'index') site = `${node.path}/${site}`;
  const safe = site
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '_')
    .slice(0, 100);
  return `share_${safe}`;
}

/** True when `token` is the document's share token and sharing is on. Compares SHA-256 digests in
 *  constant time. */
export function isValidShareToken(node: Pick<NodeRow, 'share_enabled' | 'share_token'>, token: unknown): boolean {
  if (node.share_enabled !== 1 || !node.share_token || typeof token !== 'string' || !TOKEN_SHAPE.test(token))
    return false;
  const presented = Buffer.from(sha256(token), 'hex');
  const stored = Buffer.from(node.share_token, 'hex');
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}

/** True when `token` is the share token of a shared document of the account (whichever document). */
export async function isLiveShareToken(s: Services, token: string, ownerId: number): Promise<boolean> {
  if (!TOKEN_SHAPE.test(token)) return false;
  const node = await sharedNodeByToken(s.database.db, sha256(token));
  return node?.owner_id === ownerId && isValidShareToken(node, token);
}

// ------------------------------------------------------------------ the owner's operations

export interface ShareState {
  shareEnabled: boolean;
  /** Only when a token was just made: the link cannot be shown again. */
  shareUrl?: string;
  node: NodeRow;
}

/** A share link of a document (on its owner's document host). */
function shareUrlOf(
  config: Config,
  ownerUsername: string,
  node: Pick<NodeRow, 'path' | 'name'>,
  token: string,
): string {
  return `${documentHostUrl(config, ownerUsername)}${nodeUrlPath(node)}?${TOKEN_PARAM}=${token}`;
}

/** Turns sharing on or off. Turning it on makes a new token (an old link never comes back);
 *  turning it off forgets the token and closes share guests' streams. Callers authorize `manage`. */
export async function setSharing(s: Services, node: NodeRow, enabled: boolean): Promise<ShareState> {
  assertShareable(node);
  if (enabled) {
    if (node.share_enabled === 1 && node.share_token) return { shareEnabled: true, node };
    return issueToken(s, node);
  }
  const { db } = s.database;
  const changed = await updateNodeIf(db, node.id, { share_enabled: 0, share_token: null }, { share_enabled: 1 });
  if (changed) await publishRevocation(s, node.id);
  return { shareEnabled: false, node: changed ?? (await reread(s, node.id)) };
}

/** A new token: the old link (and every cookie made from it) stops working at once. Turns sharing on. */
export async function regenerateShareToken(s: Services, node: NodeRow): Promise<ShareState> {
  assertShareable(node);
  return issueToken(s, node);
}

async function issueToken(s: Services, node: NodeRow): Promise<ShareState> {
  const token = randomToken(SHARE_TOKEN_BYTES);
  const { db } = s.database;
  const updated = await updateNodeIf(db, node.id, { share_enabled: 1, share_token: sha256(token) });
  if (!updated) throw notFound('No such document.');
  // Whatever token was there before no longer works: its guests' streams close (a no-op when none).
  await publishRevocation(s, node.id);
  const owner = await usernameOf(db, updated.owner_id);
  return { shareEnabled: true, shareUrl: shareUrlOf(s.config, owner, updated, token), node: updated };
}

function assertShareable(node: NodeRow) {
  if (node.type !== 'site') throw badRequest('Only documents can be shared.', 'not-a-document');
}

async function reread(s: Services, nodeId: number): Promise<NodeRow> {
  const n = await getNode(s, nodeId);
  if (!n) throw notFound('No such document.');
  return n;
}

/** Tells every process that share grants of this document are gone. A failed publish is logged,
 *  not thrown: the state change has committed and every new request is already refused. */
async function publishRevocation(s: Services, nodeId: number) {
  // Waits for Redis only while it is connected: while it is away the event waits in the bus's outbox.
  await publishSoon(
    s,
    channels.document(nodeId),
    { type: 'share-revoked', nodeId },
    `share revocation of node ${nodeId}`,
  );
}

// ------------------------------------------------------------------ the sharing door's use cases

/** What the sharing page shows of a document the caller may manage (a team's owners and editors too; a viewer
 *  403 `viewer`, the table's answer as at every door). */
export interface SharingView {
  node: NodeRow;
  shareEnabled: boolean;
  framingAllowed: boolean;
}

/** The document to share, opened for `manage` through the table: only documents are shared. */
async function documentToShare(ctx: Pick<Ctx, 'nodes'>, nodeId: number): Promise<NodeRow> {
  const node = await ctx.nodes.open(nodeId, 'manage');
  assertShareable(node);
  return node;
}

const isShared = (node: NodeRow) => node.share_enabled === 1 && !!node.share_token;

/** The sharing page's state of a document. */
export async function sharingOf(ctx: Pick<Ctx, 'nodes'>, input: { nodeId: number }): Promise<SharingView> {
  const node = await documentToShare(ctx, input.nodeId);
  return { node, shareEnabled: isShared(node), framingAllowed: framingAllowed(node) };
}

/** Sharing on or off (`was`: whether it was on before). */
export async function shareDocument(
  ctx: Ctx,
  input: { nodeId: number; enabled: boolean },
): Promise<ShareState & { was: boolean }> {
  const node = await documentToShare(ctx, input.nodeId);
  return { ...(await setSharing(ctx, node, input.enabled)), was: isShared(node) };
}

/** A new share link; `allowed` runs once the document is known to be the caller's to share (the door's rate
 *  limit: a refusal before it costs nothing). */
export async function newShareLink(
  ctx: Ctx,
  input: { nodeId: number; allowed?: () => Promise<unknown> },
): Promise<ShareState> {
  const node = await documentToShare(ctx, input.nodeId);
  await input.allowed?.();
  return regenerateShareToken(ctx, node);
}

/** Whether other sites may frame the document. */
export async function allowFraming(ctx: Ctx, input: { nodeId: number; allowed: boolean }): Promise<NodeRow> {
  return setFramingAllowed(ctx, await documentToShare(ctx, input.nodeId), input.allowed);
}
