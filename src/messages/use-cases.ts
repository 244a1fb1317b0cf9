// Contact messages' use cases: a visitor's message to a document host's owner, and the owner's inbox (main
// app; the table's `manage`: a person signed in, who reads only their own messages).
import type { Ctx } from '../context.ts';
import type { Actor } from '../access/actor.ts';
import { authorizeActor } from '../access/authorize.ts';
import { notFound } from '../errors.ts';
import {
  inbox,
  messagesCsv,
  readMessages,
  receiveMessage,
  removeMessage,
  type ContactMessage,
  type InboxMessage,
} from './messages.ts';

function inboxOwner(ctx: Pick<Ctx, 'caller'>): Actor {
  return authorizeActor({ actor: ctx.caller.actor }, null, 'manage');
}

/** A visitor's message to the owner of the caller's host, from `page` (host and path). */
export async function contactOwner(ctx: Ctx, input: { page: string; message: ContactMessage }): Promise<void> {
  // Only document hosts take messages (the route is mounted there only).
  if (ctx.caller.host === null) throw notFound();
  await receiveMessage(ctx, ctx.caller.host, input.page, input.message);
}

/** The caller's inbox; `read`: they are shown it, so it counts as read from now on. */
export async function openInbox(
  ctx: Ctx,
  input: { read: boolean },
): Promise<{ actor: Actor; unread: number; messages: InboxMessage[] }> {
  const actor = inboxOwner(ctx);
  const box = await inbox(ctx, actor.accountId);
  if (input.read) await readMessages(ctx, actor.accountId);
  return { actor, ...box };
}

/** The caller's inbox as CSV. */
export async function inboxCsv(ctx: Ctx): Promise<string> {
  return messagesCsv((await inbox(ctx, inboxOwner(ctx).accountId)).messages);
}

/** Deletes one of the caller's messages (404 for any other). */
export function deleteMessage(ctx: Ctx, input: { id: number }): Promise<void> {
  return removeMessage(ctx, inboxOwner(ctx).accountId, input.id);
}
