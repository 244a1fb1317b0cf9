// A narrowed credential through the MCP tools (an agent's key: read-only, one account, one folder), made directly
// as the caller the auth hook would resolve (personCaller with a scope) and served in memory to the SDK's client:
// a read-only credential changes nothing; a folder one reaches nothing outside its folder and makes, uploads,
// moves or renames nothing to a place outside it; an account one sees only that account.
import { actingAs } from './support/people.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { call, mcpClientAs, refused } from './support/mcp.ts';
import { createPerson } from '../src/accounts/people.ts';
import { newPerson } from './support/people.ts';
import { createPath } from '../src/nodes/tree.ts';
import { createTeam } from '../src/teams/teams.ts';
import { personCaller, type Scope } from '../src/access/caller.ts';
import { actorOfPerson } from '../src/accounts/actors.ts';
import { personRow } from '../src/store/accounts.ts';
import type { Actor } from '../src/access/actor.ts';

let kiln: TestKiln;
let actor: Actor;
let me: string;
let team: string;
before(async () => {
  kiln = await startKiln();
  const person = await createPerson(kiln.services, newPerson({ plan: 'personal' }));
  me = person.username;
  actor = actorOfPerson((await personRow(kiln.services.database.db, { id: person.id }))!, 'key:999999')!;
  const make = async (path: string) =>
    createPath(await actingAs(kiln.services, person.id), { ownerId: person.id, path });
  await make(`notes/in-${me}.html`);
  await make(`notes/deep/deeper-${me}.html`);
  await make(`out-${me}.html`);
  team = `t${me}`;
  const t = await createTeam(kiln.services, { username: team, ownerId: person.id, plan: 'personal' });
  await createPath(await actingAs(kiln.services, person.id), { ownerId: t.id, path: `team-${me}.html` });
});
after(() => kiln.stop());

const scoped = (scope: Partial<Scope>) =>
  mcpClientAs(
    kiln,
    personCaller('key', actor, null, undefined, { accountId: null, folder: null, readOnly: false, ...scope }),
  );

test('a read-only credential reads everything of its person and changes nothing (403 read-only-key)', async () => {
  const client = await scoped({ readOnly: true });
  const read = await call(client, 'read_document', { path: `notes/in-${me}.html` });
  assert.match(read.html, /<html/i);
  for (const [name, args] of [
    ['edit_document', { path: `notes/in-${me}.html`, edits: [{ op: 'replaceText', find: '<html', replace: '<html' }] }],
    ['write_document', { path: `notes/in-${me}.html`, html: '<html></html>', etag: read.etag }],
    ['write_document', { path: `new-${me}.html`, html: '<html></html>' }],
    ['create_document', { path: `made-${me}.html` }],
    ['create_document', { path: `notes/made-${me}.html` }],
    ['rename_document', { path: `out-${me}.html`, newName: `x-${me}.html` }],
    ['move_document', { path: `out-${me}.html`, toFolder: 'notes' }],
    ['delete_document', { path: `out-${me}.html` }],
    ['upload_file', { path: 'a.css', text: 'x' }],
    ['upload_file', { path: 'notes/a.css', text: 'x' }],
  ] as const) {
    const r = await refused(client, name, args);
    assert.deepEqual([r.code, r.status], ['read-only-key', 403], `${name} ${JSON.stringify(args)}`);
  }
  await client.close();
});

test('a folder credential: only its folder is listed and reached; nothing is made, put or moved outside it', async () => {
  const client = await scoped({ accountId: actor.accountId, folder: 'notes' });
  const listed = await call(client, 'list_documents');
  assert.deepEqual(
    listed.accounts.map((a: any) => a.account),
    [me],
  );
  assert.deepEqual(listed.items.map((i: any) => i.path).sort(), [
    'notes',
    'notes/deep',
    `notes/deep/deeper-${me}.html`,
    `notes/in-${me}.html`,
  ]);
  assert.equal((await refused(client, 'read_document', { path: `out-${me}.html` })).code, 'not-found');
  const edits = [{ op: 'replaceText', find: '<html', replace: '<html' }];
  assert.equal((await refused(client, 'edit_document', { path: `out-${me}.html`, edits })).code, 'not-found');
  for (const [name, args] of [
    ['create_document', { path: `elsewhere-${me}.html` }],
    ['create_document', { path: `other/made-${me}.html` }],
    ['write_document', { path: `written-${me}.html`, html: '<html></html>' }],
    ['upload_file', { path: 'top.css', text: 'x' }],
    ['move_document', { path: `notes/in-${me}.html`, toFolder: '' }],
    ['move_document', { path: `notes/in-${me}.html`, toFolder: 'notesy' }],
    ['rename_document', { path: 'notes', newName: 'renamed' }],
  ] as const) {
    const r = await refused(client, name, args);
    assert.deepEqual([r.code, r.status], ['outside-scope', 403], `${name} ${JSON.stringify(args)}`);
  }
  assert.equal((await refused(client, 'read_document', { account: team, path: `team-${me}.html` })).code, 'not-found');
  // Inside its folder it works.
  const made = await call(client, 'create_document', { path: `notes/new/inside-${me}.html` });
  assert.equal(made.path, `notes/new/inside-${me}.html`);
  const moved = await call(client, 'move_document', { path: made.path, toFolder: 'notes/deep' });
  assert.equal(moved.path, `notes/deep/inside-${me}.html`);
  const file = await call(client, 'upload_file', { path: 'notes/deep/style.css', text: 'x' });
  assert.equal(file.path, 'notes/deep/style.css');
  const found = await call(client, 'search_documents', { query: 'html' });
  assert.ok(found.results.every((r: any) => r.path.startsWith('notes/')));
  await client.close();
});

test('an account credential sees only that account, and makes there by default', async () => {
  const teamId = (
    await kiln.services.database.db
      .selectFrom('accounts')
      .select('id')
      .where('username', '=', team)
      .executeTakeFirstOrThrow()
  ).id;
  const client = await scoped({ accountId: teamId });
  const listed = await call(client, 'list_documents');
  assert.deepEqual(
    listed.accounts.map((a: any) => a.account),
    [team],
  );
  assert.deepEqual(
    listed.items.map((i: any) => i.path),
    [`team-${me}.html`],
  );
  assert.equal((await refused(client, 'read_document', { account: me, path: `out-${me}.html` })).code, 'not-found');
  const made = await call(client, 'create_document', { path: `made-in-team-${me}.html` });
  assert.equal(made.account, team);
  await client.close();
});
