// `kiln sync` with a page that saves itself: a page written in the folder goes up, the owner edits it in
// Chromium (hyperclayjs saves it), and the saved page arrives in the folder through the change stream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { appendAndSave, hasChromium, startBrowserKiln, type BrowserKiln } from './support/browser.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { newPerson, sessionsFor, browserCookies } from './support/people.ts';
import { startCli, tempDir, writeFile } from './support/sync-cli.ts';
import { until } from './support/wait.ts';

const DOC = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Todo</title>
<script type="module" src="/_/hyperclayjs/src/hyperclay.js?preset=minimal"></script>
</head>
<body><h1 id="title">My list</h1><ul id="items"><li>first</li></ul></body>
</html>
`;

let bk: BrowserKiln;
before(async () => {
  if (hasChromium) bk = await startBrowserKiln();
});
after(() => bk?.stop());

test('an edit in Chromium (the owner’s page saving itself) arrives in the synced folder', {
  skip: !hasChromium && 'Debian chromium is not installed',
  timeout: 240_000,
}, async () => {
  const s = bk.kiln.services;
  const person = await createPerson(s, newPerson({ plan: 'personal' }));
  const { key } = await createSyncKey(s, person.id);
  const dir = tempDir();
  const name = `synced-todo-${process.pid}.html`;
  writeFile(dir, name, DOC);
  const cli = startCli(['sync', dir, '--url', `http://127.0.0.1:${new URL(bk.kiln.url).port}`, '--json'], key);
  try {
    await cli.waitFor((e) => e.event === 'upload' && e.path === name, 'the page uploaded');
    await cli.waitFor((e) => e.event === 'watching', 'the watch');
    const sessions = await sessionsFor(s.database.db, bk.kiln.config, person.id, person.username);
    const context = await bk.newContext();
    await context.addCookies(browserCookies(bk.kiln.config, sessions));
    const page = await context.newPage();
    await page.goto(bk.docUrl(person.username, `/${name}`));
    await page.waitForFunction(() => typeof (window as any).hyperclay?.savePage === 'function', null, {
      timeout: 30_000,
    });
    const docClient = bk.kiln.client(`${person.username}.${bk.kiln.config.rootDomain}`);
    const served = await appendAndSave(
      page,
      async () => (await docClient.get(`/${name}`)).text,
      'added',
      'from the browser',
    );
    assert.match(served, /<li id="added">from the browser<\/li>/);
    await until(() => fs.readFileSync(path.join(dir, name), 'utf8').includes('<li id="added">from the browser</li>'), {
      what: 'the browser’s save on disk',
      timeout: 60_000,
    });
    await cli.waitFor((e) => e.event === 'download' && e.path === name, 'a download event');
  } finally {
    assert.equal(await cli.stop('SIGINT'), 0, cli.stderr());
  }
});
