// Contact messages: what hyperclayjs's `sendMessage` posts from a page (the form's fields plus the
// behaviour data it collected) is checked for a human, kept for the page's owner, and announced to them
// by mail. The owner reads, deletes and exports them from the dashboard's inbox.
import type { Services } from '../services.ts';
import { badRequest, notFound } from '../errors.ts';
import { deleteMessage, insertMessage, markRead, messagesOf, unreadCount } from '../store/messages.ts';
import { personRow } from '../store/accounts.ts';
import { csvCell } from '../core/csv.ts';

/** Fields a message may have, and how long each may be. */
export const MESSAGE_LIMITS = { fields: 30, nameLength: 100, valueLength: 5000 };
/** The honeypot: a form field people never see, so never fill (`<input name="website" hidden>`). */
export const HONEYPOT_FIELDS = ['website', '_gotcha', 'hp'];
/** A score from here up is a robot's. */
const BOT_SCORE = 3;

/** What hyperclayjs's behaviour collector reports, as the route reads it (anything it does not
 *  recognise counts as nothing done). */
export interface Behaviour {
  webdriver: boolean;
  /** Milliseconds on the page (0 when not a finite number). */
  timeSpent: number;
  /** Clicks, touches, focus, keyboard and mouse events recorded. */
  interactions: number;
}

/** A contact form as posted: its text fields (named at most `nameLength`, at most `fields` of them,
 *  values cut to `valueLength`) and the behaviour data, absent when the page has no collector. */
export interface ContactMessage {
  fields: Record<string, string>;
  behaviour: Behaviour | undefined;
}

/** How robot-like the behaviour data is: automation flag, no time spent, nothing touched. */
export function botScore(b: Behaviour | undefined): number {
  if (!b) return BOT_SCORE; // a page without the collector
  let score = 0;
  if (b.webdriver) score += BOT_SCORE;
  if (b.timeSpent < 1500) score += 1;
  if (b.interactions === 0) score += 2;
  return score;
}

/** Checks and keeps a message for the owner of `page`; mails them. 400 `bot-suspected` for robots. */
export async function receiveMessage(
  s: Services,
  ownerId: number,
  page: string,
  message: ContactMessage,
): Promise<void> {
  const fields = { ...message.fields };
  const score =
    botScore(message.behaviour) + (HONEYPOT_FIELDS.some((h) => (fields[h] ?? '').trim() !== '') ? BOT_SCORE : 0);
  if (score >= BOT_SCORE) throw badRequest('This message looks automated, so it was not sent.', 'bot-suspected');
  for (const h of HONEYPOT_FIELDS) delete fields[h];
  if (Object.values(fields).every((v) => v.trim() === '')) throw badRequest('The message is empty.', 'invalid');
  await insertMessage(s.database.db, { ownerId, page, fields, score, at: s.clock.now().toISOString() });
  const owner = await personRow(s.database.db, { id: ownerId });
  if (owner)
    await s.mailer
      .send({
        to: owner.email,
        subject: `New message from ${page}`,
        text: [
          `A visitor of ${page} sent you a message:`,
          '',
          ...Object.entries(fields).map(([k, v]) => `${k}: ${v}`),
          '',
          `Your inbox: ${s.config.baseUrl}/_/dashboard/messages`,
        ].join('\n'),
      })
      .catch((err) => console.error('mailing a message notice failed:', err));
}

export interface InboxMessage {
  id: number;
  page: string;
  fields: Record<string, string>;
  at: string;
  read: boolean;
}

export async function inbox(s: Services, ownerId: number): Promise<{ unread: number; messages: InboxMessage[] }> {
  const rows = await messagesOf(s.database.db, ownerId);
  return {
    unread: rows.filter((r) => r.read_at === null).length,
    messages: rows.map((r) => ({
      id: r.id,
      page: r.page,
      fields: JSON.parse(r.fields) as Record<string, string>,
      at: r.created_at,
      read: r.read_at !== null,
    })),
  };
}

export const unread = (s: Services, ownerId: number) => unreadCount(s.database.db, ownerId);

export async function readMessages(s: Services, ownerId: number, id?: number): Promise<number> {
  return markRead(s.database.db, ownerId, s.clock.now().toISOString(), id);
}

export async function removeMessage(s: Services, ownerId: number, id: number): Promise<void> {
  if (!(await deleteMessage(s.database.db, ownerId, id))) throw notFound('No such message.');
}

/** The inbox as CSV (one row a message, one column a field name; formula triggers neutralised: src/core/csv.ts). */
export function messagesCsv(messages: InboxMessage[]): string {
  const names = [...new Set(messages.flatMap((m) => Object.keys(m.fields)))];
  const head = ['sent', 'page', ...names].map(csvCell).join(',');
  const rows = messages.map((m) => [m.at, m.page, ...names.map((n) => m.fields[n] ?? '')].map(csvCell).join(','));
  return `${[head, ...rows].join('\r\n')}\r\n`;
}
