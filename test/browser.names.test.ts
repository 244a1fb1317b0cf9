// Document names in Chromium (#25.3), at 1280 and 390 px with axe: the New-document form says, as a name is
// typed, that another account has it (names unique across this Kiln, the default); an administrator
// switches the instance to per-account names on /_/admin and is told so; the same name is then free.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode, deleteNode } from '../src/nodes/tree.ts';
import { findByPath } from '../src/nodes/find.ts';
import { setDocumentNames } from '../src/admin/admin.ts';
import { newPerson, sessionsFor, browserCookies, actingAs } from './support/people.ts';
import { check, DESKTOP, PHONE } from './support/screens.ts';

let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

async function signedInPage(accountId: number, username: string, viewport: { width: number; height: number }) {
  const sessions = await sessionsFor(bk.kiln.services.database.db, bk.kiln.config, accountId, username);
  const context = await bk.newContext();
  await context.addCookies(browserCookies(bk.kiln.config, sessions));
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  return { context, page };
}

for (const [size, viewport] of [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const) {
  test(`the New-document form checks a name as it is typed; per-account names free it (${size})`, {
    skip: !hasChromium && 'Debian chromium is not installed (.ci/run installs it)',
    timeout: 120_000,
  }, async () => {
    const s = bk.kiln.services;
    const other = await createPerson(s, newPerson());
    const taken = `taken-${size}-${other.username}.html`;
    await createNode(await actingAs(s, other.id), { ownerId: other.id, parentId: 0, type: 'site', name: taken });
    const me = await createPerson(s, newPerson());
    const { context, page } = await signedInPage(me.id, me.username, viewport);

    await page.goto(bk.mainUrl('/_/dashboard'));
    // On a phone the form is folded away: one tap opens it.
    const openForm = (p: typeof page) =>
      size === 'phone' ? p.locator('.create summary', { hasText: 'Create a document' }).click() : undefined;
    await openForm(page);
    const input = page.getByLabel('New document');
    const said = page.locator('#new-site-check');
    await input.fill(taken);
    await said.filter({ hasText: 'belongs to another account' }).waitFor();
    assert.equal(await input.getAttribute('aria-invalid'), 'true');
    await check(page, 'names-taken', size);
    await input.fill(`notes/fresh-${size}.html`);
    await said.filter({ hasText: `"notes/fresh-${size}.html" is free.` }).waitFor();
    assert.equal(await input.getAttribute('aria-invalid'), null);
    await context.close();

    // An administrator makes names per account.
    const admin = await createPerson(s, newPerson({ isSuperadmin: true }));
    const a = await signedInPage(admin.id, admin.username, viewport);
    await a.page.goto(bk.mainUrl('/_/admin'));
    await a.page.getByLabel(/Unique per account/).check();
    await a.page.getByRole('button', { name: 'Save', exact: true }).click();
    await a.page.getByText('document names are unique per account').waitFor();
    await check(a.page, 'names-admin', size);
    await a.context.close();

    const again = await signedInPage(me.id, me.username, viewport);
    await again.page.goto(bk.mainUrl('/_/dashboard'));
    await openForm(again.page);
    await again.page.getByLabel('New document').fill(taken);
    await again.page
      .locator('#new-site-check')
      .filter({ hasText: `"${taken}" is free.` })
      .waitFor();
    await again.page.getByRole('button', { name: 'Create document' }).click();
    await again.page.locator(`tr[data-path="${taken}"]`).waitFor();
    await again.context.close();
    // Back as it was for the next run: the shared name to the trash, names unique across this Kiln.
    const made = await findByPath(s, me.id, taken);
    assert.ok(made);
    await deleteNode(await actingAs(s, me.id), { nodeId: made.id });
    await setDocumentNames(s, 'instance');
  });
}
