// Account import against hostile zips (security review #22, finding 4), on a real `kiln serve` child so
// that its memory can be read from /proc: a zip bomb (entries that declare hundreds of MB and compress
// 1000:1) is refused from its central directory before any entry is unpacked, 413 `too-large` naming the
// entry, with nothing imported and the server's resident memory flat; a highly compressed entry within its
// declared size imports (the size is the bound, not the ratio); an entry whose header lies about its size is stopped at the size it declared; the
// command line (`kiln import`) refuses the same zips.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { zipOf } from './support/zip.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { kilnRun, spawnKiln, type ChildKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { storage, freshPostgres } from './support/kiln.ts';
import { newPerson, sessionsFor, storeSessions } from './support/people.ts';

const MB = 1024 * 1024;
const json = { accept: 'application/json' };

let dataDir: string;
let pg: Awaited<ReturnType<typeof freshPostgres>> | null = null;
let env: Record<string, string>;
let config: Config;
let kiln: ChildKiln;

before(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-zip-import-'));
  pg = storage === 'postgres' ? await freshPostgres() : null;
  env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...(pg ? { DATABASE_URL: pg.url } : {}) };
  config = loadConfig(env);
  // The schema is made here, before the child starts, so the child and the setup never race for it.
  await closeServices(await createServices(config));
  kiln = await spawnKiln(env);
});
after(async () => {
  await kiln?.kill();
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A person on the free plan (10 MB per file) signed in on the main app of the child. */
async function person(): Promise<{ main: Client; username: string }> {
  const s = await createServices(config);
  try {
    const input = newPerson();
    const p = await createPerson(s, input);
    const main = new Client(kiln.port, config.rootDomain);
    storeSessions(main.jar, config, await sessionsFor(s.database.db, config, p.id, p.username));
    return { main, username: p.username };
  } finally {
    await closeServices(s);
  }
}

/** The same zip with `name`'s declared uncompressed size set to `size` (central directory and local
 *  header), the way a hostile archive lies. */
function lieAboutSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  let patched = 0;
  for (let i = 0; i + 46 < out.length; i++) {
    const sig = out.readUInt32LE(i);
    if (sig === 0x02014b50) {
      const len = out.readUInt16LE(i + 28);
      if (out.toString('utf8', i + 46, i + 46 + len) === name) {
        out.writeUInt32LE(size, i + 24);
        patched++;
      }
    } else if (sig === 0x04034b50) {
      const len = out.readUInt16LE(i + 26);
      // Sizes may be in a data descriptor instead (then these are 0): patch only what is there.
      if (out.toString('utf8', i + 30, i + 30 + len) === name && out.readUInt32LE(i + 22) !== 0)
        out.writeUInt32LE(size, i + 22);
    }
  }
  assert.equal(patched, 1, `the central directory names ${name} once`);
  return out;
}

function multipart(zip: Buffer) {
  const boundary = `----kilnbomb${Date.now()}`;
  return {
    body: Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="tree.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      zip,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...json },
  };
}

const importZip = (c: Client, zip: Buffer) => {
  const up = multipart(zip);
  return c.post('/_/account/import', up.body, { headers: up.headers });
};

async function names(c: Client): Promise<string[]> {
  const r = await c.get('/_/dashboard/nodes', { headers: json });
  assert.equal(r.status, 200, r.text);
  return (r.json.nodes as Array<{ name: string }>).map((n) => n.name);
}

/** Resident memory of the child in bytes (`field`: VmRSS now, VmHWM the peak since the last reset). */
function memory(field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${kiln.child.pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  assert.ok(line, `/proc/<pid>/status has ${field}`);
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

/** Resets the peak (VmHWM) to the current resident size; false where the kernel does not allow it. */
function resetPeak(): boolean {
  try {
    writeFileSync(`/proc/${kiln.child.pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

test('a zip bomb is refused from its central directory: 413 naming the entry, nothing imported, memory flat', {
  timeout: 300_000,
}, async (t) => {
  const { main, username: u } = await person();
  // A first import warms the path (multipart, unzip, the writes) so that "before" is the idle server's.
  const warm = await importZip(main, await zipOf({ [`warm-${u}.html`]: '<html>warm</html>', 'warm.css': 'a{}' }));
  assert.equal(warm.status, 200, warm.text);
  // Three zero-filled entries of 190 MB each: about 570 KB zipped, 570 MB unpacked.
  const bomb = await zipOf({
    [`first-${u}.html`]: '<html>would be imported</html>',
    'bomb-1.bin': { zeros: 190 * MB },
    'bomb-2.bin': { zeros: 190 * MB },
    'bomb-3.bin': { zeros: 190 * MB },
  });
  t.diagnostic(`the bomb: ${(bomb.length / 1024).toFixed(0)} KB zipped, 570 MB unpacked`);
  const before = memory('VmRSS');
  const peakReset = resetPeak();
  const r = await importZip(main, bomb);
  const peak = peakReset ? memory('VmHWM') : memory('VmRSS');
  const after = memory('VmRSS');
  t.diagnostic(
    `server RSS: ${(before / MB).toFixed(0)} MB before, ${(peak / MB).toFixed(0)} MB peak during, ${(after / MB).toFixed(0)} MB after (${peakReset ? 'VmHWM' : 'VmRSS'})`,
  );
  assert.equal(r.status, 413, r.text);
  assert.equal(r.json.code, 'too-large');
  assert.match(r.json.msg, /bomb-1\.bin/, 'the message names the entry');
  assert.deepEqual(
    (await names(main)).filter((n) => !n.startsWith('warm')),
    [],
    'nothing of the zip was imported',
  );
  assert.ok(peak - before < 200 * MB, `the server grew by ${((peak - before) / MB).toFixed(0)} MB`);
});

test('an entry that compresses 1000:1 within its declared size imports (its size is the bound, not its ratio); one over its limit does not', async () => {
  const { main, username: u } = await person();
  // 8 MB of zeros is within the free plan's 10 MB per file and compresses about 1000:1: a sparse image, an empty
  // database file. It was refused by a ratio bound once, which made Kiln's own exports fail to import.
  const r = await importZip(
    main,
    await zipOf({ [`fine-${u}.html`]: '<html>fine</html>', 'zeros.bin': { zeros: 8 * MB } }),
  );
  assert.equal(r.status, 200, r.text);
  assert.deepEqual((await names(main)).sort(), [`fine-${u}.html`, 'zeros.bin']);
  // The same zeros past the free plan's 10 MB per file: refused by the declared size, naming the entry.
  const over = await importZip(
    main,
    await zipOf({ [`over-${u}.html`]: '<html>x</html>', 'big.bin': { zeros: 12 * MB } }),
  );
  assert.equal(over.status, 413, over.text);
  assert.equal(over.json.code, 'too-large');
  assert.match(over.json.msg, /big\.bin/);
  assert.deepEqual((await names(main)).sort(), [`fine-${u}.html`, 'zeros.bin'], 'nothing of it was imported');
  // A document over 5 MB is refused by its declared size, naming it.
  const doc = await importZip(main, await zipOf({ [`big-${u}.html`]: Buffer.alloc(6 * MB, 'a') }));
  assert.equal(doc.status, 413, doc.text);
  assert.match(doc.json.msg, new RegExp(`big-${u}\\.html`));
  // Ordinary content still imports.
  const ok = await importZip(
    main,
    await zipOf({ [`more-${u}.html`]: '<html>more</html>', 'app.css': 'body{margin:0}' }),
  );
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual((await names(main)).sort(), ['app.css', `fine-${u}.html`, `more-${u}.html`, 'zeros.bin']);
});

test('an entry whose header lies about its size is stopped at the size it declared', async () => {
  const { main, username: u } = await person();
  // 8 MB of zeros declared as 100 KB: far past its declared size when unpacked.
  const liar = lieAboutSize(
    await zipOf({ [`fine-${u}.html`]: '<html>fine</html>', 'liar.bin': { zeros: 8 * MB } }),
    'liar.bin',
    100 * 1024,
  );
  const r = await importZip(main, liar);
  assert.equal(r.status, 413, r.text);
  assert.equal(r.json.code, 'too-large');
  assert.match(r.json.msg, /liar\.bin/);
  assert.deepEqual(await names(main), [], 'nothing was imported');
  // The same lie in a document.
  const doc = lieAboutSize(await zipOf({ [`liar-${u}.html`]: Buffer.alloc(4 * MB, 'a') }), `liar-${u}.html`, 10 * 1024);
  const d = await importZip(main, doc);
  assert.equal(d.status, 413, d.text);
  assert.match(d.json.msg, new RegExp(`liar-${u}\\.html`));
  assert.deepEqual(await names(main), []);
});

test('kiln import refuses the same zips on the command line, importing nothing', async () => {
  const { main, username } = await person();
  const file = path.join(dataDir, 'bomb.zip');
  writeFileSync(file, await zipOf({ [`cli-${username}.html`]: '<html>ok</html>', 'bomb.bin': { zeros: 50 * MB } }));
  const r = await kilnRun(env, ['import', '--user', username, '--file', file]);
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /bomb\.bin/);
  assert.deepEqual(await names(main), []);
});
