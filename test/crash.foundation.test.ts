// Crash test: 100 documents created through HTTP with distinct exact bytes, the server killed with
// SIGKILL right after the last save was acknowledged, started again on the same storage: all 100 are
// there with their exact bytes. Kiln runs as a real child process (`node bin/kiln.js serve`) on SQLite
// in a temporary DATA_DIR, or on a fresh PostgreSQL database when KILN_TEST_STORAGE=postgres.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnKiln, type ChildKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { freshPostgres, storage } from './support/kiln.ts';

const ROOT = 'kiln.localhost:8080';
const COUNT = 100;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-crash-'));
const pg = storage === 'postgres' ? await freshPostgres() : null;
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  ROOT_DOMAIN: ROOT,
  ...(pg ? { DATABASE_URL: pg.url } : {}),
  ...(pg && process.env.KILN_TEST_REDIS_URL ? { REDIS_URL: process.env.KILN_TEST_REDIS_URL } : {}),
};
let server: ChildKiln | undefined;
after(async () => {
  await server?.kill('SIGKILL');
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Distinct documents: different sizes (a few bytes of body to 300 KB), multi-byte UTF-8, CRLF and
 *  LF line ends, tabs, trailing spaces, no final newline: anything a reformatting store would change. */
function documentBytes(i: number): Buffer {
  const filler = randomBytes(i % 10 === 0 ? 110_000 : 40 + ((i * 97) % 3000)).toString('base64');
  const eol = i % 2 ? '\r\n' : '\n';
  const text = [
    '<!DOCTYPE html>',
    `<html lang="en"   data-n="${i}">`,
    `<head><meta charset="utf-8"><title>Doc ${i} — ünïcødé ✓ 🔥</title></head>`,
    `<body>\t<p class="x"  >${filler}</p>  `,
    `<pre>  keep\t  this  ${i}  </pre>`,
    `</body></html>${i % 3 ? eol : ''}`,
  ].join(eol);
  return Buffer.from(text, 'utf8');
}

const checksumOf = (b: Buffer) => createHash('sha256').update(b).digest('hex').slice(0, 16);

test(`${COUNT} documents survive SIGKILL with their exact bytes (${storage})`, async () => {
  server = await spawnKiln(env);
  const main = new Client(server.port, ROOT);

  // First-run setup creates the account and signs this client in.
  const setup = await main.post('/_/setup', {
    email: 'crash@example.com',
    username: 'crash',
    password: 'Crash-test-password-42',
  });
  assert.equal(setup.status, 201, setup.text);
  const docHost = `crash.${ROOT}`;
  const doc = await main.enter(docHost);

  const docs = Array.from({ length: COUNT }, (_, i) => ({
    name: `doc-${String(i).padStart(3, '0')}.html`,
    bytes: documentBytes(i),
  }));
  assert.equal(new Set(docs.map((d) => d.bytes.toString('hex'))).size, COUNT, 'the documents differ');

  // Four writers at a time: create from the dashboard (AJAX), then save the exact bytes.
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < COUNT; i = next++) {
      const { name, bytes } = docs[i];
      const created = await main.post('/_/dashboard/nodes', { type: 'site', name });
      assert.equal(created.status, 201, `create ${name}: ${created.text}`);
      const saved = await doc.post('/_/save', bytes, {
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'document-url': `http://${docHost}/${name}` },
      });
      assert.equal(saved.status, 200, `save ${name}: ${saved.text}`);
      assert.equal(saved.json.etag, checksumOf(bytes), `save ${name} answers the checksum of the bytes sent`);
    }
  };
  await Promise.all([writer(), writer(), writer(), writer()]);

  // No graceful shutdown: the process dies the moment the last save has been acknowledged.
  await server.kill('SIGKILL');
  server = await spawnKiln(env);
  const again = new Client(server.port, docHost);

  for (const { name, bytes } of docs) {
    const res = await again.get(`/${name}`);
    assert.equal(res.status, 200, `${name} after restart`);
    assert.ok(
      res.body.equals(bytes),
      `${name} has its exact bytes after restart (${res.body.length} vs ${bytes.length} bytes)`,
    );
    assert.equal(res.headers.etag, `"${checksumOf(bytes)}"`, `${name} ETag is the checksum of its bytes`);
  }

  // The session survived too, and the dashboard lists exactly these documents.
  const owner = new Client(server.port, ROOT);
  owner.jar = main.jar;
  const list = await owner.get('/_/dashboard/nodes');
  assert.equal(list.status, 200, list.text);
  // Setup also made the account's home page (index.html, from the site starter).
  const sites = (list.json.nodes as Array<{ type: string; name: string; size: number }>).filter(
    (n) => n.type === 'site' && n.name !== 'index.html',
  );
  assert.ok(
    list.json.nodes.some((n: { name: string }) => n.name === 'index.html'),
    'the home page survived too',
  );
  assert.deepEqual(
    sites.map((n) => n.name).sort(),
    docs.map((d) => d.name),
  );
  for (const n of sites) assert.equal(n.size, docs.find((d) => d.name === n.name)!.bytes.length, `${n.name} size`);
});
