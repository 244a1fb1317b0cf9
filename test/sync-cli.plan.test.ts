// The reconcile plan of `kiln sync` / push / pull (src/sync-cli/plan.ts): pure, from three states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type Action,
  type BaseFile,
  type LocalFile,
  type Mode,
  type RemoteFile,
  conflictName,
  plan,
  planFolders,
  withPending,
} from '../src/sync-cli/plan.ts';
import { nodeNameProblem } from '../src/core/names.ts';

const L = (sum: string): LocalFile => ({ sum, size: 10 });
const R = (id: number, sum: string, version = `v${id}`): RemoteFile => ({ id, sum, size: 10, type: 'site', version });
const B = (id: number, local: string, remote = local): BaseFile => ({ id, local, remote });

function run(
  mode: Mode,
  local: Record<string, LocalFile>,
  remote: Record<string, RemoteFile>,
  base: Record<string, BaseFile> = {},
  opts: { prune?: boolean; skipped?: Record<string, string> } = {},
): Action[] {
  return plan({
    mode,
    prune: opts.prune ?? false,
    local: new Map(Object.entries(local)),
    remote: new Map(Object.entries(remote)),
    base: new Map(Object.entries(base)),
    skipped: new Map(Object.entries(opts.skipped ?? {})),
  });
}
const ops = (actions: Action[]) => actions.map((a) => `${a.op} ${'rel' in a ? a.rel : `${a.from}>${a.to}`}`);

test('first sync: what is missing comes down, what is new goes up, equal files are only recorded', () => {
  const a = run('sync', { 'a.html': L('1'), 'same.html': L('s') }, { 'b.html': R(2, '2'), 'same.html': R(3, 's') });
  assert.deepEqual(ops(a).sort(), ['download b.html', 'record same.html', 'upload a.html']);
  const up = a.find((x) => x.op === 'upload')!;
  assert.equal((up as { id?: number }).id, undefined, 'a create');
});

test('after a sync: one side changed → it wins, conditional on what the other side had', () => {
  const base = { 'a.html': B(1, 'x'), 'b.html': B(2, 'y') };
  const a = run('sync', { 'a.html': L('x2'), 'b.html': L('y') }, { 'a.html': R(1, 'x'), 'b.html': R(2, 'y2') }, base);
  assert.deepEqual(ops(a), ['upload a.html', 'download b.html']);
  assert.equal((a[0] as { ifMatch?: string }).ifMatch, 'x');
  assert.equal((a[1] as { expectLocal: string | null }).expectLocal, 'y');
});

test('both changed differently: a conflict in sync; left alone (reported) by push and pull', () => {
  const base = { 'a.html': B(1, 'x') };
  const local = { 'a.html': L('mine') };
  const remote = { 'a.html': R(1, 'theirs') };
  assert.deepEqual(ops(run('sync', local, remote, base)), ['conflict a.html']);
  assert.deepEqual(ops(run('push', local, remote, base)), ['both-changed a.html']);
  assert.deepEqual(ops(run('pull', local, remote, base)), ['both-changed a.html']);
  // Both changed to the same bytes: nothing moves.
  assert.deepEqual(ops(run('sync', { 'a.html': L('same') }, { 'a.html': R(1, 'same') }, base)), ['record a.html']);
  // Both new and different: a conflict too (nothing is overwritten without a base).
  assert.deepEqual(ops(run('sync', local, remote)), ['conflict a.html']);
});

test('a host that rewrites what it stores (two checksums in the base) is not a change', () => {
  const a = run('sync', { 'a.html': L('sent') }, { 'a.html': R(1, 'stored') }, { 'a.html': B(1, 'sent', 'stored') });
  assert.deepEqual(a, []);
});

test('deletes: an unchanged file deleted on one side goes to the other side’s trash; a changed one comes back', () => {
  const base = { 'a.html': B(1, 'x'), 'b.html': B(2, 'y'), 'c.html': B(3, 'z'), 'd.html': B(4, 'w') };
  const a = run('sync', { 'b.html': L('y'), 'c.html': L('z2') }, { 'a.html': R(1, 'x'), 'd.html': R(4, 'w2') }, base);
  assert.deepEqual(ops(a).sort(), ['download d.html', 'local-delete b.html', 'remote-delete a.html', 'upload c.html']);
  // Gone from both: forgotten.
  assert.deepEqual(ops(run('sync', {}, {}, { 'a.html': B(1, 'x') })), ['forget a.html']);
});

test('a local rename or move is sent as a move of the same node, with its listed version', () => {
  const a = run('sync', { 'docs/new.html': L('x') }, { 'old.html': R(1, 'x', 'sv1') }, { 'old.html': B(1, 'x') });
  assert.deepEqual(a, [{ op: 'remote-move', from: 'old.html', to: 'docs/new.html', id: 1, version: 'sv1' }]);
  // Two new local files with the same bytes: ambiguous, so no move is guessed.
  const b = run('sync', { 'n1.html': L('x'), 'n2.html': L('x') }, { 'old.html': R(1, 'x') }, { 'old.html': B(1, 'x') });
  assert.ok(!b.some((x) => x.op === 'remote-move'));
});

test('a remote rename (same node id at another path) is done locally; an edit travels with it', () => {
  const a = run('sync', { 'old.html': L('x') }, { 'new.html': R(1, 'x') }, { 'old.html': B(1, 'x') });
  assert.deepEqual(ops(a), ['local-move old.html>new.html']);
  const edited = run('sync', { 'old.html': L('x2') }, { 'new.html': R(1, 'x') }, { 'old.html': B(1, 'x') });
  assert.deepEqual(ops(edited), ['local-move old.html>new.html', 'upload new.html']);
  // Already moved on both sides (a run stopped before its state was written): only recorded.
  const done = run('sync', { 'new.html': L('x') }, { 'new.html': R(1, 'x') }, { 'old.html': B(1, 'x') });
  assert.deepEqual(ops(done), []);
});

test('push and pull are one way; --prune removes what the source lacks', () => {
  const local = { 'a.html': L('1'), 'both.html': L('l') };
  const remote = { 'b.html': R(2, '2'), 'both.html': R(3, 'r') };
  assert.deepEqual(ops(run('push', local, remote)).sort(), ['upload a.html', 'upload both.html']);
  assert.deepEqual(ops(run('push', local, remote, {}, { prune: true })).sort(), [
    'remote-delete b.html',
    'upload a.html',
    'upload both.html',
  ]);
  const pulled = run('pull', local, remote, {}, { prune: true });
  assert.deepEqual(ops(pulled).sort(), ['download b.html', 'download both.html', 'local-delete a.html']);
  // Pull overwriting a file it has no base for keeps the local copy in the trash.
  assert.equal((pulled.find((x) => x.op === 'download' && x.rel === 'both.html') as { trash: boolean }).trash, true);
  // Push without a base overwrites only what it just listed (If-Match: the listed checksum).
  const pushed = run('push', local, remote).find((x) => x.op === 'upload' && x.rel === 'both.html');
  assert.equal((pushed as { ifMatch?: string }).ifMatch, 'r');
  // Without --prune nothing is deleted on either side, even with a base.
  const base = { 'b.html': B(2, '2') };
  assert.ok(!run('push', {}, { 'b.html': R(2, '2') }, base).some((x) => x.op === 'remote-delete'));
  assert.ok(!run('pull', { 'b.html': L('2') }, {}, base).some((x) => x.op === 'local-delete'));
});

test('push --prune without a base: same bytes on both sides at different paths are one file moved', () => {
  const a = run('push', { 'new/x.html': L('x') }, { 'x.html': R(1, 'x', 'sv') }, {}, { prune: true });
  assert.deepEqual(a, [
    { op: 'remote-move', from: 'x.html', to: 'new/x.html', id: 1, version: 'sv' },
    { op: 'record', rel: 'new/x.html', base: B(1, 'x') },
  ]);
  const b = run('pull', { 'x.html': L('x') }, { 'new/x.html': R(1, 'x') }, {}, { prune: true });
  assert.deepEqual(ops(b), ['local-move x.html>new/x.html', 'record new/x.html']);
});

test('a file the server refused is not sent again until it changes', () => {
  assert.deepEqual(run('sync', { 'Bad Name!.html': L('1') }, {}, {}, { skipped: { 'Bad Name!.html': '1' } }), []);
  assert.deepEqual(ops(run('sync', { 'Bad Name!.html': L('2') }, {}, {}, { skipped: { 'Bad Name!.html': '1' } })), [
    'upload Bad Name!.html',
  ]);
});

test('a transfer that landed before a kill -9 is recognised (pending), so a later edit is not a conflict', () => {
  const pending = (p: Partial<import('../src/sync-cli/plan.ts').Pending>) =>
    new Map([['a.html', { to: 'remote' as const, id: 1, local: 'new', remote: 'new', ...p }]]);
  // An upload landed, and the local file was edited again before the next run: an upload, not a conflict.
  const local = new Map([['a.html', L('newer')]]);
  const remote = new Map([['a.html', R(1, 'new')]]);
  const base = withPending(new Map([['a.html', B(1, 'old')]]), pending({}), local, remote);
  assert.deepEqual(base.get('a.html'), B(1, 'new'));
  const next = plan({ mode: 'sync', prune: false, local, remote, base, skipped: new Map() });
  assert.deepEqual(ops(next), ['upload a.html']);
  // A create that landed (no base at all) likewise.
  assert.deepEqual(withPending(new Map(), pending({ id: null }), local, remote).get('a.html'), B(1, 'new'));
  // Not landed (the remote has something else): the base stays.
  const other = withPending(
    new Map([['a.html', B(1, 'old')]]),
    pending({}),
    local,
    new Map([['a.html', R(1, 'else')]]),
  );
  assert.deepEqual(other.get('a.html'), B(1, 'old'));
  // A download that landed: the local side holds it, the remote edited since → a download, not a conflict.
  const down = withPending(
    new Map(),
    pending({ to: 'local', id: 1, local: 'v1', remote: 'v1' }),
    new Map([['a.html', L('v1')]]),
    new Map([['a.html', R(1, 'v2')]]),
  );
  assert.deepEqual(down.get('a.html'), B(1, 'v1'));
});

test('conflict names are valid Kiln names, keep the extension and never take an existing name', () => {
  const at = new Date('2026-11-27T17:05:09Z');
  const n = conflictName('docs/notes.html', 'Alex’s Laptop', at);
  assert.equal(n, 'docs/notes (conflict alex-s-laptop 2026-11-27 17-05).html');
  assert.equal(nodeNameProblem(n.slice(5), 'site'), null);
  const taken = new Set([n]);
  assert.equal(
    conflictName('docs/notes.html', 'Alex’s Laptop', at, (p) => taken.has(p)),
    'docs/notes (conflict alex-s-laptop 2026-11-27 17-05 2).html',
  );
  assert.equal(conflictName('image.png', 'h', at), 'image (conflict h 2026-11-27 17-05).png');
});

test('folders: new empty folders are created on the other side, deleted ones removed deepest first', () => {
  const f = planFolders({
    mode: 'sync',
    prune: false,
    localDirs: new Set(['new', 'kept']),
    remoteDirs: new Map([
      ['kept', { id: 1, version: 'a' }],
      ['remote-new', { id: 2, version: 'b' }],
      ['gone', { id: 3, version: 'c' }],
      ['gone/deeper', { id: 4, version: 'd' }],
    ]),
    baseDirs: new Set(['kept', 'gone', 'gone/deeper']),
  });
  assert.deepEqual(
    f.map((x) => `${x.op} ${x.rel}`),
    ['mkdir-remote new', 'mkdir-local remote-new', 'rmdir-remote gone/deeper', 'rmdir-remote gone'],
  );
});
