// THE table of access (issue #46): every access question, through every door that reaches it, for every kind
// of caller. Rows are (door, question, target document), columns are callers, and a cell is the answer: the
// status, and the body's `code` after a colon when a refusal has one. Each cell is one test, named
// door · question · target · caller. The answers are the access table's (src/access/table.ts; the spec's
// "Requests are classified as user type, resource type, action"): one answer per question, whichever door
// asks it (every door asks through `ctx.nodes`, src/nodes/open.ts). Where a real client reads a door's answer
// and the table's would change what the client does, the client's answer is the requirement: the rows say so
// (`#` lines above them).
//
// The callers, and what each brings to a door:
//   owner     a developer: sessions on the main app and on their own host, a sync key
//   tOwner    the team's owner; tEditor its editor; tViewer its viewer: sessions on the main app and on the
//             team's host, a sync key each
//   former    a removed member: their session on the team's host and their key are left from when they were one
//   guest     nobody signed in, holding the share link of the target document (its cookie, on its host)
//   appUser   someone who signed up to an app (an app user): sessions on the main app and on their own host
//   stranger  another signed-in developer: a session on the main app, no key
//   anon      nobody
//   otherKey  nothing but the sync key of another developer, sent on every request (X-API-Key)
// A door knows a caller by what that door takes: the main app's session (dashboard, sharing, uploads), a key
// (the sync APIs; the message bus takes both), a session of the document's own host (host doors: a session is
// minted only for the host's account and its team's members), a share link (the document's host). Anyone the
// door cannot tell is nobody there: `login` on a host, `no-key` at the sync API. That is one answer, not two.
//
// Targets: a document of the owner's (own) or of the team's (team), public or private; the guest holds each
// one's share link. Rows about a tree (list, create, the dashboard's upload) or a host (the message bus) ask
// about the tree or the host of the target. Rows that change nothing when allowed ask for no change (the same
// name, the same folder, the same visibility, the same bytes); rows that delete get a fresh document each.
//
// Cells: a status (`200`, `403`, `404`...), `status:code`, or one of these words:
//   login      401 login-required          viewer     403 viewer (a team's viewer changes none of its files)
//   no-key     401 missing-key             not-owner  400 not-owner (public, not theirs)
//   passes     400 invalid: past the access check, the data-loss door refuses the request's made-up choice
//   gone       404 node-not-found (the sync API: no such node in the tree this base syncs)
//   no-team    404 not-found (the team sync API: no such team for this key)
// A plain 404 is one answer whatever its code (`not-found`, the sync API's `node-not-found`): nothing there,
// as far as the caller may know (a private document is missing to those who may not see it). The sync rows
// name the code, because the desktop engine acts on it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { sessionsFor, signedIn, storeSessions, actingAs } from './support/people.ts';
import type { Client, ReqOpts } from './support/client.ts';
import { keyHolder, SyncApi } from './support/sync-client.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { createTeam, removeMember, setMember, type Team } from '../src/teams/teams.ts';
import { createNode, createPath, deleteNode, moveNode, renameNode, setVisibility } from '../src/nodes/tree.ts';
import type { NodeRow } from '../src/store/schema.ts';
import { emptyTrash, purgeFromTrash, restoreFromTrash } from '../src/nodes/trash.ts';
import { storeUpload } from '../src/uploads/upload.ts';
import { KilnError } from '../src/errors.ts';
import { setSharing } from '../src/sharing/share.ts';
import { setEnableSignups } from '../src/apps/apps.ts';
import { personRow } from '../src/store/accounts.ts';

let kiln: TestKiln;
after(() => kiln?.stop());

const CALLERS = [
  'owner',
  'tOwner',
  'tEditor',
  'tViewer',
  'former',
  'guest',
  'appUser',
  'stranger',
  'anon',
  'otherKey',
] as const;
type CallerKind = (typeof CALLERS)[number];
const TARGETS = ['own public', 'own private', 'team public', 'team private'] as const;
type TargetKind = (typeof TARGETS)[number];

const TABLE = `
door       question            target        owner          tOwner         tEditor        tViewer        former         guest      appUser  stranger   anon    otherKey
dashboard  list the tree       team public   404            200            200            viewer         404            login      404      404        login   login
dashboard  create              own public    201            404            404            404            404            login      403      404        login   login
dashboard  create              team public   404            201            201            viewer         404            login      403      404        login   login
dashboard  rename              own public    200            not-owner      not-owner      not-owner      not-owner      login      403      not-owner  login   login
dashboard  rename              own private   200            404            404            404            404            login      403      404        login   login
dashboard  rename              team public   not-owner      200            200            viewer         not-owner      login      403      not-owner  login   login
dashboard  rename              team private  404            200            200            viewer         404            login      403      404        login   login
dashboard  move                own public    200            not-owner      not-owner      not-owner      not-owner      login      403      not-owner  login   login
dashboard  move                own private   200            404            404            404            404            login      403      404        login   login
dashboard  move                team public   not-owner      200            200            viewer         not-owner      login      403      not-owner  login   login
dashboard  move                team private  404            200            200            viewer         404            login      403      404        login   login
dashboard  visibility          own public    200            not-owner      not-owner      not-owner      not-owner      login      403      not-owner  login   login
dashboard  visibility          own private   200            404            404            404            404            login      403      404        login   login
dashboard  visibility          team public   not-owner      200            200            viewer         not-owner      login      403      not-owner  login   login
dashboard  visibility          team private  404            200            200            viewer         404            login      403      404        login   login
dashboard  delete              own public    200            not-owner      not-owner      not-owner      not-owner      login      403      not-owner  login   login
dashboard  delete              own private   200            404            404            404            404            login      403      404        login   login
dashboard  delete              team public   not-owner      200            200            viewer         not-owner      login      403      not-owner  login   login
dashboard  delete              team private  404            200            200            viewer         404            login      403      404        login   login

sharing    read                own public    200            not-owner      not-owner      not-owner      not-owner      login      403      not-owner  login   login
sharing    read                own private   200            404            404            404            404            login      403      404        login   login
sharing    read                team public   not-owner      200            200            viewer         not-owner      login      403      not-owner  login   login
sharing    read                team private  404            200            200            viewer         404            login      403      404        login   login
sharing    change              own public    200            not-owner      not-owner      not-owner      not-owner      login      403      not-owner  login   login
sharing    change              own private   200            404            404            404            404            login      403      404        login   login
sharing    change              team public   not-owner      200            200            viewer         not-owner      login      403      not-owner  login   login
sharing    change              team private  404            200            200            viewer         404            login      403      404        login   login

uploads    upload (dashboard)  own public    200            404            404            404            404            login      403      404        login   login
uploads    upload (dashboard)  team public   404            200            200            viewer         404            login      403      404        login   login
uploads    upload (host)       own public    200            login          login          login          login          403        login    login      login   login
uploads    upload (host)       own private   200            login          login          login          login          403        login    login      login   login
uploads    upload (host)       team public   login          200            200            viewer         login          403        login    login      login   login
uploads    upload (host)       team private  login          200            200            viewer         login          403        login    login      login   login

# The sync API's base reaches its account's tree only: another account's node, public or not, is not in the
# tree the client syncs and is missing to it (404 node-not-found), where the table's own door would tell a
# stranger "not-owner" about a public one. Hyperclay Local (protocol 2, reconcile/classify-error.js) refreshes
# a node on 404 node-not-found (re-lists, forgets it) and treats a 400 as fatal (logged on a pass, the session
# stopped when it comes from a live refresh); "kiln sync" takes a 400 as a final refusal and a DELETE's 404 as
# done. So the sync doors keep 404 (the client's behaviour is the requirement), for reads as for changes.
sync       read                own public    200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       read                own private   200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       write               own public    200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       write               own private   200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       rename              own public    200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       rename              own private   200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       move                own public    200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       move                own private   200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       delete              own public    200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone
sync       delete              own private   200            gone           gone           gone           gone           no-key     no-key   no-key     no-key  gone

# A team base answers anyone who is not a member (any more) 404 not-found before any node is looked at, as its
# listing does: Hyperclay Local rediscovers its accounts on it (how a removed member's client learns the team
# is gone); a 400 "not-owner" would stop the session instead. Kept for the same reason as above.
team sync  list the tree       team public   no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  create              team public   no-team        201            201            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  read                team public   no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  read                team private  no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  write               team public   no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  write               team private  no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  rename              team public   no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  rename              team private  no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  move                team public   no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  move                team private  no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  delete              team public   no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team
team sync  delete              team private  no-team        200            200            viewer         no-team        no-key     no-key   no-key     no-key  no-team

bus        send                own public    200            login          login          login          login          login      login    login      login   403
bus        send                team public   login          200            200            viewer         login          login      login    login      login   403

save       save                own public    200            login          login          login          login          200        login    login      login   login
save       save                own private   200            404            404            404            404            200        404      404        404     404
save       save                team public   login          200            200            viewer         login          200        login    login      login   login
save       save                team private  404            200            200            viewer         404            200        404      404        404     404

editor     open                own public    200            login          login          login          login          403        login    login      login   login
editor     open                own private   200            404            404            404            404            403        404      404        404     404
editor     open                team public   login          200            200            viewer         login          403        login    login      login   login
editor     open                team private  404            200            200            viewer         404            403        404      404        404     404

versions   list                own public    200            login          login          login          login          403        login    login      login   login
versions   list                own private   200            404            404            404            404            403        404      404        404     404
versions   list                team public   login          200            200            viewer         login          403        login    login      login   login
versions   list                team private  404            200            200            viewer         404            403        404      404        404     404

data-loss  resolve             own public    passes         login          login          login          login          403        login    login      login   login
data-loss  resolve             own private   passes         404            404            404            404            403        404      404        404     404
data-loss  resolve             team public   login          passes         passes         viewer         login          403        login    login      login   login
data-loss  resolve             team private  404            passes         passes         viewer         404            403        404      404        404     404

document   GET                 own public    200            200            200            200            200            200        200      200        200     200
document   GET                 own private   200            404            404            404            404            200        404      404        404     404
document   GET                 team public   200            200            200            200            200            200        200      200        200     200
document   GET                 team private  404            200            200            200            404            200        404      404        404     404
`;

interface Row {
  door: string;
  question: string;
  target: TargetKind;
  cells: Record<CallerKind, string>;
}

/** The table's rows: columns are split on two or more spaces (a door or question may hold one). */
function parseTable(text: string): Row[] {
  const [head, ...lines] = text
    .trim()
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const cols = head.trim().split(/\s+/).slice(3);
  assert.deepEqual(cols, [...CALLERS], 'the columns are the callers');
  return lines.map((line) => {
    const parts = line.trim().split(/\s{2,}/);
    const [door, question, target, rest] = [parts[0], parts[1], parts[2], parts.slice(3).join(' ').split(/\s+/)];
    assert.ok((TARGETS as readonly string[]).includes(target), `target ${target}`);
    assert.equal(rest.length, CALLERS.length, `cells of ${line}`);
    return {
      door,
      question,
      target: target as TargetKind,
      cells: Object.fromEntries(CALLERS.map((c, i) => [c, rest[i]])) as Record<CallerKind, string>,
    };
  });
}

// ---- the world the table is asked in -------------------------------------------------------------------

interface Caller {
  client: Client;
  /** A sync key: used at the sync doors; sent on every request when `keyEverywhere`. */
  key?: string;
  keyEverywhere?: boolean;
}

interface Target {
  node: NodeRow;
  /** The account whose document it is. */
  account: { id: number; username: string };
  team: boolean;
  host: string;
  url: string;
  html: string;
}

const callers = {} as Record<CallerKind, Caller>;
const targets = {} as Record<TargetKind, Target>;
let team: Team;
let ownerId: number;
let ownerName: string;
let teamOwnerId: number;
let made = 0;

/** A document of the owner's or the team's, public or private. */
async function document(kind: TargetKind, prefix = 'doc'): Promise<Target> {
  const own = kind.startsWith('own');
  const account = own ? { id: ownerId, username: ownerName } : { id: team.id, username: team.username };
  const by = own ? ownerId : teamOwnerId;
  const html = `<html><p>${kind}</p></html>`;
  let node = await createNode(await actingAs(kiln.services, by), {
    ownerId: account.id,
    parentId: 0,
    type: 'site',
    name: `table-${prefix}-${++made}.html`,
    html,
  });
  if (kind.endsWith('private'))
    node = await setVisibility(await actingAs(kiln.services, by), { nodeId: node.id, visibility: 'private' });
  const host = kiln.hostOf(account.username);
  return { node, account, team: !own, host, url: `http://${host}/${node.name}`, html };
}
/** Someone who signs up to an app of the owner's (on the owner's host), then signs in on the main app too. */
async function appUserOf(appOwner: number): Promise<Client> {
  const app = await createNode(await actingAs(kiln.services, appOwner), {
    ownerId: appOwner,
    parentId: 0,
    type: 'site',
    name: 'table-app.html',
  });
  await setEnableSignups(await actingAs(kiln.services, appOwner), { nodeId: app.id, enable: true });
  const client = kiln.client();
  const signup = await client
    .on(kiln.hostOf(ownerName))
    .post(
      '/_/app/signup',
      { app: app.name, email: `table-app-${process.pid}@example.com`, password: 'Appuser-pw-9-kiln' },
      { headers: { 'x-requested-with': 'fetch' } },
    );
  assert.equal(signup.status, 201, signup.text);
  const db = kiln.services.database.db;
  const person = await personRow(db, { username: signup.json.username });
  assert.ok(person?.account_type === 'app_user', 'the signup made an app user');
  storeSessions(client.jar, kiln.config, await sessionsFor(db, kiln.config, person.id, person.username));
  return client;
}

before(async () => {
  kiln = await startKiln();
  const s = kiln.services;
  const dev = async () => {
    const client = kiln.client();
    return { client, me: await signedIn(kiln, client, { plan: 'personal' }) };
  };
  const owner = await dev();
  ownerId = owner.me.id;
  ownerName = owner.me.username;
  const [tOwner, tEditor, tViewer, former, stranger, other] = await Promise.all([
    dev(),
    dev(),
    dev(),
    dev(),
    dev(),
    dev(),
  ]);
  teamOwnerId = tOwner.me.id;
  team = await createTeam(s, { username: `t${owner.me.username}`, ownerId: tOwner.me.id, plan: 'maker' });
  for (const [who, role] of [
    [tEditor, 'editor'],
    [tViewer, 'viewer'],
    [former, 'viewer'],
  ] as const)
    await setMember(await actingAs(s, tOwner.me.id), { teamId: team.id, username: who.me.username, role });
  const keyOf = async (id: number) => (await createSyncKey(s, id)).key;
  const teamHost = kiln.hostOf(team.username);
  // Members carry their login to the team's host, as the session handshake does.
  for (const who of [tOwner, tEditor, tViewer, former]) await who.client.enter(teamHost);
  callers.owner = { client: owner.client, key: await keyOf(owner.me.id) };
  callers.tOwner = { client: tOwner.client, key: await keyOf(tOwner.me.id) };
  callers.tEditor = { client: tEditor.client, key: await keyOf(tEditor.me.id) };
  callers.tViewer = { client: tViewer.client, key: await keyOf(tViewer.me.id) };
  callers.former = { client: former.client, key: await keyOf(former.me.id) };
  callers.guest = { client: kiln.client() };
  callers.appUser = { client: await appUserOf(owner.me.id) };
  callers.stranger = { client: stranger.client };
  callers.anon = { client: kiln.client() };
  callers.otherKey = { client: kiln.client(), key: await keyOf(other.me.id), keyEverywhere: true };
  // The former member leaves: their session on the team's host and their key stay, their role does not.
  await removeMember(await actingAs(s, tOwner.me.id), { teamId: team.id, personId: former.me.id });

  for (const kind of TARGETS) {
    const t = await document(kind);
    // The guest follows the document's share link once: the link's cookie is their grant on its host.
    const { shareUrl, node } = await setSharing(s, t.node, true);
    const link = new URL(shareUrl!);
    const opened = await callers.guest.client.on(t.host).get(link.pathname + link.search);
    assert.equal(opened.status, 302, `the share link of ${kind} sets its cookie`);
    targets[kind] = { ...t, node };
  }
  await askAll();
});

// ---- the doors ---------------------------------------------------------------------------------------

interface Answer {
  status: number;
  code?: string;
}

/** One request by a caller to a host (the main app by default), with the caller's key when they send it. */
async function ask(
  who: Caller,
  method: string,
  path: string,
  opts: { host?: string; body?: ReqOpts['body']; headers?: Record<string, string>; key?: boolean } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (who.key && (who.keyEverywhere || opts.key)) headers['x-api-key'] = who.key;
  const client = opts.host ? who.client.on(opts.host) : who.client;
  const r = await client.request(method, path, { body: opts.body, headers });
  return { status: r.status, code: r.status >= 400 ? r.json?.code : undefined };
}

const ajax = { 'x-requested-with': 'fetch', accept: 'application/json' };
const onHost = (t: Target, extra: Record<string, string> = {}) => ({ origin: `http://${t.host}`, ...extra });

/** The sync API's request for a target: the personal base for one's own documents, the team base (protocol
 *  2, the team's id) for the team's. If-Match: the document's checksum. */
function sync(who: Caller, t: Target, method: string, suffix: string, body?: object) {
  const base = t.team ? `/_/team/${t.account.username}/sync` : '/_/sync';
  const headers: Record<string, string> = { 'if-match': `"${t.node.checksum}"` };
  if (t.team) Object.assign(headers, { 'x-sync-protocol': '2', 'x-sync-account-id': String(t.account.id) });
  return ask(who, method, `${base}${suffix}`, { body, headers, key: true });
}

type Door = (who: Caller, t: Target) => Promise<Answer>;

/** A fresh document like the target, for the rows that remove one. */
const fresh = async (t: Target) => document(((t.team ? 'team ' : 'own ') + t.node.visibility) as TargetKind, 'gone');

const DOORS: Record<string, Door> = {
  'dashboard list the tree': (who, t) =>
    ask(who, 'GET', `/_/dashboard/nodes?team=${t.account.username}`, { headers: ajax }),
  'dashboard create': (who, t) =>
    ask(who, 'POST', '/_/dashboard/nodes', {
      body: { type: 'site', name: `table-new-${++made}.html`, ownerId: t.account.id },
      headers: ajax,
    }),
  'dashboard rename': (who, t) =>
    ask(who, 'POST', `/_/dashboard/nodes/${t.node.id}/rename`, { body: { name: t.node.name }, headers: ajax }),
  'dashboard move': (who, t) =>
    ask(who, 'POST', `/_/dashboard/nodes/${t.node.id}/move`, { body: { parentId: 0 }, headers: ajax }),
  'dashboard visibility': (who, t) =>
    ask(who, 'POST', `/_/dashboard/nodes/${t.node.id}/visibility`, {
      body: { visibility: t.node.visibility },
      headers: ajax,
    }),
  'dashboard delete': async (who, t) =>
    ask(who, 'POST', `/_/dashboard/nodes/${(await fresh(t)).node.id}/delete`, { body: {}, headers: ajax }),
  'sharing read': (who, t) =>
    ask(who, 'GET', `/_/dashboard/nodes/${t.node.id}/sharing`, { headers: { accept: 'application/json' } }),
  'sharing change': (who, t) =>
    ask(who, 'POST', `/_/dashboard/nodes/${t.node.id}/sharing`, { body: { enabled: 'true' }, headers: ajax }),
  'uploads upload (dashboard)': (who, t) => {
    const up = multipart(
      { parentId: '0', ownerId: String(t.account.id) },
      { name: `note-${++made}.txt`, content: 'hi' },
    );
    return ask(who, 'POST', '/_/upload', { body: up.body, headers: up.headers });
  },
  'uploads upload (host)': (who, t) =>
    ask(who, 'POST', '/_/upload', {
      host: t.host,
      body: { fileName: `note-${++made}.txt`, fileBody: Buffer.from('hi').toString('base64') },
      headers: onHost(t, { 'page-url': t.url, accept: 'application/json' }),
    }),
  'sync read': (who, t) => sync(who, t, 'GET', `/nodes/${t.node.id}/content`),
  'sync write': (who, t) => sync(who, t, 'PUT', `/nodes/${t.node.id}/content`, { content: t.html }),
  'sync rename': (who, t) => sync(who, t, 'PATCH', `/nodes/${t.node.id}/rename`, { newName: t.node.name }),
  'sync move': (who, t) => sync(who, t, 'PATCH', `/nodes/${t.node.id}/move`, { targetParentId: 0 }),
  'sync delete': async (who, t) => {
    const gone = await fresh(t);
    return sync(who, gone, 'DELETE', `/nodes/${gone.node.id}`);
  },
  'team sync list the tree': (who, t) => sync(who, t, 'GET', '/nodes'),
  'team sync create': (who, t) =>
    sync(who, t, 'POST', '/nodes', { type: 'site', name: `table-new-${++made}.html`, parentId: 0, content: t.html }),
  'bus send': (who, t) =>
    ask(who, 'POST', '/_/bus/send', {
      host: t.host,
      body: { channel: 'access-table', type: 'ping' },
      headers: onHost(t, { 'page-url': t.url }),
    }),
  'save save': (who, t) =>
    ask(who, 'POST', '/_/save', {
      host: t.host,
      body: t.html,
      headers: onHost(t, { 'content-type': 'text/plain;charset=UTF-8', 'document-url': t.url }),
    }),
  'editor open': (who, t) => ask(who, 'GET', `/_/edit?path=${t.node.name}`, { host: t.host }),
  'versions list': (who, t) =>
    ask(who, 'GET', `/_/versions?path=${t.node.name}`, { host: t.host, headers: { accept: 'application/json' } }),
  'data-loss resolve': (who, t) =>
    ask(who, 'POST', '/_/data-loss/no-such-event', {
      host: t.host,
      body: { choice: 'nothing', file: t.url },
      headers: onHost(t),
    }),
  'document GET': (who, t) => ask(who, 'GET', `/${t.node.name}`, { host: t.host }),
};
for (const door of Object.keys(DOORS)) DOORS[door.replace(/^sync /, 'team sync ')] ??= DOORS[door];

// ---- the test ----------------------------------------------------------------------------------------

/** The table's words for the refusals it names often. */
const WORDS: Record<string, string> = {
  login: '401:login-required',
  'no-key': '401:missing-key',
  gone: '404:node-not-found',
  'no-team': '404:not-found',
  viewer: '403:viewer',
  'not-owner': '400:not-owner',
  // Past the access check: the data-loss door then refuses the request's made-up choice.
  passes: '400:invalid',
};
const spelled = (cell: string) => WORDS[cell] ?? cell;
/** An answer as the table spells it: a plain 404 is one answer whatever it calls itself (`not-found`, the sync
 *  API's `node-not-found`): there is nothing there, as far as the caller may know; a cell that names a 404's
 *  code (the sync rows) is held to it. */
const shown = (a: Answer, want: string) =>
  a.code && (a.status !== 404 || want.startsWith('404:')) ? `${a.status}:${a.code}` : String(a.status);

interface Cell {
  name: string;
  want: string;
  ask: () => Promise<Answer>;
}
const cells: Cell[] = parseTable(TABLE).flatMap((row) => {
  const door = DOORS[`${row.door} ${row.question}`];
  assert.ok(door, `a door for ${row.door} ${row.question}`);
  return CALLERS.map((caller) => {
    const want = spelled(row.cells[caller]);
    return {
      name: `${row.door} · ${row.question} · ${row.target} · ${caller} → ${want}`,
      want,
      ask: () => door(callers[caller], targets[row.target]),
    };
  });
});

// Every cell is asked at the end of the setup (one root `before`: Node runs a file's root hooks at once), a
// few at a time: a row changes nothing, or a document of its own. The tests then read the answers.
const answers = new Map<Cell, Promise<string>>();
async function askAll() {
  const queue = [...cells];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const answer = c.ask().then((a) => shown(a, c.want));
      answers.set(c, answer);
      await answer.catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
}

for (const cell of cells) {
  test(cell.name, async () => assert.equal(await answers.get(cell), cell.want));
}

// ---- beside the table ------------------------------------------------------------------------------
// What a viewer's refusals leave behind (nothing, in the tree or the trash), the doors the table does not ask
// (folders, paths, apps, collections, duplicates, the trash), and the use cases themselves, which refuse a
// handler that forgot to ask; then the answers of strangers at the use cases, and sharing turned off.

const ajaxOpts = { headers: ajax };

/** A person with a sync key and a dashboard session. */
async function member(plan: 'personal' | 'maker' = 'personal') {
  const k = await keyHolder(kiln, { plan });
  const main = kiln.client();
  storeSessions(
    main.jar,
    kiln.config,
    await sessionsFor(kiln.services.database.db, kiln.config, k.person.id, k.person.username),
  );
  return { ...k, main };
}

function multipart(fields: Record<string, string>, file: { name: string; content: string }) {
  const boundary = `----kilnviewer${Date.now()}`;
  const parts = Object.entries(fields).map(
    ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/plain\r\n\r\n${file.content}\r\n`,
  );
  return {
    body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, accept: 'application/json' },
  };
}

/** Everything about the team's tree that a change would touch, live and trashed. */
async function treeOf(teamId: number) {
  return kiln.services.database.db
    .selectFrom('nodes')
    .select(['id', 'name', 'path', 'parent_id', 'type', 'visibility', 'checksum', 'trashed_at', 'enable_signups'])
    .where('owner_id', '=', teamId)
    .orderBy('id')
    .execute();
}

const isViewerRefusal = (err: unknown) => err instanceof KilnError && err.status === 403 && err.code === 'viewer';

test('a team viewer changing the team’s files gets 403 viewer through every door, and nothing changes', async () => {
  const owner = await member('maker');
  const viewer = await member();
  const team = await createTeam(kiln.services, {
    username: `v-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'maker',
  });
  await setMember(await actingAs(kiln.services, owner.person.id), {
    teamId: team.id,
    username: viewer.person.username,
    role: 'viewer',
  });
  const s = kiln.services;
  const by = owner.person.id;
  const folder = await createNode(await actingAs(s, by), {
    ownerId: team.id,
    parentId: 0,
    type: 'folder',
    name: 'docs',
  });
  const doc = await createNode(await actingAs(s, by), {
    ownerId: team.id,
    parentId: folder.id,
    type: 'site',
    name: `plan-${team.id}.html`,
    html: '<html><p>plan</p></html>',
  });
  const other = await createNode(await actingAs(s, by), {
    ownerId: team.id,
    parentId: 0,
    type: 'folder',
    name: 'archive',
  });
  const upload = await storeUpload(s, {
    ownerId: team.id,
    parentId: 0,
    parentPath: '',
    plan: 'maker',
    fileName: 'notes.txt',
    bytes: Buffer.from('notes'),
  });
  const gone = await createNode(await actingAs(s, by), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `gone-${team.id}.html`,
    html: '<html><p>gone</p></html>',
  });
  await deleteNode(await actingAs(s, by), { nodeId: gone.id });
  const before = await treeOf(team.id);

  const refusals: Array<[string, { status: number; json: any }]> = [];
  const door = (what: string, r: { status: number; json: any }) => refusals.push([what, r]);

  // The dashboard.
  const dash = (path: string, body: object) => viewer.main.post(path, body, ajaxOpts);
  door('create', await dash('/_/dashboard/nodes', { type: 'site', name: 'new.html', ownerId: team.id }));
  door('create folder', await dash('/_/dashboard/nodes', { type: 'folder', name: 'new', ownerId: team.id }));
  door('create a path', await dash('/_/dashboard/nodes', { type: 'site', name: 'a/b.html', ownerId: team.id }));
  door(
    'create in a folder',
    await dash('/_/dashboard/nodes', { type: 'site', name: 'in.html', parentId: folder.id, ownerId: team.id }),
  );
  door('rename', await dash(`/_/dashboard/nodes/${doc.id}/rename`, { name: 'renamed.html' }));
  door('move', await dash(`/_/dashboard/nodes/${doc.id}/move`, { parentId: other.id }));
  door('delete', await dash(`/_/dashboard/nodes/${doc.id}/delete`, {}));
  door('delete a folder', await dash(`/_/dashboard/nodes/${folder.id}/delete`, { cascade: true }));
  door('visibility', await dash(`/_/dashboard/nodes/${doc.id}/visibility`, { visibility: 'private' }));
  door('upload visibility', await dash(`/_/dashboard/nodes/${upload.id}/visibility`, { visibility: 'private' }));
  door('make an app', await dash(`/_/dashboard/nodes/${doc.id}/app`, { enableSignups: true }));
  door('make a collection', await dash(`/_/dashboard/nodes/${folder.id}/collection`, { collection: true }));
  door('duplicate', await dash(`/_/dashboard/nodes/${doc.id}/duplicate`, {}));
  door('restore', await dash(`/_/dashboard/trash/${gone.id}/restore`, {}));
  door('purge', await dash(`/_/dashboard/trash/${gone.id}/purge`, {}));
  door('empty the trash', await dash('/_/dashboard/trash/empty', { ownerId: team.id }));

  // Uploads (multipart from the dashboard, into the team's top level or one of its folders).
  for (const [what, fields] of [
    ['upload', { parentId: '0', ownerId: String(team.id) }],
    ['upload into a folder', { parentId: String(folder.id) }],
  ] as const) {
    const up = multipart(fields, { name: 'sneaky.txt', content: 'no' });
    door(what, await viewer.main.post('/_/upload', up.body, { headers: up.headers }));
  }

  // The team sync API (the desktop client's protocol 2).
  const sync = new SyncApi({
    ...viewer.api.conn,
    protocol: 2,
    accountId: team.id,
    syncBase: `/_/team/${team.username}/sync`,
  });
  const etag = `"${doc.checksum}"`;
  door('sync create', await sync.raw('POST', '/nodes', { body: { type: 'folder', name: 'x', parentId: 0 } }));
  door(
    'sync save',
    await sync.raw('PUT', `/nodes/${doc.id}/content`, { body: { content: 'x' }, headers: { 'if-match': etag } }),
  );
  door(
    'sync rename',
    await sync.raw('PATCH', `/nodes/${doc.id}/rename`, { body: { newName: 'r.html' }, headers: { 'if-match': etag } }),
  );
  door(
    'sync move',
    await sync.raw('PATCH', `/nodes/${doc.id}/move`, {
      body: { targetParentId: other.id },
      headers: { 'if-match': etag },
    }),
  );
  door('sync delete', await sync.raw('DELETE', `/nodes/${doc.id}`, { headers: { 'if-match': etag } }));

  for (const [what, r] of refusals) {
    assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json?.code, 'viewer', `${what}: ${JSON.stringify(r.json)}`);
  }

  // The use cases themselves give the same refusal (a handler that forgot to ask would still get it).
  const v = viewer.person.id;
  const useCases: Array<[string, () => Promise<unknown>]> = [
    [
      'createNode',
      async () => createNode(await actingAs(s, v), { ownerId: team.id, parentId: 0, type: 'site', name: 'uc.html' }),
    ],
    ['createPath', async () => createPath(await actingAs(s, v), { ownerId: team.id, path: 'uc/x.html' })],
    ['renameNode', async () => renameNode(await actingAs(s, v), { nodeId: doc.id, name: 'uc.html' })],
    ['moveNode', async () => moveNode(await actingAs(s, v), { nodeId: doc.id, parentId: other.id })],
    ['deleteNode', async () => deleteNode(await actingAs(s, v), { nodeId: doc.id })],
    ['setVisibility', async () => setVisibility(await actingAs(s, v), { nodeId: doc.id, visibility: 'private' })],
    ['restoreFromTrash', async () => restoreFromTrash(await actingAs(s, v), { rootId: gone.id })],
    ['purgeFromTrash', async () => purgeFromTrash(await actingAs(s, v), { rootId: gone.id })],
    ['emptyTrash', async () => emptyTrash(await actingAs(s, v), { ownerId: team.id })],
  ];
  for (const [name, run] of useCases)
    await assert.rejects(run, isViewerRefusal, `${name} refuses the viewer with 403 viewer`);

  // A save on the team's host: the viewer has a session there (members do, to read the team's private files),
  // and the save is refused like every other door.
  const host = kiln.hostOf(team.username);
  await viewer.main.enter(host);
  const save = await viewer.main.on(host).post('/_/save', '<html><p>viewer was here</p></html>', {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': `http://${host}/docs/${doc.name}`,
      origin: `http://${host}`,
      'sec-fetch-site': 'same-origin',
    },
  });
  assert.equal(save.status, 403, save.text);
  assert.equal(save.json.code, 'viewer');

  assert.deepEqual(await treeOf(team.id), before, 'nothing changed in the team’s tree or trash');
  // And the team's document is served as it was.
  assert.equal((await kiln.client(host).get(`/docs/${doc.name}`)).text, '<html><p>plan</p></html>');
});

test('strangers keep their answers: a missing node for the use cases, no team for the sync API', async () => {
  const owner = await member('maker');
  const stranger = await member();
  const team = await createTeam(kiln.services, {
    username: `s-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'maker',
  });
  const doc = await createNode(await actingAs(kiln.services, owner.person.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `own-${team.id}.html`,
  });
  // The table's answer for another account's public node, as the dashboard gives it (#46: one answer per question).
  await assert.rejects(
    renameNode(await actingAs(kiln.services, stranger.person.id), { nodeId: doc.id, name: 'x.html' }),
    (err) => err instanceof KilnError && err.status === 400 && err.code === 'not-owner',
  );
  const sync = new SyncApi({
    ...stranger.api.conn,
    protocol: 2,
    accountId: team.id,
    syncBase: `/_/team/${team.username}/sync`,
  });
  const r = await sync.raw('DELETE', `/nodes/${doc.id}`);
  assert.equal(r.status, 404);
  const up = multipart({ parentId: '0', ownerId: String(team.id) }, { name: 'x.txt', content: 'x' });
  assert.equal((await stranger.main.post('/_/upload', up.body, { headers: up.headers })).status, 404);
});

test('the sharing door asks the same question: a team’s owners and editors share its documents, a viewer gets 403 viewer, a stranger 400 not-owner (as on the dashboard)', async () => {
  const owner = await member('maker');
  const editor = await member();
  const viewer = await member();
  const stranger = await member();
  const team = await createTeam(kiln.services, {
    username: `sh-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'maker',
  });
  for (const [who, role] of [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ] as const)
    await setMember(await actingAs(kiln.services, owner.person.id), {
      teamId: team.id,
      username: who.person.username,
      role,
    });
  const doc = await createNode(await actingAs(kiln.services, owner.person.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `shared-${team.id}.html`,
    html: '<html><p>team page</p></html>',
  });
  const sharing = `/_/dashboard/nodes/${doc.id}/sharing`;
  const json = { headers: { accept: 'application/json' } };
  for (const who of [owner, editor]) {
    assert.equal((await who.main.get(sharing, json)).status, 200);
    const on = await who.main.post(sharing, { enabled: 'true' }, ajaxOpts);
    assert.equal(on.status, 200, on.text);
    assert.equal(on.json.shareEnabled, true);
  }
  for (const [req, what] of [
    [viewer.main.get(sharing, json), 'read'],
    [viewer.main.post(sharing, { enabled: 'false' }, ajaxOpts), 'change'],
  ] as const) {
    const r = await req;
    assert.equal(r.status, 403, `${what}: ${r.text}`);
    assert.equal(r.json.code, 'viewer');
  }
  for (const r of [
    await stranger.main.get(sharing, json),
    await stranger.main.post(sharing, { enabled: 'false' }, ajaxOpts),
  ]) {
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'not-owner');
  }
  assert.equal((await owner.main.get(sharing, json)).json.shareEnabled, true, 'the refusals changed nothing');
});

test('a team’s editor manages the team’s apps and collections as the table lets them (their own account’s id is not the question)', async () => {
  const owner = await member('maker');
  const editor = await member();
  const team = await createTeam(kiln.services, {
    username: `ap-${owner.person.username}`,
    ownerId: owner.person.id,
    plan: 'maker',
  });
  await setMember(await actingAs(kiln.services, owner.person.id), {
    teamId: team.id,
    username: editor.person.username,
    role: 'editor',
  });
  const doc = await createNode(await actingAs(kiln.services, owner.person.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'site',
    name: `app-${team.id}.html`,
  });
  const folder = await createNode(await actingAs(kiln.services, owner.person.id), {
    ownerId: team.id,
    parentId: 0,
    type: 'folder',
    name: 'forms',
  });
  const app = await editor.main.post(`/_/dashboard/nodes/${doc.id}/app`, { enableSignups: true }, ajaxOpts);
  assert.equal(app.status, 200, app.text);
  assert.equal(app.json.node.enableSignups, true);
  const signups = await editor.main.get(`/_/dashboard/nodes/${doc.id}/signups`, ajaxOpts);
  assert.equal(signups.status, 200, signups.text);
  assert.deepEqual(signups.json.users, []);
  const collection = await editor.main.post(
    `/_/dashboard/nodes/${folder.id}/collection`,
    { collection: true },
    ajaxOpts,
  );
  assert.equal(collection.status, 201, collection.text);
  const info = await editor.main.get(`/_/dashboard/nodes/${folder.id}/collection`, ajaxOpts);
  assert.equal(info.status, 200, info.text);
  assert.equal(info.json.collection.ownerUsername, team.username, 'the collection is served on the team’s host');
});
