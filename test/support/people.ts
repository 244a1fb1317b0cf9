// Test shortcuts for accounts: create a person and hold signed-in sessions in a client's cookie jar.
import type { Db } from '../../src/store/schema.ts';
import type { Config } from '../../src/config.ts';
import { createPerson, type NewPerson } from '../../src/accounts/people.ts';
import { createHostSession, createLogin } from '../../src/accounts/sessions.ts';
import { authCookieName } from '../../src/http/cookies.ts';
import type { Services } from '../../src/services.ts';
import { contextOf, type Ctx } from '../../src/context.ts';
import { anonymous, personCaller } from '../../src/access/caller.ts';
import { actorOfPerson } from '../../src/accounts/actors.ts';
import { personRow } from '../../src/store/accounts.ts';
import type { TestKiln } from './kiln.ts';
import type { CookieJar, Client } from './client.ts';

let n = 0;
/** A unique, valid person: pass overrides for anything the test cares about. */
export function newPerson(over: Partial<NewPerson> = {}): NewPerson {
  n++;
  const tag = `${process.pid.toString(36)}${n}`;
  return {
    email: `user${tag}@example.com`,
    username: `user${tag}`,
    password: `Kiln-test-pw-${tag}-x9`,
    emailConfirmed: true,
    ...over,
  };
}

export interface Sessions {
  /** The login: the main app's session token. */
  main: string;
  /** A session of that login on the account's own host `<username>.<root>`. */
  host: string;
  /** That host's name, without port. */
  hostName: string;
}

/** A login and a session on the account's own host, as signing in and the session handshake make them. */
export async function sessionsFor(
  db: Db,
  config: Config,
  accountId: number,
  username: string,
  now = new Date(),
): Promise<Sessions> {
  const login = await createLogin(db, accountId, now);
  const hostName = `${username}.${config.rootHostname}`;
  const host = await createHostSession(db, { id: login.id, accountId, expiresAt: login.expiresAt }, hostName, now);
  return { main: login.token, host: host.token, hostName };
}

/** Puts both sessions in a jar as host-only cookies, the way the browser keeps them. */
export function storeSessions(jar: CookieJar, config: Config, sessions: Sessions) {
  const port = /:\d+$/.exec(config.rootDomain)?.[0] ?? '';
  const name = authCookieName(config);
  jar.store(config.rootDomain, `${name}=${sessions.main}; Path=/; HttpOnly`);
  jar.store(sessions.hostName + port, `${name}=${sessions.host}; Path=/; HttpOnly`);
}

/** The same sessions as Playwright cookies for a browser context (host-only: set through an https URL
 *  of the host, which is how the browser's cookie store takes a `__Host-` cookie from outside). */
export function browserCookies(config: Config, sessions: Sessions) {
  const name = authCookieName(config);
  return [
    {
      name,
      value: sessions.main,
      url: `https://${config.rootHostname}/`,
      httpOnly: true,
      secure: true,
      sameSite: 'Lax' as const,
    },
    {
      name,
      value: sessions.host,
      url: `https://${sessions.hostName}/`,
      httpOnly: true,
      secure: true,
      sameSite: 'Lax' as const,
    },
  ];
}

/** Creates the person and signs `client` in on the main app and on the person's own host. */
export async function signedIn(kiln: TestKiln, client: Client, over: Partial<NewPerson> = {}) {
  const input = newPerson(over);
  const person = await createPerson(kiln.services, input);
  const sessions = await sessionsFor(kiln.services.database.db, kiln.config, person.id, person.username);
  storeSessions(client.jar, kiln.config, sessions);
  return { ...person, password: input.password, token: sessions.main, sessions };
}

/** The ctx of the person `accountId` signed in on the main app, for calling use cases directly (writer
 *  `account:<id>`). A suspended or missing person is nobody. Kiln itself: `contextOf(s, SYSTEM)`. */
export async function actingAs<S extends Services>(s: S, accountId: number): Promise<S & Ctx> {
  const row = await personRow(s.database.db, { id: accountId });
  const actor = row ? actorOfPerson(row, `account:${accountId}`) : null;
  return contextOf(s, actor ? personCaller('session', actor, null) : anonymous());
}
