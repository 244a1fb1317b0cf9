// Shared by test/data.*.test.ts: an owner with documents, saves as the browser library sends them, and
// the checks every data API answer must pass.
import assert from 'node:assert/strict';
import type { TestKiln } from './support/kiln.ts';
import type { Client, Res } from './support/client.ts';
import { signedIn, actingAs } from './support/people.ts';
import { createPath, setVisibility } from '../src/nodes/tree.ts';

export interface Owner {
  id: number;
  username: string;
  /** The owner's document host, e.g. `user1.kiln.localhost:8080`. */
  host: string;
  /** Signed in (cookies on the root domain reach the document host). */
  signedIn: Client;
  /** Nobody signed in, on the document host. */
  anonymous: Client;
}

export async function owner(kiln: TestKiln): Promise<Owner> {
  const main = kiln.client();
  const person = await signedIn(kiln, main, { plan: 'maker' });
  const host = kiln.hostOf(person.username);
  return { id: person.id, username: person.username, host, signedIn: main.on(host), anonymous: kiln.client(host) };
}

/** Creates a document (folders on the way) with this HTML; `private` hides it. */
export async function addDocument(
  kiln: TestKiln,
  o: Owner,
  path: string,
  html: string,
  opts: { private?: boolean } = {},
) {
  const node = await createPath(await actingAs(kiln.services, o.id), { ownerId: o.id, path, html });
  if (opts.private)
    await setVisibility(await actingAs(kiln.services, o.id), { nodeId: node.id, visibility: 'private' });
  return node;
}

/** An `api` rules tag. */
export const apiTag = (rules: unknown, version = '1') =>
  `<script type="application/json" data-rules-name="api" data-rules-version="${version}">${typeof rules === 'string' ? rules : JSON.stringify(rules)}</script>`;

/** POST /_/save as hyperclayjs sends it. */
export function browserSave(o: Owner, path: string, html: string) {
  const url = `http://${o.host}/${path}`;
  return o.signedIn.post('/_/save', html, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': url,
      'page-url': url,
      'save-trigger': 'user',
      origin: `http://${o.host}`,
      'sec-fetch-site': 'same-origin',
    },
  });
}

/** `?data=` with the rules URL-encoded. */
export const dataUrl = (path: string, rules: unknown) =>
  `${path}?data=${encodeURIComponent(typeof rules === 'string' ? rules : JSON.stringify(rules))}`;

/** What every data API answer carries: JSON and the CORS header (any origin, no credentials). */
export function assertDataAnswer(res: Res, status: number) {
  assert.equal(res.status, status, `status ${res.status}: ${res.text}`);
  assert.equal(res.headers['access-control-allow-origin'], '*');
  assert.equal(res.headers['access-control-allow-credentials'], undefined);
  if (status !== 304) assert.match(String(res.headers['content-type']), /^application\/json/);
}

/** A failure: status, `{error, code}`, no ETag. */
export function assertFailure(res: Res, status: number, code: string, error?: RegExp | string) {
  assertDataAnswer(res, status);
  assert.equal(res.json.code, code, res.text);
  assert.equal(typeof res.json.error, 'string');
  if (typeof error === 'string') assert.equal(res.json.error, error);
  else if (error) assert.match(res.json.error, error);
  assert.equal(res.headers.etag, undefined);
}
