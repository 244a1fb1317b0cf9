// The main app's home page `/` (the documents catch-all hands it GET / on the main host).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { countAccounts } from '../accounts/people.ts';
import { queryMsg, sendPage } from './io.ts';
import { landingPage } from '../ui/auth-pages.ts';
import { instanceSettings } from '../admin/admin.ts';

/** The main app's `/`: first-run setup while no account exists, the dashboard when signed in, else a landing page.
 *  The documents plugin calls this for GET/HEAD `/` on the main host. */
export async function mainHome(req: FastifyRequest, reply: FastifyReply, s: Services): Promise<FastifyReply> {
  if (!(await isSetUp(s))) return reply.redirect('/_/setup', 302);
  if (req.caller?.actor) return reply.redirect('/_/dashboard', 302);
  const signupsOpen = (await instanceSettings(s)).signups === 'open';
  return sendPage(reply, landingPage({ msg: queryMsg(req), signupsOpen }));
}

/** Once an account exists the instance stays set up; remember it so `/` costs no query. */
const setUpInstances = new WeakSet<Services>();
export async function isSetUp(s: Services): Promise<boolean> {
  if (setUpInstances.has(s)) return true;
  if ((await countAccounts(s)) === 0) return false;
  setUpInstances.add(s);
  return true;
}

/** Setup just made the first account. */
export function markSetUp(s: Services): void {
  setUpInstances.add(s);
}
