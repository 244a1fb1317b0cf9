// Connected agents: the OAuth grants a person gave on the consent page, as the account page lists them, revoking
// one (its tokens stop at their next use: they are deleted, and the grant is marked revoked), and the sweep of
// what expired.
import type { Services } from '../services.ts';
import { DAY, limits } from '../limits.ts';
import {
  deleteOAuthClients,
  deleteOAuthObject,
  deleteOAuthObjectsOfGrant,
  idleOAuthClients,
  liveOAuthGrantsOf,
  oauthWriterRow,
  revokeOAuthGrantRow,
  sweepOAuthRows,
} from '../store/oauth.ts';
import { revokeGrants } from '../events/revocations.ts';
import { notFound } from '../errors.ts';
import { oauthGrantIdOf, oauthWriter } from './token.ts';

export interface ConnectedAgent {
  id: number;
  /** The name the client gave itself (Kiln does not vouch for it). */
  client: string;
  clientId: string;
  redirectUri: string;
  /** The account it reaches: the person's own (`personal`) or a team's. */
  account: { username: string; kind: 'personal' | 'team' };
  folder: string | null;
  readOnly: boolean;
  connectedAt: string;
  lastUsedAt: string | null;
}

/** The person's connected agents that still work, newest first. */
export async function connectedAgents(
  s: Pick<Services, 'database' | 'clock'>,
  personId: number,
): Promise<ConnectedAgent[]> {
  const rows = await liveOAuthGrantsOf(s.database.db, personId, s.clock.now().toISOString());
  return rows.map((r) => ({
    id: r.id,
    client: r.client_name,
    clientId: r.client_id,
    redirectUri: r.redirect_uri,
    account: { username: r.account_username, kind: r.account_kind === 'team' ? 'team' : 'personal' },
    folder: r.folder,
    readOnly: r.read_only === 1,
    connectedAt: r.created_at,
    lastUsedAt: r.last_used_at,
  }));
}

/** Disconnects one of the person's agents: its grant is revoked and its codes and tokens deleted, so its next
 *  call is refused (401) and it cannot refresh; streams it holds close. Returns the client's name; 404 when it is
 *  not theirs or gone. */
export async function revokeConnectedAgent(
  s: Pick<Services, 'database' | 'clock' | 'hub' | 'events'>,
  personId: number,
  id: number,
): Promise<string> {
  const { db } = s.database;
  const revoked = await revokeOAuthGrantRow(db, { id, personId }, s.clock.now().toISOString());
  if (!revoked) throw notFound('No such connected agent.');
  await deleteOAuthObjectsOfGrant(db, revoked.grant_id);
  await deleteOAuthObject(db, 'Grant', revoked.grant_id);
  await revokeGrants(s, [oauthWriter(id)]);
  return revoked.client_name;
}

/** The name an OAuth grant's client gave itself, for a writer `oauth:<id>` (what the activity feed and the MCP
 *  door's agent naming show), or null when the writer is not an OAuth grant's (or the grant is forgotten). */
export async function oauthClientNameOf(s: Pick<Services, 'database'>, writer: string | null | undefined) {
  const id = oauthGrantIdOf(writer);
  return id === null ? null : ((await oauthWriterRow(s.database.db, id))?.client_name ?? null);
}

/** Grants that ended are kept this long (the activity feed names their agents), then forgotten. */
const ENDED_KEPT_MS = 90 * DAY;

/** Deletes expired codes, tokens, consent steps and client registrations' leftovers, grants that ended 90 days
 *  ago, and the registered clients nothing keeps (the hourly sweep). */
export async function sweepOAuth(s: Pick<Services, 'database' | 'clock'>): Promise<void> {
  const now = s.clock.now();
  await sweepOAuthRows(s.database.db, now.toISOString(), new Date(now.getTime() - ENDED_KEPT_MS).toISOString());
  await sweepOAuthClients(s, now);
}

/** Forgets the clients that registered (RFC 7591: anyone may, and a connector registers again when it lost its
 *  registration) and are of no use now: a day after registering without completing an authorization, or when none
 *  of their grants holds a token or was used for 30 days (`limits.oauth`). Their agents, if any, connect again. */
async function sweepOAuthClients(s: Pick<Services, 'database'>, now: Date): Promise<void> {
  const { db } = s.database;
  const { unauthorizedClientMs, idleClientMs } = limits.oauth;
  const registeredBefore = (now.getTime() - unauthorizedClientMs) / 1000;
  const idle = await idleOAuthClients(db, new Date(now.getTime() - idleClientMs).toISOString());
  const gone = idle.filter((c) => registeredAt(c.payload) < registeredBefore).map((c) => c.id);
  await deleteOAuthClients(db, gone);
}

/** When a client registered (its `client_id_issued_at`, seconds); 0 when its payload does not say. */
function registeredAt(payload: string): number {
  try {
    return Number((JSON.parse(payload) as { client_id_issued_at?: unknown }).client_id_issued_at) || 0;
  } catch {
    return 0;
  }
}
