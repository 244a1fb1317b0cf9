// The instance secret: 32 random bytes made on first start and kept in the database, so every process
// of one Kiln signs and checks the same way (message banners, sign-in hints).
import type { Db } from './schema.ts';
import { randomHex } from '../clock.ts';

const NAME = 'instance-secret';

export async function loadInstanceSecret(db: Db): Promise<Buffer> {
  // Two processes starting at once: the first insert wins, the other's does nothing; both read it back.
  await db
    .insertInto('instance_settings')
    .values({ name: NAME, value: randomHex(32) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('instance_settings')
    .select('value')
    .where('name', '=', NAME)
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'hex');
}
