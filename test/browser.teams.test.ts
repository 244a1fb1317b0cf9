// A team's editor works on a team document in Chromium (#25.1): from the team's dashboard, "Open" lands on the
// team's host in edit mode, the page (hyperclayjs 1.38) saves itself; "Edit code" and "Versions" open (no redirect
// loop). At 1280 and 390 px, with axe on each page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendAndSave, hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';
import { createTeam, setMember } from '../src/teams/teams.ts';
import { newPerson, sessionsFor, browserCookies, actingAs } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';

const DOC = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Team plan</title>
<script type="module" src="/_/hyperclayjs/src/hyperclay.js?preset=minimal"></script>
</head>
<body><main><h1>Team plan</h1><ul id="items"><li>kick-off</li></ul></main></body>
</html>
`;

let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

for (const [size, viewport] of [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const) {
  test(`a team editor edits a team document in the page and opens its code and versions (${size})`, {
    skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
    timeout: 180_000,
  }, async () => {
    const s = bk.kiln.services;
    const owner = await createPerson(s, newPerson({ plan: 'maker' }));
    const editor = await createPerson(s, newPerson());
    const team = await createTeam(s, { username: `crew-${size}-${owner.username}`, ownerId: owner.id, plan: 'maker' });
    await setMember(await actingAs(s, owner.id), { teamId: team.id, username: editor.username, role: 'editor' });
    const name = `${team.username}-plan.html`;
    await createNode(await actingAs(s, owner.id), { ownerId: team.id, parentId: 0, type: 'site', name, html: DOC });
    const sessions = await sessionsFor(s.database.db, bk.kiln.config, editor.id, editor.username);

    const context = await bk.newContext();
    await context.addCookies(browserCookies(bk.kiln.config, sessions));
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    await page.goto(bk.mainUrl(`/_/dashboard?team=${team.username}`));
    const row = page.locator(`tr[data-path="${name}"]`);
    await row.waitFor();
    await check(page, 'team-dashboard', size);

    // Open: through the handshake, onto the team's host, in edit mode.
    await row.getByRole('link', { name: 'Open' }).click();
    await page.waitForURL((u) => u.hostname.startsWith(`${team.username}.`) && u.pathname === `/${name}`);
    await page.waitForFunction(() => typeof (window as any).hyperclay?.savePage === 'function', null, {
      timeout: 20_000,
    });
    assert.equal(await page.evaluate(() => document.cookie.includes('isAdminOfCurrentResource=true')), true);
    assert.equal(await page.locator('kiln-toolbar').count(), 1, 'the editor gets the owner toolbar');
    const docClient = bk.kiln.client(`${team.username}.${bk.kiln.config.rootDomain}`);
    const served = await appendAndSave(
      page,
      async () => (await docClient.get(`/${name}`)).text,
      'from-editor',
      `added by ${editor.username}`,
    );
    assert.match(served, /<li id="from-editor">added by/);
    await check(page, 'team-document', size);

    // Edit code and Versions, from the dashboard's links: each opens (no redirect loop).
    for (const [label, path] of [
      ['Edit code', '/_/edit'],
      ['Versions', '/_/versions'],
    ] as const) {
      await page.goto(bk.mainUrl(`/_/dashboard?team=${team.username}`));
      const opened = page.waitForResponse((r) => new URL(r.url()).pathname === path);
      await row.getByRole('link', { name: label }).click();
      assert.equal((await opened).status(), 200, `${label} opens`);
      await page.waitForURL((u) => u.hostname.startsWith(`${team.username}.`) && u.pathname === path);
      await check(page, `team-${label.replace(' ', '-').toLowerCase()}`, size);
    }
    await context.close();
  });
}
