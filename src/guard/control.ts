// The control lane: small messages between an account's devices (Hyperclay Local's sync engine posts them to
// `POST /_/sync/control`; they come back to the account's other devices as `control` frames on the sync
// stream). Kiln applies the types it understands (`data-loss/dismiss` v1: a warning dismissed on one device
// ends here too, when it is about the same data) and relays every well-formed envelope; unknown types are
// relayed and otherwise ignored, never an error, so devices can grow new types without Kiln.
import type { Services } from '../services.ts';
import type { SyncScope } from '../sync/scope.ts';
import { channels } from '../events/bus.ts';
import { findByPath } from '../nodes/find.ts';
import { publishSoon } from '../events/publish.ts';

export interface Envelope {
  type: string;
  v: number;
  payload: Record<string, unknown>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An envelope as devices send it: a non-empty `type` (at most 100 characters), a `payload` object, `v` a
 *  positive integer (absent: 1). Null when malformed. */
export function parseEnvelope(body: unknown): Envelope | null {
  if (!isRecord(body)) return null;
  const { type, payload } = body;
  const v = body.v ?? 1;
  if (typeof type !== 'string' || type === '' || type.length > 100 || !isRecord(payload)) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) return null;
  return { type, v, payload };
}

/** A dismissal's file: a relative document path, no `..`, no backslash. */
function dismissal(e: Envelope): { path: string; hash: string } | null {
  const { fileKey, recoverableDataHash } = e.payload;
  if (e.type !== 'data-loss/dismiss' || e.v !== 1) return null;
  if (typeof fileKey !== 'string' || typeof recoverableDataHash !== 'string') return null;
  if (fileKey.startsWith('/') || fileKey.includes('\\') || fileKey.split('/').includes('..')) return null;
  if (!/\.(html|htmlclay)$/i.test(fileKey) || !/^[0-9a-f]{64}$/.test(recoverableDataHash)) return null;
  return { path: fileKey, hash: recoverableDataHash };
}

/** Applies what Kiln understands of an envelope, then relays it to the account's other devices. */
export async function receiveControl(
  s: Services,
  scope: SyncScope,
  keyId: number,
  envelope: Envelope,
): Promise<{ applied: boolean }> {
  let applied = false;
  const d = dismissal(envelope);
  if (d) {
    const node = await findByPath(s, scope.account.id, d.path);
    if (node?.type === 'site') applied = await s.guard.dismissFromDevice(node, d.hash, scope.actor.writer);
  }
  // Waits for Redis only while it is connected: while it is away the envelope waits in the bus's outbox, in order.
  await publishSoon(
    s,
    channels.account(scope.account.id),
    { type: 'control', envelope, senderKey: keyId },
    `a control envelope (${envelope.type})`,
  );
  return { applied };
}
