// src/core/json-bytes.ts: the editor page's embedded document is exactly what JSON.stringify would make of
// its text (with `<` escaped so it cannot close its script), made from the bytes without decoding them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonStringOfBytes } from '../src/core/json-bytes.ts';

const reference = (s: string) => JSON.stringify(s).replace(/</g, '\\u003c');

test('the same text as JSON.stringify with < escaped, for every ASCII character and for multibyte text', () => {
  const samples = [
    '',
    '<!doctype html><html><body><p class="a">Hi "there" \\ back</p></body></html>\n',
    Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join(''),
    'naïve café — 漢字 😀 \u2028 \u2029 </script><script>alert(1)</script>',
    '\t\r\n\f\b\u0000\u001f\u007f',
  ];
  for (const s of samples) {
    const made = jsonStringOfBytes(Buffer.from(s, 'utf8')).toString('utf8');
    assert.equal(made, reference(s), JSON.stringify(s));
    assert.equal(JSON.parse(made), s);
    assert.ok(!made.includes('<'), 'no < left to close the script');
  }
});

test('random documents round-trip through JSON.parse', () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let n = 0; n < 200; n++) {
    const chars = Array.from({ length: Math.floor(rand() * 300) }, () => {
      const r = rand();
      if (r < 0.7) return String.fromCharCode(Math.floor(rand() * 128));
      if (r < 0.9) return String.fromCharCode(0xa0 + Math.floor(rand() * 0x700));
      return String.fromCodePoint(0x1f600 + Math.floor(rand() * 50));
    }).join('');
    const made = jsonStringOfBytes(Buffer.from(chars, 'utf8')).toString('utf8');
    assert.equal(made, reference(chars));
  }
});
