// A fresh instance for tests that run Kiln as child processes: storage (SQLite, or PostgreSQL + Redis
// in that configuration) with a person, a session, a document and an upload, made through the same
// storage the children will use.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { closeServices, createServices } from '../../src/server.ts';
import { createPerson } from '../../src/accounts/people.ts';
import { createNode } from '../../src/nodes/tree.ts';
import { storeUpload } from '../../src/uploads/upload.ts';
import { newPerson, sessionsFor, actingAs } from './people.ts';
import { Client } from './client.ts';
import { freshPostgres, storage } from './kiln.ts';

/** A fresh instance (SQLite, or PostgreSQL + Redis in that configuration) with a person, a document
 *  and an upload, made through the storage the child will use. */
export async function instance(extra: Record<string, string> = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-ops-'));
  const pg = storage === 'postgres' ? await freshPostgres() : null;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(pg ? { DATABASE_URL: pg.url } : {}),
    ...(pg && process.env.KILN_TEST_REDIS_URL ? { REDIS_URL: process.env.KILN_TEST_REDIS_URL } : {}),
    ...extra,
  };
  const config = loadConfig(env);
  const s = await createServices(config);
  const person = await createPerson(s, newPerson());
  const token = (await sessionsFor(s.database.db, config, person.id, person.username)).host;
  await createNode(await actingAs(s, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: `ops-${person.username}.html`,
    html: '<html><body>ops</body></html>',
  });
  const bytes = randomBytes(50_000);
  await storeUpload(s, { ownerId: person.id, plan: 'free', parentId: 0, parentPath: '', fileName: 'data.bin', bytes });
  await closeServices(s);
  const host = `${person.username}.${config.rootDomain}`;
  return {
    env,
    config,
    person,
    host,
    bytes,
    doc: `/ops-${person.username}.html`,
    owner(port: number) {
      const c = new Client(port, host);
      c.jar.store(host, `__Host-auth_token=${token}; Path=/`);
      return c;
    },
    cleanup: async () => {
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
