// Instances: an app user's own, independent copy of a multi-tenant app's HTML.
//
// - An instance is a `site` node owned by the app user, at the top level of the app user's tree
//   (served at `<appuser>.<root>/<instance name>`), with `source_node_id` = the app. It is a copy:
//   editing the app later never changes it.
// - Names follow the spec's sequence `<appname>.html`, `<appname>-1.html`, `<appname>-2.html` …, the
//   first one not taken (the app keeps its own extension, .html or .htmlclay). Document names are
//   unique across Kiln, and the app itself holds `<appname>.html`, so the first instance of
//   `todo.html` is `todo-1.html`. (Index apps are the exception: `index.html` is every account's own
//   home page, so the first instance of an `index.html` app is the app user's `index.html`.)
// - Race-safe: the free name is probed, then inserted; a concurrent signup that took the same name
//   first makes the unique index refuse ours, and we try the next free name in a new transaction.
// - The copy goes through the save pipeline: node, first version and content in one transaction
//   (`writeDocument`, saved-by kind `instance`), stylesheet and events after commit.
import { insertNode, instanceOf, namesTaken, siteWithContent } from '../store/nodes.ts';
import { personFacts } from '../accounts/people.ts';
import type { Services } from '../services.ts';
import type { Db, Tx, NodeRow } from '../store/schema.ts';
import { KilnError, notFound } from '../errors.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { limits } from '../limits.ts';
import { isGlobalDocumentName, nodeNameProblem } from '../core/names.ts';
import { writeDocument } from '../save/pipeline.ts';
import { inTransaction } from '../store/transaction.ts';
import { newNodeRow } from '../nodes/rows.ts';

const EXT = /\.(html|htmlclay)$/i;
/** Names probed per query while looking for the first free one. */
const PROBE_BATCH = 100;
/** Inserts tried before giving up (each lost race moves on to the next free name). */
const MAX_ATTEMPTS = 25;

/** The n-th name of the sequence for an app named `appName`: n = 0 is the app's own name,
 *  then `<base>-<n><ext>`, the base shortened when the name would pass the length limit. */
export function instanceName(appName: string, n: number): string {
  const ext = EXT.exec(appName)?.[0] ?? '.html';
  const base = appName.slice(0, appName.length - (EXT.test(appName) ? ext.length : 0));
  if (n === 0) return base + ext;
  const suffix = `-${n}`;
  const room = limits.nameLength - ext.length - suffix.length;
  // A shortened base must not end in a space or dot (names may not have runs of either).
  const short = base.length > room ? base.slice(0, room).replace(/[ .]+$/, '') : base;
  return short + suffix + ext;
}

/** The instance of `appId` the account owns (the first one when there are several), or undefined. */
export async function findInstance(
  s: Services,
  ownerId: number,
  appId: number,
  db: Db = s.database.db,
): Promise<NodeRow | undefined> {
  return instanceOf(db, ownerId, appId);
}

/** An app user's home: its instance of the app it signed up on, or undefined. */
export async function signupInstance(s: Services, accountId: number): Promise<NodeRow | undefined> {
  const person = await personFacts(s, accountId);
  if (!person?.signupAppId) return undefined;
  return findInstance(s, accountId, person.signupAppId);
}

export interface CreateInstanceOptions {
  /** When the account already owns an instance of the app, return it instead of making another
   *  (checked under a lock on the account, so two concurrent sign-ins make one). */
  reuseExisting?: boolean;
}

/** Copies the app's current HTML into a new instance owned by `ownerId`. 404 when the app is gone. */
export async function createInstance(
  s: Services,
  ownerId: number,
  appId: number,
  opts: CreateInstanceOptions = {},
): Promise<NodeRow> {
  const taken = new Set<number>();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    let made: NodeRow | undefined;
    let tried = -1;
    try {
      made = await inTransaction(s, async (trx, after) => {
        // Instances of one account are made one at a time (a reused instance is never doubled).
        await s.database.lock.row(trx, 'accounts', ownerId);
        if (opts.reuseExisting) {
          const existing = await findInstance(s, ownerId, appId, trx);
          if (existing) return existing;
        }
        // Copies of one app are named one at a time (they queue on the app's row), so concurrent
        // signups rarely race for a name; the unique index settles any race that remains.
        await s.database.lock.row(trx, 'nodes', appId);
        const app = await siteWithContent(trx, appId);
        if (app?.type !== 'site' || !app.html) throw notFound('No such app.');
        const n = await firstFreeNumber(trx, ownerId, app.name, taken);
        tried = n;
        const name = instanceName(app.name, n);
        if (nodeNameProblem(name, 'site')) throw new KilnError(500, `Could not name an instance of "${app.name}".`);
        const bytes = Buffer.from(app.html);
        const now = s.clock.now().toISOString();
        const node = await insertNode(
          trx,
          newNodeRow({ ownerId, parentId: 0, type: 'site', name, path: '', now }, { source_node_id: app.id }),
        );
        const written = await writeDocument(s, trx, after, {
          nodeId: node.id,
          bytes,
          by: { kind: 'instance', accountId: ownerId, writer: null },
        });
        return {
          ...node,
          checksum: written.checksum,
          size: written.size,
          modified_at: now,
          saved_by_account_id: ownerId,
        };
      });
    } catch (err) {
      // Someone took this name between our probe and our insert: the next free one.
      if (isUniqueViolation(err) && tried >= 0) {
        taken.add(tried);
        continue;
      }
      throw err;
    }
    return made;
  }
  throw new KilnError(503, 'Too many people are signing up at once; try again.', 'busy');
}

/** The smallest n whose name is free for a new top-level site of `ownerId` (and, for names unique
 *  across Kiln, free everywhere), skipping numbers already known taken. One indexed query per batch. */
async function firstFreeNumber(trx: Tx, ownerId: number, appName: string, taken: Set<number>): Promise<number> {
  for (let start = 0; ; start += PROBE_BATCH) {
    const batch: Array<{ n: number; key: string; global: boolean }> = [];
    for (let n = start; n < start + PROBE_BATCH; n++) {
      if (taken.has(n)) continue;
      const name = instanceName(appName, n);
      batch.push({ n, key: name.toLowerCase(), global: isGlobalDocumentName(name) });
    }
    if (batch.length === 0) continue;
    const keys = batch.map((b) => b.key);
    const globalKeys = batch.filter((b) => b.global).map((b) => b.key);
    // Any top-level node of the owner with that name (a name is never shared by two siblings), and
    // any site in Kiln for names unique across Kiln.
    const used = await namesTaken(trx, ownerId, keys, globalKeys);
    const free = batch.find((b) => !used.has(b.key));
    if (free) return free.n;
  }
}
