/**
 * `kiln export` in constant memory: an account with 1,000 documents and 200 MB of uploads is exported
 * to a file through the same code as `kiln export` and GET /_/account/export; the figure is the growth
 * of the process's resident memory while the zip streams (goal ≤ 50 MB), beside the zip's size and time.
 * Run: node --import tsx bench/export.ts (SQLite in a temporary folder).
 */
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { loadConfig } from '../src/config.ts';
import { closeServices, createServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { insertUpload, storeBytes } from '../src/uploads/upload.ts';
import { exportTree } from '../src/accounts/export.ts';
import { actingAs } from '../test/support/people.ts';

const DOCUMENTS = 1000;
const UPLOADS = 100;
const UPLOAD_BYTES = 2 * 1024 * 1024; // 100 × 2 MB = 200 MB

const dir = mkdtempSync(path.join(tmpdir(), 'kiln-bench-export-'));
process.env.DATA_DIR = dir;
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
const s = await createServices(loadConfig());
try {
  const person = await createPerson(s, {
    email: 'bench@example.com',
    username: 'bench',
    password: 'a long bench passphrase',
    plan: 'maker',
    isSuperadmin: true,
  });
  const id = person.id;
  const doc = `<!doctype html><html><body>${'<p>bench paragraph</p>'.repeat(200)}</body></html>`;
  const folder = await createNode(await actingAs(s, id), { ownerId: id, parentId: 0, type: 'folder', name: 'docs' });
  for (let i = 0; i < DOCUMENTS; i++)
    await createNode(await actingAs(s, id), {
      ownerId: id,
      parentId: folder.id,
      type: 'site',
      name: `doc-${i}.html`,
      html: `${doc}<!-- ${i} -->`,
    });
  for (let i = 0; i < UPLOADS; i++) {
    const stored = await storeBytes(s, 'maker', randomBytes(UPLOAD_BYTES));
    await insertUpload(s, {
      ownerId: id,
      parentId: 0,
      parentPath: '',
      name: `file-${i}.bin`,
      stored,
      by: { accountId: id, writer: null },
      ifTaken: 'refuse',
    });
  }
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const out = path.join(dir, 'export.zip');
  const t0 = performance.now();
  await pipeline(await exportTree(await actingAs(s, id), { ownerId: id }), createWriteStream(out));
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const size = statSync(out).size;
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `export of ${DOCUMENTS} documents + ${UPLOADS} uploads (${(UPLOADS * UPLOAD_BYTES) / 2 ** 20} MB): zip ${(size / 2 ** 20).toFixed(1)} MB in ${seconds.toFixed(1)} s`,
  );
  console.log(`RSS growth while streaming: ${((peak - before) / 2 ** 20).toFixed(1)} MB (goal ≤ 50 MB)`);
} finally {
  await closeServices(s);
  rmSync(dir, { recursive: true, force: true });
}
