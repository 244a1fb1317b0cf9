// Teams in the browser: an owner invites a person by email (a one-time link, mailed); the person joins by
// opening it signed in with that address; owners and editors list, create and upload a team's files from
// the dashboard, served on the team's own host; viewers and strangers cannot.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { mailsTo } from './support/stripe.ts';
import type { Client } from './support/client.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };
const html = { headers: { accept: 'text/html' } };

async function person(over = {}) {
  const main = kiln.client();
  const me = await signedIn(kiln, main, over);
  return { me, main };
}

function multipart(fields: Record<string, string>, file: { name: string; content: string }) {
  const boundary = `----kilnteam${Date.now()}`;
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

async function inviteLink(to: string): Promise<string> {
  const mails = await mailsTo(kiln, to);
  assert.equal(mails.length, 1, `one mail to ${to}`);
  const m = /https?:\/\/\S+\/_\/invite\/([A-Za-z0-9_-]+)/.exec(mails[0].text);
  assert.ok(m, mails[0].text);
  return `/_/invite/${m[1]}`;
}

test('an owner invites by email; the invitee joins with the link; the team’s files are managed from the dashboard and served on its host', async () => {
  const owner = await person({ plan: 'maker' });
  const team = await owner.main.post('/_/dashboard/teams', { username: `crew${owner.me.id}` }, json);
  assert.equal(team.status, 200, team.text);
  const teamId = team.json.team.id as number;
  const teamName = team.json.team.username as string;

  const bob = await person({ email: `bob${owner.me.id}@example.com` });
  const sent = await owner.main.post(
    `/_/dashboard/teams/${teamId}/invites`,
    { email: bob.me.email.toUpperCase(), role: 'editor' },
    json,
  );
  assert.equal(sent.status, 200, sent.text);
  assert.match(sent.json.msg, /Invitation sent to bob\d+@example\.com/);
  const link = await inviteLink(bob.me.email);

  // Anybody who opens the link sees what it offers; signing in comes back to it.
  const anon = await kiln.client().page(link);
  assert.equal(anon.status, 200);
  const $ = cheerio.load(anon.text);
  assert.match($('h1').text(), new RegExp(`Join the team ${teamName}`));
  assert.equal($('main a[href^="/_/login"]').attr('href'), `/_/login?return=${encodeURIComponent(link)}`);

  // Someone else signed in cannot use it.
  const eve = await person();
  const refused = await eve.main.post(link, {}, json);
  assert.equal(refused.status, 403);
  assert.match(refused.json.msg, /This invitation is for bob/);

  // Bob accepts: he lands on the team's documents.
  const joined = await bob.main.post(link, {}, { form: true, ...html });
  assert.equal(joined.status, 302);
  assert.match(joined.headers.location!, new RegExp(`^/_/dashboard\\?team=${teamName}&`));
  assert.equal(
    new URL(joined.headers.location!, 'http://x').searchParams.get('msg'),
    `Welcome to ${teamName}: you are an editor.`,
  );
  const again = await bob.main.post(link, {}, json);
  assert.equal(again.status, 400, 'the link works once');
  assert.equal(again.json.code, 'invalid-token');
  const teams = await bob.main.get('/_/dashboard/teams', json);
  assert.deepEqual(
    teams.json.teams.map((t: { username: string; role: string }) => [t.username, t.role]),
    [[teamName, 'editor']],
  );

  // Bob creates a document and uploads a file in the team's tree.
  const made = await bob.main.post('/_/dashboard/nodes', { type: 'site', name: 'plan.html', ownerId: teamId }, json);
  assert.equal(made.status, 201, made.text);
  const list = cheerio.load(made.json.html);
  assert.match(list('#usage').text(), /1 document/, 'the answer lists the team’s tree');
  const up = multipart({ parentId: '0', ownerId: String(teamId) }, { name: 'notes.txt', content: 'team notes' });
  const uploaded = await bob.main.post('/_/upload', up.body, { headers: up.headers });
  assert.equal(uploaded.status, 200, uploaded.text);
  assert.equal(uploaded.json.urls[0], `http://${kiln.hostOf(teamName)}/notes.txt`);
  const teamHost = kiln.client(kiln.hostOf(teamName));
  assert.equal((await teamHost.get('/notes.txt')).text, 'team notes');
  assert.equal((await teamHost.get('/plan.html')).status, 200);
  assert.equal((await kiln.client(kiln.hostOf(bob.me.username)).get('/notes.txt')).status, 404, 'not on Bob’s host');

  // The dashboard shows the team's tree and the way back to one's own.
  const page = cheerio.load((await bob.main.page(`/_/dashboard?team=${teamName}`)).text);
  assert.match(page('h1').text(), new RegExp(`Documents of the team ${teamName}`));
  assert.deepEqual(
    page('#tree tr[data-node-id] .nm')
      .map((_, a) => page(a).text())
      .get(),
    ['plan.html', 'notes.txt'],
  );
  assert.deepEqual(
    page('nav.accounts a')
      .map((_, a) => page(a).text())
      .get(),
    [`${bob.me.username} (you)`, teamName],
  );
  assert.equal(page('form:has(#new-site) input[name=ownerId]').attr('value'), String(teamId));

  // Renaming a team file from the dashboard works for its editors.
  const planId = made.json.node.id;
  const renamed = await bob.main.post(`/_/dashboard/nodes/${planId}/rename`, { name: 'roadmap.html' }, json);
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal((await teamHost.get('/roadmap.html')).status, 200);

  // Viewers and strangers: no dashboard of the team, no writes into it.
  const viola = await person({ email: `viola${owner.me.id}@example.com` });
  await owner.main.post(`/_/dashboard/teams/${teamId}/invites`, { email: viola.me.email, role: 'viewer' }, json);
  const violaJoined = await viola.main.post(await inviteLink(viola.me.email), {}, json);
  assert.equal(violaJoined.status, 200);
  assert.equal(violaJoined.json.msg, `Welcome to ${teamName}: you are a viewer.`);
  assert.equal((await viola.main.get(`/_/dashboard?team=${teamName}`, json)).status, 403);
  const sneaky = await viola.main.post('/_/dashboard/nodes', { type: 'site', name: 'x.html', ownerId: teamId }, json);
  assert.equal(sneaky.status, 403);
  assert.equal(
    (await eve.main.post(`/_/dashboard/nodes/${planId}/delete`, {}, json)).status,
    400,
    'not hers: not-owner',
  );
  const up2 = multipart({ parentId: '0', ownerId: String(teamId) }, { name: 'no.txt', content: 'no' });
  assert.equal((await eve.main.post('/_/upload', up2.body, { headers: up2.headers })).status, 404);
});

test('only owners invite; a bad address or role answers 400; an unknown link answers 400 invalid-token', async () => {
  const owner = await person({ plan: 'maker' });
  const team = await owner.main.post('/_/dashboard/teams', { username: `band${owner.me.id}` }, json);
  const teamId = team.json.team.id as number;
  const bad = await owner.main.post(
    `/_/dashboard/teams/${teamId}/invites`,
    { email: 'not-an-email', role: 'editor' },
    json,
  );
  assert.equal(bad.status, 400);
  const badRole = await owner.main.post(
    `/_/dashboard/teams/${teamId}/invites`,
    { email: 'x@example.com', role: 'king' },
    json,
  );
  assert.equal(badRole.status, 400);
  const other: { main: Client } = await person();
  const notOwner = await other.main.post(`/_/dashboard/teams/${teamId}/invites`, { email: 'y@example.com' }, json);
  assert.equal(notOwner.status, 404, 'a stranger does not learn the team exists');
  const unknown = await other.main.page('/_/invite/nope');
  assert.equal(unknown.status, 400);
  assert.match(unknown.text, /not valid/);
});
