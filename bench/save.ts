// Saves per second through HTTP (POST /_/save, the full pipeline: version diff, content, checksum,
// events) for a 100 KB document with small edits, on SQLite (the embedded default). Goal: ≥ 500/s.
// Also: the version storage of those saves as a share of full copies, and the slowest reconstruction.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { sessionsFor } from '../test/support/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { versionContent } from '../src/save/history.ts';

const SAVES = 2000;
const CONCURRENCY = 4;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-save-'));
const running = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
const s = running.services;
const person = await createPerson(s, {
  email: 'bench@example.com',
  username: 'bench',
  password: 'bench-password-x9-long',
  plan: 'maker',
});
const token = (await sessionsFor(s.database.db, s.config, person.id, person.username)).host;
const rows = Array.from(
  { length: 1300 },
  (_, i) => `    <li class="item" data-id="${i}"><span>Item number ${i}</span> <em>pending</em></li>\n`,
).join('');
let doc = `<!DOCTYPE html>\n<html>\n<head><title>Bench</title></head>\n<body>\n  <ul>\n${rows}  </ul>\n</body>\n</html>\n`;
const node = await createNode(s, person.id, {
  ownerId: person.id,
  parentId: 0,
  type: 'site',
  name: 'bench.html',
  html: doc,
});
const port = Number(new URL(running.url).port);
const host = `bench.${s.config.rootDomain}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function post(body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/_/save',
        agent,
        headers: {
          host,
          cookie: `__Host-auth_token=${token}`,
          'content-type': 'text/plain;charset=UTF-8',
          'document-url': `http://${host}/bench.html`,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let n = 0;
const edit = () => {
  const i = n++ % 1300;
  doc = doc.replace(new RegExp(`(data-id="${i}"><span>Item number ${i}</span> <em>)[^<]*`), `$1done ${n}`);
  return doc;
};
const t0 = performance.now();
let failures = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (n < SAVES) if ((await post(edit())) !== 200) failures++;
  }),
);
const seconds = (performance.now() - t0) / 1000;
console.log(
  `document size: ${(Buffer.byteLength(doc) / 1024).toFixed(0)} KB, ${SAVES} saves with small edits, ${CONCURRENCY} concurrent clients, ${failures} failures`,
);
console.log(`saves per second (HTTP POST /_/save, SQLite): ${(SAVES / seconds).toFixed(0)}   (goal ≥ 500)`);

const versions = await s.database.db
  .selectFrom('versions')
  .select(['id', 'html', 'diff_content', 'size'])
  .where('node_id', '=', node.id)
  .execute();
const stored = versions.reduce((sum, v) => sum + (v.html?.length ?? 0) + Buffer.byteLength(v.diff_content ?? ''), 0);
const full = versions.reduce((sum, v) => sum + v.size, 0);
console.log(
  `version storage for ${versions.length} versions: ${((stored / full) * 100).toFixed(2)}% of full copies   (goal ≤ 5%)`,
);
let slowest = 0;
for (const v of versions.slice(-40)) {
  const t = performance.now();
  await versionContent(s.database.db, v.id);
  slowest = Math.max(slowest, performance.now() - t);
}
console.log(
  `slowest version read (query + gunzip + diff chain + SHA-256 check) of this 100 KB document: ${slowest.toFixed(1)} ms`,
);
await running.close();
rmSync(dataDir, { recursive: true, force: true });
