// The activity feed of a tree: what changed, when, by whom, from which client (a browser session, a
// sync key, or Kiln itself), kept 90 days. Written beside the change events (src/events/publish.ts).
import type { Services } from '../services.ts';
import { DAY } from '../limits.ts';
import { activityOf, sweepActivity, writerOf } from '../store/activity.ts';
import { dayOf, sweepUsage } from '../ai-edit/budget.ts';
import { treeOwner, type TreeCtx } from './manage.ts';

export const ACTIVITY_DAYS = 90;

export interface ActivityItem {
  at: string;
  kind: string;
  nodeType: string | null;
  path: string;
  oldPath: string | null;
  /** Who: a username (null when Kiln itself, a share-link guest, or the writer is gone). */
  by: string | null;
  /** From where: `browser`, `code editor`, `version restore`, `app user`, `sync key hcsk_ab12…`, `agent key “laptop”`,
   *  `administrator`, `share link` (a guest of the document's share link, no account), an agent over MCP
   *  ("Claude Code via agent key “laptop”", for its saves and its changes of the tree alike; `agent` for a line that
   *  kept no name), or `kiln`. */
  client: string;
  /** An AI edit: the engine, the prompt's and the reply's bytes, the outcome and how long it took. */
  aiEdit?: { engine: string; in: number; out: number; outcome: string; ms: number };
  /** A stale save (src/save/stale.ts): whose change made elsewhere it undid, and the version that holds it. */
  undid?: { by: string; version: number };
}

/** Where a line's change came from, in words (ActivityItem.client). */
function clientOf(
  r: { writer: string | null; client: string | null; kind: string },
  who: Awaited<ReturnType<typeof writerOf>>,
): string {
  if (r.client?.startsWith('agent:')) return r.client.slice(6);
  if (!r.writer) return r.client === 'share' ? 'share link' : 'kiln';
  if (r.writer.startsWith('agent:')) return 'agent';
  if (r.writer.startsWith('key:')) return `sync key ${who?.keyPrefix ?? ''}…`;
  if (r.writer.startsWith('akey:')) return `agent key “${who?.keyName ?? ''}”`;
  if (r.writer.startsWith('oauth:')) return `${who?.agent ?? 'an agent'} (connected agent)`;
  if (who?.admin) return 'administrator';
  if (who?.appUser) return 'app user';
  if (r.kind === 'ai-edit') return r.writer.startsWith('session:') ? 'browser' : 'agent';
  if (r.client === 'editor') return 'code editor';
  if (r.client === 'restore') return 'version restore';
  return 'browser';
}

/** An AI edit line's facts (src/ai-edit/handler.ts writes them), or undefined. */
function aiEditOf(kind: string, engine: string | null, detail: string | null): ActivityItem['aiEdit'] {
  if (kind !== 'ai-edit' || !detail) return undefined;
  try {
    const d = JSON.parse(detail);
    return {
      engine: engine ?? '',
      in: Number(d.in) || 0,
      out: Number(d.out) || 0,
      outcome: String(d.outcome ?? ''),
      ms: Number(d.ms) || 0,
    };
  } catch {
    return undefined;
  }
}

/** A stale save line's facts, or undefined. */
function undidOf(kind: string, detail: string | null): ActivityItem['undid'] {
  if (kind !== 'stale-save' || !detail) return undefined;
  try {
    const d = JSON.parse(detail);
    return { by: String(d.undid ?? ''), version: Number(d.version) || 0 };
  } catch {
    return undefined;
  }
}

/** The newest changes of a tree the caller may change (treeOwner), at most `limit` (1 to 500). */
export async function activityFeed(ctx: TreeCtx, input: { ownerId: number; limit?: number }): Promise<ActivityItem[]> {
  const { db } = ctx.database;
  await treeOwner(ctx, input.ownerId);
  const rows = await activityOf(db, input.ownerId, Math.min(Math.max(input.limit ?? 100, 1), 500));
  const writers = new Map<string, Awaited<ReturnType<typeof writerOf>>>();
  const out: ActivityItem[] = [];
  for (const r of rows) {
    let who: Awaited<ReturnType<typeof writerOf>> = null;
    if (r.writer) {
      if (!writers.has(r.writer)) writers.set(r.writer, await writerOf(db, r.writer));
      who = writers.get(r.writer) ?? null;
    }
    out.push({
      at: r.at,
      kind: r.kind,
      nodeType: r.node_type,
      path: r.path,
      oldPath: r.old_path,
      by: who?.username ?? null,
      aiEdit: aiEditOf(r.kind, r.client, r.detail),
      undid: undidOf(r.kind, r.detail),
      client: clientOf(r, who),
    });
  }
  return out;
}

/** Forgets activity older than 90 days, and AI usage of days before yesterday (the hourly sweep). */
export async function sweepOldActivity(s: Services): Promise<void> {
  await sweepActivity(s.database.db, new Date(s.clock.now().getTime() - ACTIVITY_DAYS * DAY).toISOString());
  await sweepUsage(s.database.db, dayOf(new Date(s.clock.now().getTime() - DAY)));
}
