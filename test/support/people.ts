// Test shortcuts for accounts: create a person and hold a signed-in session in a client's cookie jar.
import { createPerson, type NewPerson } from '../../src/accounts/people.ts';
import { createSession } from '../../src/accounts/sessions.ts';
import type { TestKiln } from './kiln.ts';
import type { Client } from './client.ts';

let n = 0;
/** A unique, valid person: pass overrides for anything the test cares about. */
export function newPerson(over: Partial<NewPerson> = {}): NewPerson {
  n++;
  const tag = `${process.pid.toString(36)}${n}`;
  return { email: `user${tag}@example.com`, username: `user${tag}`, password: `Kiln-test-pw-${tag}-x9`, emailConfirmed: true, ...over };
}

/** Creates the person and signs `client` in (cookie on the root domain, as the login route sets it). */
export async function signedIn(kiln: TestKiln, client: Client, over: Partial<NewPerson> = {}) {
  const input = newPerson(over);
  const person = await createPerson(kiln.services, input);
  const { token } = await createSession(kiln.services.database.db, person.id, new Date());
  client.jar.store(kiln.config.rootDomain, `auth_token=${token}; Domain=${kiln.config.rootHostname}; Path=/; HttpOnly`);
  return { ...person, password: input.password, token };
}
