// Crash safety of the save pipeline: saves run in a loop against a real `kiln serve` child, which is
// killed with SIGKILL at random moments, 50 times (after a random number of acknowledged saves, at a
// random point of those in flight: never after a set time, which a busy machine would fill with fewer
// saves). After every restart the document equals one of the saved versions exactly, its checksum
// matches its bytes, every acknowledged save is in the version chain, and every version reconstructs
// to its contentHash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createPerson } from '../src/accounts/people.ts';
import { versionContent } from '../src/save/history.ts';
import { openDatabase } from '../src/store/db.ts';
import { storedContent } from '../src/store/nodes.ts';
import { spawnKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { storage, freshPostgres } from './support/kiln.ts';
import { newPerson, sessionsFor, actingAs } from './support/people.ts';
import { within } from './support/wait.ts';

const ROUNDS = 50;
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

test(`saves survive SIGKILL at random moments (${ROUNDS} kills)`, { timeout: 1_200_000 }, async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-crash-save-'));
  const pg = storage === 'postgres' ? await freshPostgres() : null;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(pg ? { DATABASE_URL: pg.url } : {}),
  };
  const config = loadConfig(env);
  try {
    // Set up the account, a session and the document through the same storage the child will use.
    const s = await createServices(config);
    const input = newPerson();
    const person = await createPerson(s, input);
    const token = (await sessionsFor(s.database.db, config, person.id, person.username)).host;
    const initial = '<html><body>initial</body></html>';
    const node = await createNode(await actingAs(s, person.id), {
      ownerId: person.id,
      parentId: 0,
      type: 'site',
      name: 'crash-doc.html',
      html: initial,
    });
    await closeServices(s);

    const sent = new Set<string>([initial]);
    const acknowledged: string[] = [];
    let counter = 0;

    for (let round = 0; round < ROUNDS; round++) {
      const kiln = await spawnKiln(env);
      const host = `${person.username}.${config.rootDomain}`;
      const client = new Client(kiln.port, host);
      client.jar.store(host, `__Host-auth_token=${token}; Path=/`);
      const url = `http://${host}/crash-doc.html`;
      // Killed once `target` saves of this round are acknowledged, during the next ones.
      const target = 1 + Math.floor(Math.random() * 15);
      let inRound = 0;
      let reached = () => {};
      const targetReached = new Promise<void>((r) => (reached = r));
      let stop = false;
      const loop = async () => {
        while (!stop) {
          const body = `<html><body><h1>save ${++counter}</h1>${'<p>padding</p>'.repeat(50 + (counter % 400))}</body></html>`;
          sent.add(body);
          try {
            const res = await client.post('/_/save', body, {
              headers: { 'content-type': 'text/plain', 'document-url': url },
            });
            if (res.status === 200) {
              acknowledged.push(body);
              if (++inRound === target) reached();
            }
          } catch {
            return; // the server died mid-request
          }
        }
      };
      const loops = [loop(), loop(), loop()];
      // (The loops end early only when a request fails, and a server that stops acknowledging is given up on
      // after a minute: the assertion below says so.)
      await within(Promise.race([targetReached, Promise.all(loops)]), 60_000, 'saves acknowledged').catch(() => {});
      // A random moment of the saves in flight: the sleep is the randomness of the crash, not a wait.
      await new Promise((r) => setTimeout(r, Math.random() * 30));
      await kiln.kill('SIGKILL');
      stop = true;
      await Promise.all(loops);
      assert.ok(inRound >= target, `round ${round}: ${inRound} of ${target} saves acknowledged before the kill`);

      // Only the database, to read what the child left: the services a server needs are not.
      const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        const row = await database.db
          .selectFrom('nodes')
          .select(['checksum', 'size'])
          .where('id', '=', node.id)
          .executeTakeFirstOrThrow();
        // The bytes as stored: a base and the splice of the saves since (src/core/splice.ts).
        const stored = await storedContent(database.db, node.id);
        assert.ok(stored, `round ${round}: the document has no content`);
        const bytes = Buffer.from(stored.html);
        assert.ok(sent.has(bytes.toString()), `round ${round}: the stored document is not one that was saved`);
        assert.equal(row.checksum, sha(bytes).slice(0, 16), `round ${round}: checksum does not match bytes`);
        assert.equal(row.size, bytes.length);
        const versions = await database.db
          .selectFrom('versions')
          .select(['id', 'backup_number', 'content_hash'])
          .where('node_id', '=', node.id)
          .orderBy('backup_number')
          .execute();
        for (const [i, v] of versions.entries())
          assert.equal(v.backup_number, i + 1, `round ${round}: backup numbers have a gap`);
        assert.equal(versions.at(-1)!.content_hash, sha(bytes), `round ${round}: newest version is not the document`);
        const hashes = new Set(versions.map((v) => v.content_hash));
        for (const body of acknowledged)
          assert.ok(hashes.has(sha(body)), `round ${round}: an acknowledged save was lost`);
        // Reconstruct the versions written since the previous round (and always the newest).
        for (const v of versions.slice(-25)) {
          const { bytes: rebuilt } = await versionContent(database.db, v.id);
          assert.equal(sha(rebuilt), v.content_hash);
        }
      } finally {
        await database.close();
      }
    }
  } finally {
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
