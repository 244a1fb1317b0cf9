// Deleting the account for good (its export mailed first when asked).
import type { RoutePlugin } from '../plugin.ts';
import { deleteAccount } from '../../../accounts/account.ts';
import { clearSessionCookies } from '../../cookies.ts';
import { done, formPost } from '../../io.ts';
import { bodies } from './schemas.ts';
import { ACCOUNT, developer, developerForm, ended, formBody, renderAccount } from './shared.ts';

const deletion: RoutePlugin = async (app, { services: s }) => {
  app.post(
    `${ACCOUNT}/delete`,
    developerForm(bodies.delete),
    formPost(
      () => ACCOUNT,
      renderAccount,
      async (req, reply) => {
        const actor = developer(req, true);
        const gone = await deleteAccount(s, actor.accountId, formBody(bodies.delete, req));
        await ended(s, gone.ended);
        clearSessionCookies(req, reply, s.config);
        const mailed = gone.exported ? ' A link to its export is on its way to your email (7 days).' : '';
        const msg = `The account ${gone.username} and everything in it are deleted.${mailed}`;
        return done(req, reply, msg, { redirect: '/' });
      },
    ),
  );
};

export default deletion;
