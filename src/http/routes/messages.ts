// Contact messages (src/messages/messages.ts).
//   POST /_/message                        document hosts: hyperclayjs `sendMessage` (JSON: the form's
//                                          fields + behaviorData); 200 {msg, msgType}; 400 bot-suspected;
//                                          429 past 5 an hour from one address
//   GET  /_/dashboard/messages             the owner's inbox (JSON {unread, messages}); opening it reads them
//   GET  /_/dashboard/messages.csv         the inbox as CSV
//   POST /_/dashboard/messages/:id/delete
import type { RoutePlugin } from './plugin.ts';
import { authorizeActor } from '../../access/authorize.ts';
import { assertSameOrigin } from '../origin.ts';
import { strictAttempt } from '../../ratelimit/http.ts';
import { bodyOf, done, idParam, queryMsg, sendPage, wantsHtml } from '../io.ts';
import { hostAccount } from '../hosts.ts';
import { inbox, messagesCsv, readMessages, receiveMessage, removeMessage } from '../../messages/messages.ts';
import { inboxPage } from '../../ui/messages.ts';

const INBOX = '/_/dashboard/messages';

const plugin: RoutePlugin = async (app, { services: s }) => {
  app.post(
    '/_/message',
    { config: { host: 'document', answers: 'json' }, bodyLimit: 64 * 1024 },
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
      await receiveMessage(s, hostAccount(req), `${req.headers.host}${page}`, bodyOf(req));
      return { msg: 'Message sent', msgType: 'success' };
    },
  );

  app.get(INBOX, { config: { host: 'main' } }, async (req, reply) => {
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const box = await inbox(s, actor.accountId);
    reply.header('cache-control', 'no-store');
    if (!wantsHtml(req)) return { msg: '', msgType: 'success', ...box };
    // Shown is read: the next visit's count starts from here.
    await readMessages(s, actor.accountId);
    return sendPage(reply, inboxPage({ username: actor.username, ...box, msg: queryMsg(req) }));
  });

  app.get(`${INBOX}.csv`, { config: { host: 'main' } }, async (req, reply) => {
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    const box = await inbox(s, actor.accountId);
    return reply
      .header('cache-control', 'no-store')
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="messages.csv"')
      .send(messagesCsv(box.messages));
  });

  app.post(`${INBOX}/:id/delete`, { config: { host: 'main' } }, async (req, reply) => {
    assertSameOrigin(req);
    const actor = authorizeActor({ actor: req.actor }, null, 'manage');
    await removeMessage(s, actor.accountId, idParam(req));
    return done(req, reply, 'Message deleted.', { redirect: INBOX });
  });
};

export default plugin;
