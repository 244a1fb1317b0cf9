// Who an agent is, as the versions list and the activity feed name its writes: "<client> via <grant>"
// ("Claude Code via sync key hcsk_1a2b3c4…"). The client names itself (MCP's `clientInfo`: on every request
// of the 2026-07-28 revision, only in the handshake of the 2025 ones, which a stateless door never sees again;
// then the `kiln mcp` bridge's header, then the User-Agent); the grant is the credential it came with.
import type { Caller } from '../access/caller.ts';
import type { SavedBy } from '../save/saved.ts';
import type { AgentInfo } from './tool.ts';
import type { Executor } from '../store/schema.ts';
import { agentClientOf, saveAgentClient } from '../store/agent-clients.ts';

const MAX_NAME = 60;

/** The protocol versions the door answers (the SDK's: the 2025 ones with a handshake, 2026-07-28 without). */
export const MCP_PROTOCOL_VERSIONS = ['2025-06-18', '2025-11-25', '2026-07-28'];

/** A name as given by a client, made safe to show: printable, one line, bounded; null when nothing is left. */
export function cleanName(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_NAME);
  return name || null;
}

/** The product a User-Agent names first (`claude-code/1.0.3 (…)` → `claude-code`), when it is not a generic
 *  HTTP library's. */
export function userAgentName(ua: string | undefined): string | null {
  const first = /^([A-Za-z][\w.-]*)/.exec(ua ?? '')?.[1];
  if (
    !first ||
    /^(node|undici|node-fetch|axios|python-requests|python-httpx|curl|go-http-client|mozilla)$/i.test(first)
  )
    return null;
  return cleanName(first);
}

/** The names clients gave in their handshake, by credential writer: a 2025 client names itself only in its
 *  `initialize`, and a stateless door answers its later requests with fresh servers, on whichever process a
 *  balancer picks. Kept in the database (src/store/agent-clients.ts), with this process's memory in front. */
const handshakes = new Map<string, { name: string; at: number }>();
const HANDSHAKES = 1_000;
const HANDSHAKE_MS = 24 * 3_600_000;
const MISS_MS = 60_000;

function remember(writer: string, name: string, at: number): void {
  handshakes.delete(writer);
  handshakes.set(writer, { name, at });
  if (handshakes.size > HANDSHAKES) handshakes.delete(handshakes.keys().next().value!);
}

/** Keeps the name a client gave in its handshake with this credential, for every process. */
export async function rememberClient(db: Executor, writer: string, name: string | null, now: Date): Promise<void> {
  if (!name) return;
  remember(writer, name, now.getTime());
  await saveAgentClient(db, writer, name, now.toISOString());
}

/** The name the client of this credential gave in its last handshake (within a day), whichever process heard it.
 *  None known is remembered for a minute too, so a client that never shakes hands (2026-07-28) costs a lookup a
 *  minute, not one a call. */
export async function rememberedClient(db: Executor, writer: string, now: Date): Promise<string | null> {
  let h = handshakes.get(writer);
  if (!h || (!h.name && now.getTime() - h.at > MISS_MS)) {
    const row = await agentClientOf(db, writer);
    h = row ? { name: row.name, at: Date.parse(row.named_at) } : { name: '', at: now.getTime() };
    remember(writer, h.name, h.at);
  }
  return h.name && now.getTime() - h.at < HANDSHAKE_MS ? h.name : null;
}

/** The name an `initialize` message gives its client (its title, else its name), or null. */
export function handshakeName(body: unknown): string | null {
  const m = body as { method?: unknown; params?: { clientInfo?: { name?: unknown; title?: unknown } } } | null;
  if (m?.method !== 'initialize') return null;
  return cleanName(m.params?.clientInfo?.title) ?? cleanName(m.params?.clientInfo?.name);
}

/** The grant a credential is, as people know it: an agent key by its name, an OAuth connection by its client's
 *  (as the account page lists them), a sync key by its prefix (as the dashboard lists keys). */
export function grantName(caller: Caller, token: string | undefined): string {
  if (caller.via !== 'key') return 'key';
  const { writer, grantName } = caller.actor ?? {};
  if (writer?.startsWith('akey:') && grantName) return `agent key “${grantName}”`;
  if (writer?.startsWith('oauth:') && grantName) return `connection “${grantName}”`;
  if (token?.startsWith('hcsk_')) return `sync key ${token.slice(0, 12)}…`;
  return 'key';
}

/** How the versions list and the activity feed name an agent: "<client> via <grant>". */
export const agentName = (agent: AgentInfo) => `${agent.client} via ${agent.grant}`;

/** The writer id an agent's changes are published with: `agent:<its credential's writer>`. */
export const agentWriter = (caller: Caller) => `agent:${caller.actor?.writer ?? 'unknown'}`;

/** The agent's writes: kind `agent`, writing as its `agentWriter`, named by `agentName`. */
export function agentSavedBy(caller: Caller, agent: AgentInfo): SavedBy {
  return {
    kind: 'agent',
    accountId: caller.actor?.accountId ?? null,
    writer: agentWriter(caller),
    agent: agentName(agent),
  };
}

/** An agent's changes of the tree (create, rename, move, delete, upload): its writer and its name, so that the
 *  activity feed names it as it names its saves. */
export const agentChange = (caller: Caller, agent: AgentInfo) => ({
  writer: agentWriter(caller),
  agent: agentName(agent),
});
