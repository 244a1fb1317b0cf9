// The data-clobber guard when its check cannot run right after a save (#44.1, #44.2): every acknowledged
// clobber raises an event, whatever happens to the process or the extraction pool, and "Revert entire page"
// goes back to the protected data. A real `kiln serve` child (alone on both storages; with `--workers 2` on
// PostgreSQL + Redis), loaded with anonymous `?data=` requests on another account's page, or killed with
// SIGKILL as soon as the clobber is answered (the guard used to check 200 ms after, in memory only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnKiln, type ChildKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { instance } from './support/instance.ts';
import { storage } from './support/kiln.ts';
import { newPerson, sessionsFor, storeSessions, actingAs } from './support/people.ts';
import { until } from './support/wait.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createNode } from '../src/nodes/tree.ts';

const RULES =
  '<script type="application/json" data-rules-name="api" data-rules-version="1">{"title": "h1", "items": ".item[]"}</script>';
const page = (items: string[], extra = '') =>
  `<!doctype html><html><head>${RULES}</head><body><h1>Stock</h1><ul>${items
    .map((i) => `<li class="item">${i}</li>`)
    .join('')}</ul>${extra}</body></html>`;
const TWENTY = Array.from({ length: 20 }, (_, i) => `item ${i + 1}`);
const FULL = page(TWENTY);
const CLOBBERED = page(['item 1']);
/** A page another account owns: anyone may ask for its data with `?data=` rules of their own. */
const HEAVY = `<!doctype html><html><body><ul>${Array.from(
  { length: 20_000 },
  (_, i) => `<li class="x" data-n="${i}">word ${i} and more words</li>`,
).join('')}</ul></body></html>`;

const modes = [
  { name: 'one process', args: [] as string[], skip: false as string | false },
  {
    name: '--workers 2',
    args: ['--workers', '2'],
    skip: storage !== 'postgres' && 'workers need PostgreSQL + Redis (the scale-out configuration)',
  },
];

/** A fresh instance with the owner's guarded document and another account's heavy public page. */
async function setUp() {
  const i = await instance();
  const s = await createServices(i.config);
  try {
    const other = await createPerson(s, newPerson());
    await createNode(await actingAs(s, other.id), {
      ownerId: other.id,
      parentId: 0,
      type: 'site',
      name: 'heavy.html',
      html: HEAVY,
    });
    const owner = i.person.id;
    await createNode(await actingAs(s, owner), {
      ownerId: owner,
      parentId: 0,
      type: 'site',
      name: 'second.html',
      html: FULL,
    });
    const sessions = await sessionsFor(s.database.db, i.config, owner, i.person.username);
    /** The owner signed in on the main app (the activity feed). */
    const main = (port: number) => {
      const c = new Client(port, i.config.rootDomain);
      storeSessions(c.jar, i.config, sessions);
      return c;
    };
    return { i, main, heavyHost: `${other.username}.${i.config.rootDomain}` };
  } finally {
    await closeServices(s);
  }
}

async function start(env: Record<string, string>, args: string[]): Promise<ChildKiln> {
  const kiln = await spawnKiln(env, { args });
  if (args.length > 0)
    await until(() => kiln.output().includes('running with 2 workers'), { what: 'both workers ready' });
  return kiln;
}

/** The primary's worker processes (its children). */
function workerPids(kiln: ChildKiln): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(kiln.child.pid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function save(c: Client, url: string, html: string, trigger: 'user' | 'auto') {
  return c.post('/_/save', html, {
    headers: {
      'content-type': 'text/plain;charset=UTF-8',
      'document-url': url,
      'page-url': url,
      'save-trigger': trigger,
      origin: new URL(url).origin,
    },
  });
}

async function pending(c: Client, url: string) {
  const res = await c.get(`/_/data-loss?file=${encodeURIComponent(url)}`, { headers: { 'page-url': url } });
  assert.equal(res.status, 200, res.text);
  return res.json.event;
}

/** The panel's GET once a worker serves again (replacements of killed workers take a while to be ready). */
async function pendingOnceServed(c: Client, url: string) {
  const res = await c.get(`/_/data-loss?file=${encodeURIComponent(url)}`, { headers: { 'page-url': url } });
  if (res.status === 503 && res.json?.code === 'no-worker') return null;
  assert.equal(res.status, 200, res.text);
  return res.json.event;
}

/** The event's preview: the 20 items against the one left. */
function assertTwentyLost(event: { preview: { key: string; now: string; yours: string }[] }) {
  assert.equal(event.preview.length, 1);
  assert.deepEqual(
    { ...event.preview[0], yours: event.preview[0].yours.slice(0, 14) },
    { key: 'items', now: 'item 1', yours: 'item 1, item 2' },
  );
}

const itemsOf = (html: string) => [...html.matchAll(/<li class="item">([^<]*)<\/li>/g)].map((m) => m[1]);

/** The owner's page holds 20 items and the guard protects them (the panel's first look). */
async function protectedPage(c: Client, url: string) {
  const saved = await save(c, url, FULL, 'user');
  assert.equal(saved.status, 200, saved.text);
  assert.equal(await pending(c, url), null);
}

/** Revert on the event brings back the page with its 20 items, and the guard protects them again. */
async function revertRestores(c: Client, url: string, path: string) {
  const event = await pending(c, url);
  assert.ok(event, 'the event is still pending');
  assert.equal(event.canRevert, true);
  const res = await c.post(
    `/_/data-loss/${event.id}`,
    { choice: 'revert', file: url },
    { headers: { 'page-url': url, origin: new URL(url).origin } },
  );
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json, { ok: true, choice: 'revert', status: 'reverted' });
  assert.deepEqual(itemsOf((await c.get(path)).text), TWENTY, 'revert brings back the protected data');
  assert.equal(await pending(c, url), null);
  // What is protected now is the 20 items again: clobbering them raises a new event.
  assert.equal((await save(c, url, CLOBBERED, 'auto')).status, 200);
  const next = await pending(c, url);
  assert.ok(next, 'the restored data is protected again');
  assert.notEqual(next.id, event.id);
}

for (const mode of modes) {
  test(`${mode.name}: a clobber saved while anonymous ?data= requests keep the extraction pool busy raises its event`, {
    skip: mode.skip,
    timeout: 300_000,
  }, async () => {
    const { i, main, heavyHost } = await setUp();
    const kiln = await start(i.env, mode.args);
    let flooding = true;
    try {
      const owner = i.owner(kiln.port);
      const url = `http://${i.host}${i.doc}`;
      await protectedPage(owner, url);

      // Many anonymous readers of another account's page, each asking with rules of its own (no cache helps).
      let n = 0;
      let busy = 0;
      let clobberedAt = Infinity;
      let busyAfter = 0;
      const reader = async () => {
        const c = new Client(kiln.port, heavyHost);
        while (flooding) {
          const rules = `{f${++n}: li@data-n[], g: li[]}`;
          const res = await c.get(`/heavy.html?data=${encodeURIComponent(rules)}`).catch(() => null);
          if (res && res.status === 400 && /busy/.test(res.text)) {
            busy++;
            if (Date.now() > clobberedAt) busyAfter++;
          }
        }
      };
      const readers = Array.from({ length: 40 }, reader);
      await until(() => busy >= 5, { what: 'the pool answering busy', timeout: 120_000 });
      const clobber = await save(owner, url, CLOBBERED, 'auto');
      assert.equal(clobber.status, 200, clobber.text);
      clobberedAt = Date.now();
      // While the readers go on, and the pool goes on answering them busy, the clobber's event is raised (the
      // activity feed says it; nobody opened the panel).
      const raised = async () => {
        const res = await main(kiln.port).get('/_/activity');
        assert.equal(res.status, 200, res.text);
        return (res.json.activity as { kind: string }[]).some((a) => a.kind === 'data-loss');
      };
      await until(raised, { what: 'the event in the activity feed', timeout: 120_000 });
      assert.ok(flooding);
      await until(() => busyAfter >= 5, { what: 'busy answers after the clobber', timeout: 120_000 });
      flooding = false;
      await Promise.all(readers);

      const event = await until(() => pending(owner, url), { what: 'the event of the clobber', timeout: 60_000 });
      assert.equal(event.lossSummary.provenance, 'ui-background');
      assertTwentyLost(event);
      await revertRestores(owner, url, i.doc);
    } finally {
      flooding = false;
      await kiln.kill('SIGKILL');
      await i.cleanup();
    }
  });

  test(`${mode.name}: a clobber whose process is killed as soon as it is answered raises its event after the restart; revert on it restores the protected data`, {
    skip: mode.skip,
    timeout: 300_000,
  }, async () => {
    const { i, main } = await setUp();
    let kiln = await start(i.env, mode.args);
    try {
      let owner = i.owner(kiln.port);
      // Two guarded pages, both clobbered, the process killed as soon as both are answered.
      const url = `http://${i.host}${i.doc}`;
      const second = `http://${i.host}/second.html`;
      await protectedPage(owner, url);
      await protectedPage(owner, second);

      const clobbers = await Promise.all([save(owner, url, CLOBBERED, 'auto'), save(owner, second, CLOBBERED, 'auto')]);
      if (mode.args.length === 0) {
        await kiln.kill('SIGKILL');
        kiln = await start(i.env, mode.args);
        owner = i.owner(kiln.port);
      } else {
        const killed = workerPids(kiln);
        for (const pid of killed) process.kill(pid, 'SIGKILL');
        await until(() => workerPids(kiln).length === 2 && !workerPids(kiln).some((p) => killed.includes(p)), {
          what: 'two new workers',
          timeout: 120_000,
        });
      }
      for (const res of clobbers) assert.equal(res.status, 200, res.text);
      // Before anyone looks: the restarted process runs what the killed one owed (the activity feed says it).
      const raised = async () => {
        const res = await main(kiln.port).get('/_/activity');
        if (res.status !== 200) return false;
        const lines = (res.json.activity as { kind: string; path: string }[]).filter((a) => a.kind === 'data-loss');
        return lines.length === 2 && lines;
      };
      const lines = await until(raised, { what: 'both events in the activity feed', timeout: 60_000 });
      assert.deepEqual(lines.map((l) => l.path).sort(), [i.doc.slice(1), 'second.html'].sort());
      // The first page: the panel's next look shows the event.
      const event = await until(() => pendingOnceServed(owner, url), {
        what: 'the event of the clobber',
        timeout: 60_000,
      });
      assert.equal(event.lossSummary.provenance, 'ui-background');
      assertTwentyLost(event);

      // The second: the tab goes on autosaving the clobbered page before anyone looks. The event is the clobber's,
      // and its revert goes back to the 20 items, not to the page of the clobber.
      assert.equal((await save(owner, second, page(['item 1'], '<p>later</p>'), 'auto')).status, 200);
      const late = await pending(owner, second);
      assert.ok(late, 'the event of the second clobber');
      assertTwentyLost(late);
      await revertRestores(owner, second, '/second.html');
      await revertRestores(owner, url, i.doc);
    } finally {
      await kiln.kill('SIGKILL');
      await i.cleanup();
    }
  });
}
