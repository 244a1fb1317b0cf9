// The pages no other browser file looks at (#25.8), at 1280 and 390 px: each fits the width and has no
// serious or critical axe finding. Together with the other browser files, every page Kiln renders is
// checked: owner pages on the main app (an app's sign-ups, deleting a folder, messages, sign-out, a team
// invitation, confirming a new email, a new password), a document host's pages (one version, its changes,
// restoring it, the text-upload editor, an app's sign-in and password pages, the refusal a signed-in
// stranger gets) and the signed-out pages (home, sign-in, sign-up open, by invitation and closed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { browserCookies, newPerson, sessionsFor, actingAs } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode, createPath } from '../src/nodes/tree.ts';
import { saveDocument } from '../src/save/pipeline.ts';
import { storeUpload } from '../src/uploads/upload.ts';
import { createTeam } from '../src/teams/teams.ts';
import { inviteToTeam } from '../src/teams/invites.ts';
import { createEmailToken } from '../src/accounts/email-tokens.ts';
import { createSignupInvite, saveInstanceSettings } from '../src/admin/admin.ts';
import { signUpOnApp } from '../src/apps/app-users.ts';
import type { Services } from '../src/services.ts';

const skip = !hasChromium && 'Debian chromium is not installed (.ci/run installs it)';
let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

const DOC = (text: string) =>
  `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Plan</title></head>\n<body><main><h1>Plan</h1><p>${text}</p></main></body></html>\n`;

/** An owner with what the pages show: a document with versions, a folder with a file, a text upload,
 *  an app with a sign-up, a team with an invitation; and the links mailed to them. */
async function world(s: Services, size: string) {
  const owner = await createPerson(s, newPerson({ plan: 'maker' }));
  const by = { kind: 'editor' as const, accountId: owner.id, writer: null };
  const doc = await createNode(await actingAs(s, owner.id), {
    ownerId: owner.id,
    parentId: 0,
    type: 'site',
    name: `plan-${owner.username}.html`,
    html: DOC('first'),
  });
  await saveDocument(s, { nodeId: doc.id, bytes: Buffer.from(DOC('second, longer')), by });
  await saveDocument(s, { nodeId: doc.id, bytes: Buffer.from(DOC('third')), by });
  const versions = await s.database.db
    .selectFrom('versions')
    .select('id')
    .where('node_id', '=', doc.id)
    .orderBy('id')
    .execute();
  const inFolder = await createPath(await actingAs(s, owner.id), {
    ownerId: owner.id,
    path: `box/inside-${owner.username}.html`,
    html: DOC('in a box'),
  });
  await storeUpload(s, {
    ownerId: owner.id,
    plan: 'maker',
    parentId: 0,
    parentPath: '',
    fileName: 'notes.txt',
    bytes: Buffer.from('a text file\n'),
  });
  const appName = `app-${owner.username}.html`;
  const app = await createNode(await actingAs(s, owner.id), {
    ownerId: owner.id,
    parentId: 0,
    type: 'site',
    name: appName,
    html: DOC('an app'),
  });
  await s.database.db.updateTable('nodes').set({ enable_signups: 1 }).where('id', '=', app.id).execute();
  const links = { hostUrl: bk.docUrl(owner.username, ''), appName, appPath: `/${appName}` };
  const visitor = await signUpOnApp(s, {
    app,
    email: `v-${size}-${owner.username}@example.com`,
    password: 'Visitor-pw-9-kiln',
    links,
  });
  const appReset = await createEmailToken(s, { accountId: visitor.person.id, email: '', purpose: 'reset' });
  const team = await createTeam(s, { username: `crew-${size}-${owner.username}`, ownerId: owner.id, plan: 'maker' });
  let invite = '';
  const link = (t: string) => {
    invite = t;
    return `http://x/${t}`;
  };
  await inviteToTeam(await actingAs(s, owner.id), {
    teamId: team.id,
    email: `friend-${size}@example.com`,
    role: 'editor',
    link,
  });
  const emailChange = await createEmailToken(s, {
    accountId: owner.id,
    email: `new-${size}-${owner.username}@example.com`,
    purpose: 'email-change',
  });
  const reset = await createEmailToken(s, { accountId: owner.id, email: '', purpose: 'reset' });
  return {
    owner,
    doc,
    versions: versions.map((v) => v.id),
    folderId: inFolder.parent_id,
    app,
    appName,
    invite,
    emailChange,
    reset,
    appReset,
  };
}

async function signedIn(accountId: number, username: string, viewport: typeof DESKTOP): Promise<BrowserContext> {
  const ctx = await bk.newContext();
  await ctx.addCookies(
    browserCookies(
      bk.kiln.config,
      await sessionsFor(bk.kiln.services.database.db, bk.kiln.config, accountId, username),
    ),
  );
  const p = await ctx.newPage();
  await p.setViewportSize(viewport);
  await p.close();
  return ctx;
}

for (const [size, viewport] of [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const) {
  test(`every page no other file looks at fits and passes axe (${size})`, { skip, timeout: 240_000 }, async () => {
    const s = bk.kiln.services;
    const w = await world(s, size);
    const host = (p: string) => bk.docUrl(w.owner.username, p);

    const owner = await signedIn(w.owner.id, w.owner.username, viewport);
    const p = await owner.newPage();
    await p.setViewportSize(viewport);
    const ownerPages: Array<[string, string]> = [
      ['app-signups', bk.mainUrl(`/_/dashboard/nodes/${w.app.id}/signups`)],
      ['delete-folder', bk.mainUrl(`/_/dashboard/nodes/${w.folderId}/delete`)],
      ['messages', bk.mainUrl('/_/dashboard/messages')],
      ['account', bk.mainUrl('/_/account')],
      ['team-invitation', bk.mainUrl(`/_/invite/${w.invite}`)],
      ['email-confirm', bk.mainUrl(`/_/account/email/${w.emailChange}`)],
      ['version', host(`/_/version/${w.versions[0]}`)],
      ['version-diff', host(`/_/version/${w.versions[0]}/diff`)],
      ['version-restore', host(`/_/restore/${w.versions[0]}`)],
      ['upload-editor', host(`/_/edit/uploads/${w.owner.username}/notes.txt`)],
      ['sign-out', bk.mainUrl('/_/logout')],
    ];
    for (const [name, url] of ownerPages) {
      const res = await p.goto(url);
      assert.equal(res?.status(), 200, `${name}: ${url}`);
      await check(p, `sweep-${name}`, size);
    }
    await owner.close();

    // An administrator's new invitation link, on the page in a field to copy.
    const root = await createPerson(s, newPerson({ isSuperadmin: true }));
    const adm = await signedIn(root.id, root.username, viewport);
    const ap = await adm.newPage();
    await ap.setViewportSize(viewport);
    await ap.goto(bk.mainUrl('/_/admin'));
    await ap.getByRole('button', { name: 'Make an invitation link' }).click();
    const link = ap.getByLabel(/Invitation link/);
    await link.waitFor();
    assert.match(await link.inputValue(), /\/_\/signup\?invite=/);
    await check(ap, 'sweep-admin-invite', size);
    await adm.close();

    // A signed-in stranger on the owner's editor: a clear refusal, not a loop.
    const stranger = await createPerson(s, newPerson());
    const other = await signedIn(stranger.id, stranger.username, viewport);
    const o = await other.newPage();
    await o.setViewportSize(viewport);
    const refused = await o.goto(host(`/_/edit?path=${w.doc.name}`));
    assert.equal(refused?.status(), 403);
    await check(o, 'sweep-refused', size);
    await other.close();

    // Signed out: the main app's pages, an app's own sign-in and password pages.
    const anon = await bk.newContext();
    const a = await anon.newPage();
    await a.setViewportSize(viewport);
    const signedOut: Array<[string, string, number]> = [
      ['home', bk.mainUrl('/'), 200],
      ['login', bk.mainUrl('/_/login'), 200],
      ['reset-request', bk.mainUrl('/_/reset'), 200],
      ['reset', bk.mainUrl(`/_/reset/${w.reset}`), 200],
      ['app-login', host(`/_/app/login?app=${w.appName}`), 200],
      ['app-reset-request', host(`/_/app/reset?app=${w.appName}`), 200],
      ['app-reset', host(`/_/app/reset/${w.appReset}`), 200],
      ['signup-open', bk.mainUrl('/_/signup'), 200],
    ];
    for (const [name, url, status] of signedOut) {
      const res = await a.goto(url);
      assert.equal(res?.status(), status, `${name}: ${url}`);
      await check(a, `sweep-${name}`, size);
    }
    // Sign-up by invitation (without and with the link) and closed, then open again for the next run.
    await saveInstanceSettings(s, { signups: 'invite', defaultPlan: 'free' });
    await a.goto(bk.mainUrl('/_/signup'));
    await check(a, 'sweep-signup-invite', size);
    await a.goto(bk.mainUrl(`/_/signup?invite=${await createSignupInvite(s)}`));
    await check(a, 'sweep-signup-invited', size);
    await saveInstanceSettings(s, { signups: 'closed', defaultPlan: 'free' });
    await a.goto(bk.mainUrl('/_/signup'));
    await check(a, 'sweep-signup-closed', size);
    await saveInstanceSettings(s, { signups: 'open', defaultPlan: 'free' });
    await anon.close();
  });
}
