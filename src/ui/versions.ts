// Pages of the version history.
import { diffLines } from 'diff';
import { html } from './html.ts';
import { page, type Msg } from './pages.ts';
import type { VersionInfo } from '../save/history.ts';

interface Doc {
  name: string;
  path: string;
}

const pathOf = (n: Doc) => (n.path ? `${n.path}/${n.name}` : n.name);
const SAVED_BY: Record<string, string> = {
  browser: 'browser',
  editor: 'editor',
  sync: 'sync key',
  restore: 'restore',
  create: 'created',
  starter: 'created from a starter',
  instance: 'app copy',
  share: 'share-link guest',
  import: 'imported',
};
const who = (v: VersionInfo) => v.savedByAgent ?? SAVED_BY[v.savedBy] ?? v.savedBy;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

export function versionsPage(o: {
  node: Doc;
  versions: VersionInfo[];
  documentPath: string;
  username?: string;
  base?: string;
  msg?: Msg;
}) {
  return page({
    title: `Versions of ${o.node.name}`,
    username: o.username,
    base: o.base,
    msg: o.msg,
    body: html`<h1>Versions of <a href="${o.documentPath}">${pathOf(o.node)}</a></h1>
      <p class="muted">Every save is kept. Open one to read it, compare it with the current page, or restore it (the restore is a new save: nothing is lost).</p>
      <table class="stack"><thead><tr><th>#</th><th>Saved</th><th>By</th><th class="num">Size</th><th></th></tr></thead><tbody>
      ${o.versions.map(
        (
          v,
          i,
        ) => html`<tr><td data-label="Version">${v.backupNumber}</td><td data-label="Saved"><time datetime="${v.createdAt}">${v.createdAt.replace('T', ' ').slice(0, 19)}</time></td>
          <td data-label="By">${who(v)}${v.savedByUsername ? html` <small>(${v.savedByUsername})</small>` : ''}</td><td class="num" data-label="Size">${kb(v.size)}</td>
          <td><a href="/_/version/${v.id}">view</a> · <a href="/_/version/${v.id}/diff">diff with current</a>${i === 0 ? html` · <small>current</small>` : html` · <a href="/_/restore/${v.id}">restore</a>`}</td></tr>`,
      )}
      </tbody></table>`,
  });
}

export function versionPage(o: { node: Doc; version: VersionInfo; content: string; username?: string; base?: string }) {
  return page({
    title: `Version ${o.version.backupNumber} of ${o.node.name}`,
    username: o.username,
    base: o.base,
    body: html`<h1>Version ${o.version.backupNumber} of ${pathOf(o.node)}</h1>
      <p class="muted">Saved ${o.version.createdAt} by ${who(o.version)} · ${kb(o.version.size)} ·
      <a href="/_/version/${o.version.id}?raw">view as page</a> · <a href="/_/version/${o.version.id}/diff">diff with current</a> ·
      <a href="/_/restore/${o.version.id}">restore</a> · <a href="/_/versions?path=${encodeURIComponent(pathOf(o.node))}">all versions</a></p>
      <pre tabindex="0" aria-label="The version’s HTML" style="white-space:pre-wrap;background:#fff;border:1px solid var(--line);padding:1rem;overflow:auto">${o.content}</pre>`,
  });
}

export function diffPage(o: {
  node: Doc;
  version: VersionInfo;
  old: string;
  current: string;
  username?: string;
  base?: string;
}) {
  const parts = diffLines(o.old, o.current);
  const changed = parts.some((p) => p.added || p.removed);
  return page({
    title: `Changes since version ${o.version.backupNumber}`,
    username: o.username,
    base: o.base,
    body: html`<h1>From version ${o.version.backupNumber} to the current ${pathOf(o.node)}</h1>
      <p class="muted"><span style="background:#fee2e2">− removed since then</span> · <span style="background:#dcfce7">+ added since then</span> ·
      <a href="/_/restore/${o.version.id}">restore version ${o.version.backupNumber}</a></p>
      ${changed ? '' : html`<p>No differences: this version is the current content.</p>`}
      <pre class="diff" tabindex="0" aria-label="Changes" style="background:#fff;border:1px solid var(--line);padding:1rem;overflow:auto">${parts.map(
        (p) => {
          if (!p.added && !p.removed) {
            const lines = p.value.split('\n');
            // Long unchanged runs fold to their first and last three lines.
            const text =
              lines.length > 8
                ? [...lines.slice(0, 3), `… ${lines.length - 6} unchanged lines …`, ...lines.slice(-3)].join('\n')
                : p.value;
            return html`<span>${text}</span>`;
          }
          const sign = p.added ? '+' : '−';
          const bg = p.added ? '#dcfce7' : '#fee2e2';
          return html`<span style="background:${bg};display:block">${p.value
            .replace(/\n$/, '')
            .split('\n')
            .map((l) => `${sign} ${l}`)
            .join('\n')}</span>`;
        },
      )}</pre>`,
  });
}

export function restorePage(o: { node: Doc; version: VersionInfo; username?: string; base?: string }) {
  return page({
    title: `Restore version ${o.version.backupNumber}`,
    username: o.username,
    base: o.base,
    body: html`<h1>Restore version ${o.version.backupNumber} of ${pathOf(o.node)}?</h1>
      <p>The document’s current content is kept as a version too, so you can go back.</p>
      <form method="post" action="/_/restore/${o.version.id}"><button type="submit">Restore version ${o.version.backupNumber}</button>
      <a href="/_/version/${o.version.id}/diff">see what changes</a></form>`,
  });
}
