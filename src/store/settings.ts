// Instance settings every process shares (a name → value table): what an administrator sets on
// /_/admin. The instance secret lives in the same table (instance-secret.ts).
import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';

export async function readSetting(db: Kysely<DB>, name: string): Promise<string | undefined> {
  return (await db.selectFrom('instance_settings').select('value').where('name', '=', name).executeTakeFirst())?.value;
}

export async function writeSetting(db: Kysely<DB>, name: string, value: string): Promise<void> {
  await db
    .insertInto('instance_settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute();
}
