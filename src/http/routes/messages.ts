// Contact messages (src/messages/messages.ts).
//   POST /_/message                        document hosts: hyperclayjs `sendMessage` (JSON: the form's
//                                          fields + behaviorData); 200 {msg, msgType}; 400 bot-suspected;
//                                          429 past 5 an hour from one address
//   GET  /_/dashboard/messages             the owner's inbox (JSON {unread, messages}); opening it reads them
//   GET  /_/dashboard/messages.csv         the inbox as CSV
//   POST /_/dashboard/messages/:id/delete
import { z } from 'zod';
import type { RoutePlugin } from './plugin.ts';
import { assertSameOrigin } from '../origin.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { done, queryMsg, sendPage, wantsHtml } from '../io.ts';
import { MESSAGE_LIMITS } from '../../messages/messages.ts';
import { contactOwner, deleteMessage, inboxCsv, openInbox } from '../../messages/use-cases.ts';
import { inboxPage } from '../../ui/messages.ts';

const INBOX = '/_/dashboard/messages';

/** How many events a list of the collector holds (not a list: none). */
const events = z
  .array(z.unknown())
  .transform((list) => list.length)
  .catch(0);

/** hyperclayjs's behaviour data; what is missing or of another shape counts as nothing done. */
const behaviour = z
  .object({
    webdriver: z.boolean().catch(false),
    // Not a finite number: no time spent.
    timeSpent: z.coerce.number().catch(0),
    interactions: z
      .object({ clicks: events, touches: events, focusEvents: events })
      .catch({ clicks: 0, touches: 0, focusEvents: 0 }),
    keyboardEvents: events,
    mousePositions: events,
  })
  .transform(({ webdriver, timeSpent, interactions: i, keyboardEvents, mousePositions }) => ({
    webdriver,
    timeSpent,
    interactions: i.clicks + i.touches + i.focusEvents + keyboardEvents + mousePositions,
  }));

/** A field's value as the inbox keeps it: text, numbers and flags as text, cut to length; anything
 *  else (null, objects, lists) is dropped, never refused. */
const value = z
  .union([z.string(), z.number(), z.boolean()])
  .transform((v) => String(v).slice(0, MESSAGE_LIMITS.valueLength))
  .optional()
  .catch(undefined);

/** The first fields (in the order posted) with a kept value and a name of bounded length. */
function keptFields(posted: Record<string, string | undefined>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, v] of Object.entries(posted)) {
    if (Object.keys(fields).length >= MESSAGE_LIMITS.fields) break;
    if (name.length <= MESSAGE_LIMITS.nameLength && v !== undefined) fields[name] = v;
  }
  return fields;
}

/** What a page's `sendMessage` posts: its form's fields beside `behaviorData`. Nothing here is refused:
 *  the use case judges what is left (a body that is not a JSON or form object, text for one, has no
 *  fields and no behaviour). */
const schemas = {
  contact: z
    .record(z.string(), z.unknown())
    .pipe(z.object({ behaviorData: behaviour.optional().catch(undefined) }).catchall(value))
    .catch({ behaviorData: undefined })
    .transform(({ behaviorData, ...posted }) => ({ behaviour: behaviorData, fields: keptFields(posted) })),
  // A malformed id names no message: 404, as an unknown one.
  message: z.object({
    id: z
      .string()
      .regex(/^\d{1,15}$/)
      .transform(Number)
      .catch(0),
  }),
  // The page's own `msg` (a signed message) rides along in the query.
  page: z.looseObject({}),
};

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.post(
    '/_/message',
    { config: { host: 'document', answers: 'json' }, bodyLimit: 64 * 1024, schema: { body: schemas.contact } },
    async (req, reply) => {
      // A page posts to its own host; another site (another account's host) may not post for it.
      assertSameOrigin(req);
      await strictAttempt(s, req, reply, 'message');
      const referer = req.headers.referer;
      let page = '/';
      try {
        const u = referer ? new URL(referer) : null;
        if (u && u.host === req.headers.host) page = u.pathname;
      } catch {
        // An unreadable Referer only means the page is not named.
      }
      await contactOwner(req.ctx, { page: `${req.headers.host}${page}`, message: req.body });
      return { msg: 'Message sent', msgType: 'success' };
    },
  );

  app.get(INBOX, { config: { host: 'main' }, schema: { querystring: schemas.page } }, async (req, reply) => {
    // Shown is read: the next visit's count starts from there.
    const { actor, ...box } = await openInbox(req.ctx, { read: wantsHtml(req) });
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', ...box };
    return sendPage(reply, inboxPage({ username: actor.username, ...box, msg: queryMsg(req) }));
  });

  app.get(`${INBOX}.csv`, { config: { host: 'main' } }, async (req, reply) =>
    reply
      .header('cache-control', 'no-store')
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="messages.csv"')
      .send(await inboxCsv(req.ctx)),
  );

  const remove = { config: { host: 'main' as const }, schema: { params: schemas.message } };
  app.post(`${INBOX}/:id/delete`, remove, async (req, reply) => {
    assertSameOrigin(req);
    await deleteMessage(req.ctx, req.params);
    return done(req, reply, 'Message deleted.', { redirect: INBOX });
  });
};

export default plugin;
