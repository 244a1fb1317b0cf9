// Whether other sites may frame a document (its owner's setting, on the sharing page). Forbidden, every
// answer of the document carries `frame-ancestors 'self'` (src/http/framing.ts), the hot path's too.
import type { Services } from '../services.ts';
import type { NodeRow } from '../store/schema.ts';
import { updateNodeIf } from '../store/nodes.ts';
import { badRequest, notFound } from '../errors.ts';
import { publishHostChanged } from '../events/publish.ts';

/** True when other sites may show the document in a frame (the default). */
export const framingAllowed = (node: Pick<NodeRow, 'forbid_framing'>): boolean => node.forbid_framing !== 1;

/** Allows or forbids framing of the document by other sites; the document as it now is. */
export async function setFramingAllowed(s: Services, node: NodeRow, allowed: boolean): Promise<NodeRow> {
  if (node.type !== 'site') throw badRequest('Only documents have a framing setting.', 'not-a-document');
  if (framingAllowed(node) === allowed) return node;
  const updated = await updateNodeIf(s.database.db, node.id, { forbid_framing: allowed ? 0 : 1 });
  if (!updated) throw notFound('No such document.');
  // Every process forgets the answers it keeps of the account (src/http/hot-path.ts), this one at once.
  await publishHostChanged(s, node.owner_id);
  return updated;
}
