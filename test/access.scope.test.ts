// Nodes reach a use case only through `ctx.nodes.open` (src/nodes/open.ts), which judges the caller through the
// access table in the same step. Called directly, as every door calls it: the table's answers for a person, a
// stranger and nobody; a document host's caller reaches only that host's nodes; a narrowed credential (an agent's
// key: one account, one folder, read-only) never reaches more than it says; the SYSTEM caller passes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { contextOf } from '../src/context.ts';
import { anonymous, personCaller, SYSTEM, type Caller, type Scope } from '../src/access/caller.ts';
import { actorOfPerson } from '../src/accounts/actors.ts';
import { personRow } from '../src/store/accounts.ts';
import type { Actor } from '../src/access/actor.ts';
import { KilnError } from '../src/errors.ts';

let kiln: TestKiln;
let alice: Actor;
let bob: Actor;
const ids: Record<string, number> = {};
before(async () => {
  kiln = await startKiln();
  const client = kiln.client();
  const a = await signedIn(kiln, client);
  const fetchy = { headers: { 'x-requested-with': 'fetch' } };
  const made = async (name: string, parentId = 0, type = 'site') => {
    const r = await client.post('/_/dashboard/nodes', { type, name, parentId }, fetchy);
    assert.equal(r.status, 201, r.text);
    return r.json.node.id as number;
  };
  ids.notes = await made('notes', 0, 'folder');
  ids.inNotes = await made(`in-notes-${a.username}.html`, ids.notes);
  ids.top = await made(`top-${a.username}.html`);
  ids.secret = await made(`secret-${a.username}.html`);
  const hidden = await client.post(`/_/dashboard/nodes/${ids.secret}/visibility`, { visibility: 'private' }, fetchy);
  assert.equal(hidden.status, 200, hidden.text);
  const b = await signedIn(kiln, kiln.client());
  const actor = async (id: number) => actorOfPerson((await personRow(kiln.services.database.db, { id }))!, 'test')!;
  alice = await actor(a.id);
  bob = await actor(b.id);
});
after(() => kiln.stop());

const ctxOf = (caller: Caller) => contextOf(kiln.services, caller);
const scoped = (actor: Actor, scope: Partial<Scope>) =>
  personCaller('key', actor, null, undefined, { accountId: null, folder: null, readOnly: false, ...scope });

/** The answer of `open` as status and code, or 'ok'. */
async function answer(caller: Caller, id: number, action: Parameters<ReturnType<typeof ctxOf>['nodes']['open']>[1]) {
  try {
    await ctxOf(caller).nodes.open(id, action);
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof KilnError, String(err));
    return `${err.status} ${err.code ?? ''}`.trim();
  }
}

test('the table decides: the owner may, a stranger is told it is not theirs (or that a private one is not there), nobody signs in', async () => {
  const owner = personCaller('session', alice, null);
  assert.equal(await answer(owner, ids.top, 'manage'), 'ok');
  assert.equal(await answer(owner, ids.secret, 'view'), 'ok');
  const stranger = personCaller('session', bob, null);
  assert.equal(await answer(stranger, ids.top, 'view'), 'ok');
  assert.equal(await answer(stranger, ids.top, 'manage'), '400 not-owner');
  assert.equal(await answer(stranger, ids.secret, 'view'), '404 not-found');
  assert.equal(
    await answer(stranger, ids.secret, 'manage'),
    '404 not-found',
    'a private node answers like a missing one',
  );
  assert.equal(await answer(anonymous(), ids.top, 'manage'), '401 login-required');
  assert.equal(await answer(owner, 987654321, 'view'), '404 not-found');
  assert.equal(await answer(SYSTEM, ids.secret, 'manage'), 'ok');
});

test('a caller on a document host reaches only that host’s nodes', async () => {
  assert.equal(await answer(personCaller('session', alice, alice.accountId), ids.top, 'save'), 'ok');
  // Alice's own session, but arriving on Bob's host: Alice's node is not there.
  assert.equal(await answer(personCaller('session', alice, bob.accountId), ids.top, 'view'), '404 not-found');
});

test('a narrowed credential: read-only refuses every change, a folder scope hides what is outside, an account scope other accounts', async () => {
  const reader = scoped(alice, { readOnly: true });
  assert.equal(await answer(reader, ids.secret, 'view'), 'ok');
  assert.equal(await answer(reader, ids.top, 'versions'), 'ok');
  for (const action of ['save', 'manage', 'upload', 'edit'] as const)
    assert.equal(await answer(reader, ids.top, action), '403 read-only-key', action);
  // The table first: a stranger's read-only key learns nothing more about a private node.
  assert.equal(await answer(scoped(bob, { readOnly: true }), ids.secret, 'save'), '404 not-found');

  const folder = scoped(alice, { accountId: alice.accountId, folder: 'Notes' });
  assert.equal(await answer(folder, ids.inNotes, 'save'), 'ok');
  assert.equal(await answer(folder, ids.notes, 'manage'), 'ok', 'the folder itself is inside');
  assert.equal(await answer(folder, ids.top, 'view'), '404 not-found');
  assert.equal(await answer(folder, ids.secret, 'manage'), '404 not-found');

  assert.equal(await answer(scoped(alice, { accountId: bob.accountId }), ids.top, 'view'), '404 not-found');
  // A scope never adds: Bob's key scoped to Alice's account is still a stranger there.
  assert.equal(await answer(scoped(bob, { accountId: alice.accountId }), ids.top, 'manage'), '400 not-owner');
});
