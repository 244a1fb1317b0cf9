import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  SNAPSHOT_INTERVAL,
  VersionDiffError,
  applyDiff,
  canDiff,
  decodeUtf8Exact,
  isSnapshot,
  makeDiff,
  packSnapshot,
  planVersion,
  reconstruct,
  regularSnapshotFor,
  unpackSnapshot,
} from '../src/save/versions.ts';

const sha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');
const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

test('backup number 1 and every 20th are snapshots', () => {
  assert.equal(SNAPSHOT_INTERVAL, 20);
  const snapshots = [];
  for (let n = 1; n <= 100; n++) if (isSnapshot(n)) snapshots.push(n);
  assert.deepEqual(snapshots, [1, 20, 40, 60, 80, 100]);
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => isSnapshot(bad), RangeError);
});

test('the regular snapshot at or before a version is at most 19 diffs back', () => {
  assert.deepEqual(
    [1, 2, 19, 20, 21, 39, 40, 41, 999, 1000].map(regularSnapshotFor),
    [1, 1, 1, 20, 20, 20, 40, 40, 980, 1000],
  );
  for (let n = 1; n <= 500; n++) {
    const s = regularSnapshotFor(n);
    assert.ok(isSnapshot(s) && s <= n && n - s <= 19, String(n));
  }
});

test('a diff of identical texts is empty and applies to the same text', () => {
  const d = makeDiff('same', 'same');
  assert.equal(d, '["d1",4,4]');
  assert.equal(applyDiff('same', d), 'same');
});

test('a small edit in a large document gives a tiny diff', () => {
  const doc = `<html><body>${'<p>paragraph</p>\n'.repeat(6000)}</body></html>`;
  const next = `${doc.slice(0, 50000)}EDIT${doc.slice(50003)}`;
  const d = makeDiff(doc, next);
  assert.ok(d.length < 40, d);
  assert.equal(applyDiff(doc, d), next);
});

test('edits far apart become separate small operations, not one big splice', () => {
  const doc = Array.from({ length: 4000 }, (_, i) => `<li data-i="${i}">item ${i}</li>\n`).join('');
  const next = doc
    .replace('item 10<', 'item ten<')
    .replace('item 3990<', 'item 3990 done<')
    .replace('data-i="2000"', 'data-i="2k"');
  const d = makeDiff(doc, next);
  assert.ok(d.length < 120, d);
  assert.equal(JSON.parse(d).length, 3 + 3 * 3);
  assert.equal(applyDiff(doc, d), next);
});

test('empty documents, unicode, CRLF and lone surrogates round-trip', () => {
  const texts = [
    '',
    'a',
    '<p>😀😀😀</p>',
    '<p>😀😁😀</p>',
    'e\u0301\u00e9 漢字 ‮rtl',
    'line1\r\nline2\r\n',
    'line1\nline2\n',
    '\ud83d', // lone high surrogate
    '\ude00x\ud83d',
  ];
  for (const a of texts) {
    for (const b of texts) {
      assert.equal(applyDiff(a, makeDiff(a, b)), b, JSON.stringify([a, b]));
    }
  }
  // An edit inside a surrogate pair never splits it in the stored diff.
  const d = JSON.parse(makeDiff('x😀y', 'x😁y'));
  assert.equal(d[5], '😁');
});

test('large insertions, deletions and rewrites round-trip', () => {
  const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `<div>${tag} ${i}</div>\n`).join('');
  const a = lines(3000, 'a');
  const b = lines(1000, 'a') + lines(5000, 'b') + lines(3000, 'a').slice(40000);
  const c = lines(2500, 'totally different');
  for (const [x, y] of [
    [a, b],
    [b, a],
    [a, c],
    [c, ''],
    ['', c],
    [a, a + a],
    [a + a, a],
  ] as const) {
    assert.equal(applyDiff(x, makeDiff(x, y)), y);
  }
});

test('a diff applied to the wrong text fails loudly', () => {
  const d = makeDiff('hello world', 'hello there world');
  assert.throws(() => applyDiff('hello world!', d), VersionDiffError);
  assert.throws(() => applyDiff('hello', '["d1",5,5,10,1,"x"]'), VersionDiffError);
  assert.throws(() => applyDiff('hello', 'not json'), VersionDiffError);
  assert.throws(() => applyDiff('hello', '["d2",5,5]'), VersionDiffError);
  assert.throws(() => applyDiff('hello', '["d1",5,6,0,1,"x"]'), VersionDiffError);
  assert.throws(() => applyDiff('hello', '["d1",5,5,-1,1,"x"]'), VersionDiffError);
});

test('decodeUtf8Exact keeps a BOM and refuses invalid UTF-8', () => {
  const withBom = new Uint8Array([0xef, 0xbb, 0xbf, 0x3c, 0x70, 0x3e]);
  assert.equal(decodeUtf8Exact(withBom), '\ufeff<p>');
  assert.equal(sha256(decodeUtf8Exact(withBom)!), sha256(withBom));
  assert.equal(decodeUtf8Exact(new Uint8Array([0x3c, 0xff, 0x3e])), null);
  assert.equal(decodeUtf8Exact(new Uint8Array([0xed, 0xa0, 0x80])), null); // encoded surrogate
  assert.equal(decodeUtf8Exact(new Uint8Array([0xc0, 0xbc])), null); // overlong '<'
  assert.ok(canDiff(utf8('<p>é</p>')));
  assert.ok(!canDiff(new Uint8Array([0xe9])));
});

test('planVersion: snapshots at 1 and every 20th, and whenever a side is not UTF-8', () => {
  const a = utf8('<p>a</p>');
  const b = utf8('<p>b</p>');
  const latin1 = new Uint8Array([0x3c, 0x70, 0x3e, 0xe9, 0x3c, 0x2f, 0x70, 0x3e]);
  assert.deepEqual(planVersion(1, null, a), { isDiff: false });
  assert.deepEqual(planVersion(20, a, b), { isDiff: false });
  assert.deepEqual(planVersion(7, null, b), { isDiff: false });
  assert.deepEqual(planVersion(7, latin1, b), { isDiff: false });
  assert.deepEqual(planVersion(7, a, latin1), { isDiff: false });
  const plan = planVersion(2, a, b);
  assert.ok(plan.isDiff);
  assert.equal(applyDiff('<p>a</p>', plan.diffContent), '<p>b</p>');
});

test('packed snapshots unpack to the same bytes, whatever the bytes are', () => {
  const html = utf8(`<html>${'<p>repeated text</p>'.repeat(2000)}</html>`);
  const packed = packSnapshot(html);
  assert.ok(packed.length < html.length / 10);
  assert.equal(sha256(unpackSnapshot(packed)), sha256(html));
  // Bytes that look like gzip themselves survive the round trip (no guessing from content).
  const gz = packSnapshot(utf8('inner'));
  assert.equal(sha256(unpackSnapshot(packSnapshot(gz))), sha256(gz));
  assert.equal(unpackSnapshot(packSnapshot(new Uint8Array())).length, 0);
});

test('1,000 small edits of a 100 KB document: diffs take a small fraction of full copies', () => {
  let doc =
    '<!DOCTYPE html><html><body>\n' +
    Array.from({ length: 1200 }, (_, i) => `  <div class="card" data-id="${i}"><h2>Item ${i}</h2></div>\n`).join('') +
    '</body></html>\n';
  let diffBytes = 0;
  let fullBytes = 0;
  for (let i = 0; i < 1000; i++) {
    const at = (i * 7919) % (doc.length - 10);
    const next = `${doc.slice(0, at)}<b>${i}</b>${doc.slice(at + 4)}`;
    const d = makeDiff(doc, next);
    diffBytes += Buffer.byteLength(d);
    fullBytes += Buffer.byteLength(next);
    doc = next;
  }
  assert.ok(diffBytes / fullBytes < 0.001, `${diffBytes} / ${fullBytes}`);
});

test('property: any two strings (surrogates included) diff and apply exactly', () => {
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.string({ unit: fc.constantFrom('a', 'b', '\n', '\r', '<', '😀', '\ud83d', '\ude00', 'é'), maxLength: 300 }),
  );
  fc.assert(
    fc.property(text, text, (a, b) => {
      assert.equal(applyDiff(a, makeDiff(a, b)), b);
    }),
    { numRuns: 1000, seed: 3 },
  );
});

// ---------------------------------------------------------------------------
// 1,000 random edit sequences, stored as the pipeline stores them, every version reconstructed.

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ATOMS = [
  '<div>',
  '</div>',
  '<p class="x">',
  '</p>',
  'text ',
  '\n',
  '\r\n',
  '  ',
  'é',
  '漢字',
  '😀',
  '&amp;',
  'é',
  '\t',
];

interface StoredVersion {
  id: number;
  backupNumber: number;
  isDiff: boolean;
  html: Uint8Array | null;
  diffContent: string | null;
  diffFromId: number | null;
  snapshotId: number | null;
  contentHash: string;
}

test('property: 1,000 random edit sequences; every version reconstructs to its SHA-256', () => {
  const rnd = mulberry32(20240607);
  const int = (n: number) => Math.floor(rnd() * n);
  const piece = (n: number) => {
    let s = '';
    for (let i = 0; i < n; i++) s += ATOMS[int(ATOMS.length)];
    return s;
  };
  const edit = (doc: string): string => {
    const at = int(doc.length + 1);
    switch (int(10)) {
      case 0:
        return ''; // emptied
      case 1:
        return piece(int(3000)); // replaced wholesale (a restore)
      case 2:
        return doc.slice(0, at) + piece(500 + int(3000)) + doc.slice(at); // large insertion
      case 3:
        return doc.slice(0, at) + doc.slice(at + 2000 + int(8000)); // large deletion
      case 4: {
        // several scattered edits
        let d = doc;
        for (let k = 0; k < 4; k++) {
          const p = int(d.length + 1);
          d = d.slice(0, p) + piece(int(3)) + d.slice(p + int(5));
        }
        return d;
      }
      case 5:
        return doc.replaceAll('\n', '\r\n'); // line endings changed everywhere
      default:
        return doc.slice(0, at) + piece(int(4)) + doc.slice(at + int(6)); // small edit
    }
  };

  let versionsChecked = 0;
  let nonUtf8 = 0;
  let nextId = 1;
  for (let seq = 0; seq < 1000; seq++) {
    const length = 1 + int(seq % 50 === 0 ? 45 : 25);
    const size = seq % 100 === 0 ? 60000 : int(4) === 0 ? 0 : int(3000);
    let text = piece(Math.ceil(size / 4));
    const chain: StoredVersion[] = [];
    const saved: Uint8Array[] = [];
    for (let n = 1; n <= length; n++) {
      if (n > 1) text = edit(text);
      // Now and then the saved bytes are not valid UTF-8 (a stray Latin-1 byte).
      let bytes = utf8(text);
      if (int(60) === 0) {
        bytes = new Uint8Array([...bytes.slice(0, 10), 0xe9, ...bytes.slice(10)]);
        nonUtf8++;
      }
      const previous = chain[chain.length - 1] ?? null;
      const plan = planVersion(n, previous ? saved[saved.length - 1]! : null, bytes);
      const id = nextId++;
      chain.push({
        id,
        backupNumber: n,
        isDiff: plan.isDiff,
        html: plan.isDiff ? null : packSnapshot(bytes),
        diffContent: plan.isDiff ? plan.diffContent : null,
        diffFromId: plan.isDiff ? previous!.id : null,
        snapshotId: plan.isDiff ? (previous!.isDiff ? previous!.snapshotId : previous!.id) : null,
        contentHash: sha256(bytes),
      });
      saved.push(bytes);
    }
    // Reconstruct every version the way a reader would: from its snapshot, following the chain.
    for (const v of chain) {
      let bytes: Uint8Array;
      if (!v.isDiff) {
        bytes = unpackSnapshot(v.html!);
      } else {
        const snapshot = chain.find((x) => x.id === v.snapshotId)!;
        assert.ok(!snapshot.isDiff);
        const diffs = chain.filter((x) => x.backupNumber > snapshot.backupNumber && x.backupNumber <= v.backupNumber);
        assert.ok(diffs.length <= 19);
        diffs.forEach((x, i) => {
          assert.ok(x.isDiff);
          assert.equal(x.diffFromId, i === 0 ? snapshot.id : diffs[i - 1]!.id);
        });
        const base = decodeUtf8Exact(unpackSnapshot(snapshot.html!));
        assert.notEqual(base, null);
        bytes = utf8(
          reconstruct(
            base!,
            diffs.map((x) => x.diffContent!),
          ),
        );
      }
      assert.equal(sha256(bytes), v.contentHash, `sequence ${seq}, backup ${v.backupNumber}`);
      versionsChecked++;
    }
  }
  assert.ok(versionsChecked > 10000, String(versionsChecked));
  assert.ok(nonUtf8 > 50, String(nonUtf8));
});
