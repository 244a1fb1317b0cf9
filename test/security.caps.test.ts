// Caps that hold (issue #43, findings 1 and 4). A submitter's edit token cannot fill the disk: a rewrite
// through `PUT /_/collection/<id>/records/<key>` counts against the collection's byte cap (its new size in
// place of the old), the bytes it replaces stay counted until the blob sweep may free them, and rewrites are
// rate-limited per record token and per address. A collection's record and byte caps hold under concurrent
// submissions and rewrites, and one sign-up invitation makes one account however many use it at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { newPerson, signedIn } from './support/people.ts';
import type { Client } from './support/client.ts';
import { markedCollection } from './support/collections.ts';
import { limits } from '../src/limits.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const JSON_HEADERS = { accept: 'application/json' };
const KB = 1024;

const collection = () => markedCollection(kiln, { person: { plan: 'maker' } });
type Collection = Awaited<ReturnType<typeof collection>>;

/** The owner sets the collection's caps (bytes in megabytes, as the dashboard's form takes them). */
async function setCaps(c: Collection, maxRecords: number, maxMegabytes: number, maxPerAddressHour = 10_000) {
  const res = await c.main.post(
    `/_/dashboard/nodes/${c.folderId}/collection/limits`,
    { maxRecords, maxMegabytes, maxPerAddressHour },
    { headers: JSON_HEADERS },
  );
  assert.equal(res.status, 200, res.text);
}

const submit = (c: Collection, data: unknown, from: Client = kiln.client(c.host)) =>
  from.post(c.records, { data }, { headers: { 'x-submit-token': c.token } });

/** A new record; answers its key and edit token. */
async function record(c: Collection, data: unknown, from?: Client) {
  const res = await submit(c, data, from);
  assert.equal(res.status, 201, res.text);
  return { key: res.json.id as string, token: res.json.editToken as string };
}

const rewrite = (c: Collection, r: { key: string; token: string }, data: unknown, from: Client = c.visitor) =>
  from.put(`${c.records}/${r.key}`, { data }, { headers: { 'x-record-token': r.token } });

/** An answer in a line (its status and the start of its body), for assertion messages. */
const brief = (r: { status: number; text: string }) => `${r.status} ${r.text.slice(0, 160)}`;
const briefs = (rs: Array<{ status: number; text: string }>) => rs.map(brief).join('\n');

const usage = async (c: Collection) =>
  (await c.main.get(`/_/dashboard/nodes/${c.folderId}/collection`, { headers: JSON_HEADERS })).json.collection
    .usage as { records: number; bytes: number };

/** The records as the owner lists them, with the sum of their sizes. */
async function stored(c: Collection) {
  const res = await c.owner.get(`${c.records}?limit=500`);
  assert.equal(res.status, 200, res.text);
  const records = res.json.records as Array<{ id: string; data: unknown; size: number }>;
  return { total: res.json.total as number, bytes: records.reduce((n, r) => n + r.size, 0), records };
}

test('a rewrite counts against the byte cap: its new size in place of the old, and the bytes it replaced stay counted', async () => {
  const c = await collection();
  await setCaps(c, 100, 0.1); // 102.4 KB
  const mine = await record(c, { n: 1 });

  // Growing a record past the cap is refused like a submission past it, and changes nothing.
  const tooBig = await rewrite(c, mine, { blob: 'x'.repeat(120 * KB) });
  assert.equal(tooBig.status, 413, brief(tooBig));
  assert.equal(tooBig.json.code, 'too-large');
  assert.match(tooBig.json.msg, /102\.4 KB/);
  assert.deepEqual((await c.owner.get(`${c.records}/${mine.key}`)).json.data, { n: 1 });

  // Within the cap: taken.
  const grown = await rewrite(c, mine, { blob: 'a'.repeat(60 * KB) });
  assert.equal(grown.status, 200, brief(grown));

  // The 60 KB it held stay on disk until the blob sweep: they count, so a second 60 KB does not fit…
  const again = await rewrite(c, mine, { blob: 'b'.repeat(60 * KB) });
  assert.equal(again.status, 413, brief(again));
  assert.equal(again.json.code, 'too-large');
  assert.deepEqual((await c.owner.get(`${c.records}/${mine.key}`)).json.data, { blob: 'a'.repeat(60 * KB) });

  // … and shrinking the record does not give them back at once: a 50 KB submission does not fit either.
  assert.equal((await rewrite(c, mine, { n: 'small again' })).status, 200);
  const after = await submit(c, { blob: 'c'.repeat(50 * KB) });
  assert.equal(after.status, 413, brief(after));
  assert.ok((await usage(c)).bytes >= 60 * KB, 'the collection’s usage counts the replaced bytes');
  assert.equal((await stored(c)).total, 1);

  // A small submission still fits.
  assert.equal((await submit(c, { n: 2 })).status, 201);
});

test('rewrites with an edit token are rate-limited per record token and per address (429 rate-limited, Retry-After); the owner is not', async () => {
  const { perRecordHour, perAddressHour } = limits.collection.rewrites;
  assert.ok(perAddressHour > 2 * perRecordHour, 'the test needs three records’ worth of rewrites per address');
  const c = await collection();
  const [a, b, d] = [await record(c, { r: 'a' }), await record(c, { r: 'b' }), await record(c, { r: 'd' })];
  const x = c.visitor;
  const y = kiln.client(c.host);
  assert.notEqual(x.address, y.address);

  // One record's token: perRecordHour rewrites an hour, from any address.
  for (let i = 0; i < perRecordHour; i++) {
    const res = await rewrite(c, a, { r: 'a', i }, x);
    assert.equal(res.status, 200, `rewrite ${i + 1}: ${res.text}`);
  }
  const limited = await rewrite(c, a, { r: 'a', i: 'one more' }, x);
  assert.equal(limited.status, 429, limited.text);
  assert.equal(limited.json.code, 'rate-limited');
  assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After');
  assert.match(limited.json.msg, new RegExp(`${perRecordHour} changes an hour`));
  const elsewhere = await rewrite(c, a, { r: 'a', i: 'from elsewhere' }, y);
  assert.equal(elsewhere.status, 429, 'the token is limited, not only the address');
  assert.deepEqual((await c.owner.get(`${c.records}/${a.key}`)).json.data, { r: 'a', i: perRecordHour - 1 });

  // One address: perAddressHour rewrites an hour in this collection, whatever the records.
  let made = perRecordHour + 1; // the refused one counted too
  for (let i = 0; i < perRecordHour; i++, made++) assert.equal((await rewrite(c, b, { r: 'b', i }, x)).status, 200);
  for (let i = 0; made < perAddressHour; i++, made++) assert.equal((await rewrite(c, d, { r: 'd', i }, x)).status, 200);
  const byAddress = await rewrite(c, d, { r: 'd', i: 'one more' }, x);
  assert.equal(byAddress.status, 429, byAddress.text);
  assert.equal(byAddress.json.code, 'rate-limited');
  assert.ok(Number(byAddress.headers['retry-after']) > 0, 'Retry-After');
  assert.match(byAddress.json.msg, /from one address/);
  // That record's token is not used up: another address may still change it.
  assert.equal((await rewrite(c, d, { r: 'd', i: 'from y' }, y)).status, 200);

  // The owner changes a record whose token is used up: its own writes are bounded by its plan, not these.
  const owner = await c.owner.put(`${c.records}/${a.key}`, { data: { r: 'a', by: 'owner' } });
  assert.equal(owner.status, 200, owner.text);
});

test('the record cap holds under concurrent submissions', async () => {
  const c = await collection();
  await setCaps(c, 10, 50);
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => submit(c, { i })));
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(30).fill(413)], briefs(answers));
  assert.equal((await stored(c)).total, 10);
  assert.equal((await usage(c)).records, 10);
});

test('the byte cap holds under concurrent submissions and concurrent rewrites', async () => {
  const c = await collection();
  await setCaps(c, 1000, 0.1); // 102.4 KB
  const cap = 0.1 * 1024 * KB;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => submit(c, { i, blob: 'x'.repeat(10 * KB) })));
  const taken = answers.filter((r) => r.status === 201).length;
  assert.ok(taken >= 1, 'some fit');
  assert.ok(
    answers.every((r) => r.status === 201 || (r.status === 413 && r.json.code === 'too-large')),
    briefs(answers),
  );
  const after = await stored(c);
  assert.ok(after.bytes <= cap, `stored ${after.bytes} bytes in a collection of ${cap}`);

  // Rewrites at once: each grows a small record; together they would pass the cap.
  const d = await collection();
  await setCaps(d, 1000, 0.1);
  const records = await Promise.all(Array.from({ length: 6 }, (_, i) => record(d, { i })));
  const grown = await Promise.all(
    records.map((r, i) => rewrite(d, r, { i, blob: String(i).repeat(30 * KB) }, kiln.client(d.host))),
  );
  assert.ok(
    grown.every((r) => r.status === 200 || (r.status === 413 && r.json.code === 'too-large')),
    briefs(grown),
  );
  const now = await stored(d);
  assert.ok(now.bytes <= cap, `rewrites stored ${now.bytes} bytes in a collection of ${cap}`);
  assert.ok((await usage(d)).bytes <= cap, 'what the cap counts stays within it');
  const ok = grown.filter((r) => r.status === 200).length;
  assert.ok(ok >= 1 && ok <= 3, `${ok} rewrites of 30 KB in a collection of 102.4 KB`);
});

test('one sign-up invitation makes one account, however many use it at once', async () => {
  const main = kiln.client();
  await signedIn(kiln, main, { isSuperadmin: true });
  const settings = (signups: string) =>
    main.post('/_/admin/settings', { signups, defaultPlan: 'free' }, { headers: JSON_HEADERS });
  assert.equal((await settings('invite')).status, 200);
  try {
    const made = await main.post('/_/admin/invites', {}, { headers: JSON_HEADERS });
    assert.equal(made.status, 200, made.text);
    const invite = new URL(made.json.url).searchParams.get('invite')!;
    const people = Array.from({ length: 4 }, () => newPerson());
    const answers = await Promise.all(
      people.map((p) =>
        kiln
          .client()
          .post(
            '/_/signup',
            { email: p.email, username: p.username, password: p.password, invite },
            { headers: JSON_HEADERS },
          ),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 403, 403, 403], briefs(answers));
    for (const r of answers.filter((a) => a.status === 403)) assert.equal(r.json.code, 'signups-closed');
    // Only the one that was welcomed can sign in.
    const signIns = await Promise.all(
      people.map((p) =>
        kiln.client().post('/_/login', { email: p.email, password: p.password }, { headers: JSON_HEADERS }),
      ),
    );
    assert.equal(signIns.filter((r) => r.status === 200).length, 1);
  } finally {
    assert.equal((await settings('open')).status, 200);
  }
});
