// Crash safety of the tree: a sync client creates folders, documents and uploads, moves, renames and
// deletes them (one operation at a time, like the desktop sync engine), against a real `kiln serve`
// child that is killed with SIGKILL at random moments (after a random number of acknowledged
// operations, at a random point of the next: never after a set time, which a busy machine would fill
// with fewer operations). After every restart, through the sync API: every acknowledged write is there
// (names, parents, bytes), the one operation in flight at the kill either happened or did not, and the
// tree is consistent (every parent is an existing folder, every path agrees with its parent's, no
// cycles).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { spawnKiln } from './support/child.ts';
import { Client } from './support/client.ts';
import { storage, freshPostgres } from './support/kiln.ts';
import { newPerson } from './support/people.ts';
import { within } from './support/wait.ts';

const ROUNDS = 20;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Known {
  type: 'folder' | 'site' | 'upload';
  name: string;
  parentId: number;
  /** sha256 of the bytes (files). */
  hash?: string;
}
interface Listed {
  id: number;
  type: string;
  name: string;
  parentId: number;
  path: string;
}

const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(Math.random() * xs.length)];

test(`the tree survives SIGKILL during creates, uploads, moves, renames and deletes (${ROUNDS} kills, ${storage})`, {
  timeout: 600_000,
}, async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-crash-tree-'));
  const pg = storage === 'postgres' ? await freshPostgres() : null;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(pg ? { DATABASE_URL: pg.url } : {}),
  };
  const config = loadConfig(env);
  try {
    const s = await createServices(config);
    const person = await createPerson(s, newPerson({ plan: 'personal' }));
    const { key } = await createSyncKey(s, person.id);
    await closeServices(s);

    const known = new Map<number, Known>();
    /** Nodes the operation in flight at the kill may have changed, with the states they may be in. */
    let uncertain = new Map<number, Array<Known | null>>();
    /** A create in flight at the kill: its node may exist. */
    let maybeCreated: Known | null = null;
    let n = 0;
    let acknowledged = 0;
    let nodesAtEnd = 0;
    /** Folders nest at most 5 levels: a folder's depth (0 for the top), a subtree's height in folders. */
    const depth = (id: number): number => (id === 0 ? 0 : 1 + depth(known.get(id)!.parentId));
    const height = (id: number): number =>
      known.get(id)!.type !== 'folder'
        ? 0
        : 1 + Math.max(0, ...[...known].filter(([, v]) => v.parentId === id).map(([k]) => height(k)));
    const descendants = (id: number): number[] => {
      const out = [id];
      for (let i = 0; i < out.length; i++) for (const [k, v] of known) if (v.parentId === out[i]) out.push(k);
      return out;
    };

    for (let round = 0; round < ROUNDS; round++) {
      const kiln = await spawnKiln(env);
      const c = new Client(kiln.port, config.rootDomain);
      const call = (method: string, p: string, body?: object) =>
        c.request(method, `/_/sync${p}`, { headers: { 'x-api-key': key }, body });

      // 1. What the last round left, as the sync API shows it.
      const listing = await call('GET', '/nodes');
      assert.equal(listing.status, 200, listing.text);
      const nodes = new Map<number, Listed>((listing.json.nodes as Listed[]).map((x) => [x.id, x]));
      for (const x of nodes.values()) {
        if (x.parentId !== 0) {
          const parent = nodes.get(x.parentId);
          assert.ok(parent && parent.type === 'folder', `round ${round}: ${x.name} has no parent folder ${x.parentId}`);
          assert.equal(
            x.path,
            parent.path ? `${parent.path}/${parent.name}` : parent.name,
            `round ${round}: ${x.name}'s path disagrees with its parent's`,
          );
        } else assert.equal(x.path, '', `round ${round}: a top-level node has a path`);
        const seen = new Set<number>();
        for (let at: Listed | undefined = x; at && at.parentId !== 0; at = nodes.get(at.parentId)) {
          assert.ok(!seen.has(at.id), `round ${round}: a cycle through ${at.name}`);
          seen.add(at.id);
        }
      }
      const stateOf = async (x: Listed): Promise<Known> => {
        const k: Known = { type: x.type as Known['type'], name: x.name, parentId: x.parentId };
        if (x.type !== 'folder') {
          const r = await call('GET', `/nodes/${x.id}/content`);
          assert.equal(r.status, 200, `round ${round}: reading ${x.name}: ${r.text}`);
          k.hash = sha(Buffer.from(r.json.content, x.type === 'upload' ? 'base64' : 'utf8'));
        }
        return k;
      };
      for (const [id, want] of known) {
        if (uncertain.has(id)) continue;
        const x = nodes.get(id);
        assert.ok(x, `round ${round}: acknowledged ${want.type} ${want.name} is gone`);
        assert.deepEqual(await stateOf(x), want, `round ${round}: acknowledged ${want.type} ${want.name} changed`);
      }
      for (const [id, states] of uncertain) {
        const x = nodes.get(id);
        const now = x ? await stateOf(x) : null;
        assert.ok(
          states.some((st) => JSON.stringify(st) === JSON.stringify(now)),
          `round ${round}: node ${id} is in neither the state before nor after the interrupted operation: ${JSON.stringify(now)} vs ${JSON.stringify(states)}`,
        );
        if (now) known.set(id, now);
        else known.delete(id);
      }
      for (const [id, x] of nodes) {
        if (known.has(id)) continue;
        const mc = maybeCreated as Known | null;
        assert.ok(
          mc && x.name === mc.name && x.parentId === mc.parentId,
          `round ${round}: an unexpected node ${x.name}`,
        );
        const now = await stateOf(x);
        assert.deepEqual(now, mc, `round ${round}: the interrupted create left ${x.name} half-made`);
        known.set(id, now);
      }
      uncertain = new Map();
      maybeCreated = null;
      nodesAtEnd = nodes.size;

      // 2. Operations one at a time until the kill: after `target` of them are acknowledged, during the next.
      const target = 1 + Math.floor(Math.random() * 30);
      let inRound = 0;
      let reached = () => {};
      const targetReached = new Promise<void>((r) => (reached = r));
      let stop = false;
      const loop = async () => {
        while (!stop) {
          const folders = [0, ...[...known].filter(([, v]) => v.type === 'folder').map(([k]) => k)];
          const ids = [...known.keys()];
          const roll = Math.random();
          const i = ++n;
          try {
            if (roll < 0.4 || ids.length < 4) {
              const kind = (['folder', 'site', 'upload'] as const)[i % 3];
              const parentId = pick(kind === 'folder' ? folders.filter((f) => depth(f) < 5) : folders)!;
              const bytes =
                kind === 'folder'
                  ? null
                  : kind === 'site'
                    ? Buffer.from(`<!DOCTYPE html><html><body><p>${i}</p>${'<i>x</i>'.repeat(i % 300)}</body></html>`)
                    : randomBytes(1 + (i % 5) * 20_000);
              const want: Known = {
                type: kind,
                name: kind === 'folder' ? `f${i}` : kind === 'site' ? `d${i}.html` : `u${i}.bin`,
                parentId,
                ...(bytes ? { hash: sha(bytes) } : {}),
              };
              maybeCreated = want;
              const body = {
                type: kind,
                name: want.name,
                parentId,
                ...(bytes ? { content: kind === 'upload' ? bytes.toString('base64') : bytes.toString('utf8') } : {}),
              };
              const r = await call('POST', '/nodes', body);
              assert.equal(r.status, 201, r.text);
              known.set(r.json.node.id, want);
              maybeCreated = null;
            } else {
              const id = pick(ids)!;
              const before = known.get(id)!;
              if (roll < 0.65) {
                const inside = new Set(descendants(id));
                const targetParentId = pick(folders.filter((f) => !inside.has(f) && depth(f) + height(id) <= 5))!;
                const after = { ...before, parentId: targetParentId };
                uncertain = new Map([[id, [before, after]]]);
                const r = await call('PATCH', `/nodes/${id}/move`, { targetParentId });
                assert.equal(r.status, 200, r.text);
                known.set(id, after);
              } else if (roll < 0.8) {
                const name = before.type === 'folder' ? `f${i}` : before.type === 'site' ? `d${i}.html` : `u${i}.bin`;
                const after = { ...before, name };
                uncertain = new Map([[id, [before, after]]]);
                const r = await call('PATCH', `/nodes/${id}/rename`, { newName: name });
                assert.equal(r.status, 200, r.text);
                known.set(id, after);
              } else {
                const gone = descendants(id);
                uncertain = new Map(gone.map((g) => [g, [known.get(g)!, null]]));
                const r = await call('DELETE', `/nodes/${id}?cascade=true`);
                assert.equal(r.status, 200, r.text);
                for (const g of gone) known.delete(g);
              }
              uncertain = new Map();
            }
            acknowledged++;
            if (++inRound === target) reached();
          } catch (err) {
            if (stop || kiln.child.exitCode !== null || kiln.child.signalCode !== null) return; // killed mid-request
            if ((err as Error).name === 'AssertionError') throw err;
            return;
          }
        }
      };
      const running = loop();
      // (The loop ends early only on a failure: an assertion, thrown by `await running` below once the child
      // is gone, or a request that failed; a server that stops answering is given up on after a minute.)
      await within(Promise.race([targetReached, running]), 60_000, 'operations acknowledged').catch(() => {});
      // A random moment of the operation in flight: the sleep is the randomness of the crash, not a wait.
      await new Promise((r) => setTimeout(r, Math.random() * 30));
      await kiln.kill('SIGKILL');
      stop = true;
      await running;
      assert.ok(inRound >= target, `round ${round}: ${inRound} of ${target} operations acknowledged before the kill`);
    }
    t.diagnostic(`${acknowledged} operations acknowledged; ${nodesAtEnd} nodes at the end`);
  } finally {
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
