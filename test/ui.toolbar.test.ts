// The owner's toolbar tag (src/ui/toolbar.ts): what its script reads back from its own src, and that a save
// that still carries it loses it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDocument } from 'htmlparser2';
import { toolbarTag, withToolbar, withoutToolbar } from '../src/ui/toolbar.ts';

/** The src attribute as a browser reads it (entities decoded), then its query as toolbar.js reads it. */
function queryOf(tag: string): URLSearchParams {
  const doc = parseDocument(tag, { decodeEntities: true });
  const script = doc.children[0] as unknown as { attribs: Record<string, string> };
  return new URL(script.attribs.src, 'https://alice.kiln.example').searchParams;
}

test('the tag carries the document path, the main app, the ETag served and the address to confirm, exactly, whatever they hold', () => {
  for (const [path, main, confirm] of [
    ['index.html', 'https://kiln.example', undefined],
    ['notes/a b & "c" <d>+é%20.html', 'http://kiln.localhost:8080', 'a+b&c@example.com'],
    ["it's (fine)!*~.html", 'https://kiln.example/base?x=1&y=2', 'ünï@例え.jp'],
  ] as const) {
    const tag = toolbarTag(path, main, { etag: '0123456789abcdef', confirm });
    const src = tag.slice('<script src="'.length, tag.indexOf('" data-kiln-toolbar'));
    assert.doesNotMatch(src, /["<>]|&(?!amp;)/, 'nothing left to escape');
    const q = queryOf(tag);
    assert.equal(q.get('path'), path);
    assert.equal(q.get('main'), main);
    assert.equal(q.get('confirm'), confirm ?? null);
    assert.match(
      tag,
      / data-etag="0123456789abcdef" /,
      'the ETag beside the address (which stays the same across saves)',
    );
    assert.equal(q.get('etag'), null);
    const page = Buffer.from(`<html><body><p>${path}</p></body></html>`);
    const owner = Buffer.concat(withToolbar(page, tag));
    assert.ok(owner.includes(tag));
    assert.deepEqual(withoutToolbar(owner), page, 'a save that still carries the tag loses it');
  }
});
