// The developer dashboard: the account's tree of documents, folders and uploads. Server-rendered and
// usable with plain form posts; a little inline script turns the forms into AJAX calls that swap in
// the pre-rendered node list the server answers with.
import { inSentence } from '../save/saved.ts';
import { EDITABLE_EXTENSIONS, extensionOf } from '../uploads/content-types.ts';
import { formatSize } from '../core/size.ts';
import { isDocumentName } from '../core/names.ts';
import { escapeHtml, html, raw, type Html } from './html.ts';
import { page } from './pages.ts';
import type { NodeRow } from '../store/schema.ts';
import { childPathOf } from '../nodes/find.ts';
import { limits } from '../limits.ts';
import { STARTERS } from '../nodes/starters.ts';
import type { TrashEntry } from '../nodes/trash.ts';
import type { ActivityItem } from '../nodes/activity.ts';

export interface ListView {
  /** Every node of the account (listTree order). */
  nodes: NodeRow[];
  /** `http://alice.kiln.localhost:8080` */
  hostUrl: string;
  /** Sites the plan allows; null when unlimited. */
  siteLimit: number | null;
  /** The plan's largest upload, in bytes. */
  uploadLimit: number;
  /** Whose tree it is (the caller's account, or a team's). */
  ownerId: number;
  /** Folders that are collections: folder id → collection id. */
  collections: Map<number, string>;
  /** Documents whose saved data was overwritten and not yet restored or dismissed (src/guard). */
  dataLoss: Set<number>;
  /** Where the code editor opens this tree's text uploads (one's own tree only), or null. */
  uploadsEditor: string | null;
}

export interface DashboardView extends ListView {
  username: string;
  /** The username of the tree shown: the caller's, or a team's. */
  owner: string;
  /** The trees the caller may manage: its own first, then its teams'. */
  accounts: string[];
  msg?: { text: string; type: string };
  /** A name to fill into the create form (`?new=index.html` from the host's "create index.html"). */
  newName?: string;
  /** Deletions in this tree's trash. */
  trashed: number;
  /** The viewer administers this Kiln (a link to /_/admin). */
  isAdmin?: boolean;
  /** The latest changes of the tree. */
  activity: ActivityItem[];
  /** Unread contact messages (own tree only). */
  unreadMessages?: number;
}

function formatTime(iso: string): Html {
  const shown = `${iso.replace('T', ' ').slice(0, 16)} UTC`;
  return html`<time datetime="${iso}">${shown}</time>`;
}

/** `/folder/sub/name.html`, each segment encoded; the root index is `/`. */
function nodeHref(node: Pick<NodeRow, 'path' | 'name'>): string {
  if (node.path === '' && node.name.toLowerCase() === 'index.html') return '/';
  const segments = [...(node.path ? node.path.split('/') : []), node.name];
  return `/${segments.map(encodeURIComponent).join('/')}`;
}

/** A page of the owner's host reached through the main app's session hand-off (so the owner arrives
 *  signed in there: the code editor and the versions need it). */
function onHost(hostUrl: string, path: string): string {
  return `/_/session/start?host=${encodeURIComponent(new URL(hostUrl).hostname)}&return=${encodeURIComponent(path)}`;
}

/** Where visitors sign up on an app: `<host>/_/app/signup?app=<path>` (see src/http/routes/apps/). */
export function appSignupUrl(hostUrl: string, node: Pick<NodeRow, 'path' | 'name'>): string {
  return `${hostUrl}/_/app/signup?app=${encodeURIComponent(childPathOf(node))}`;
}

interface Tree {
  byParent: Map<number, NodeRow[]>;
  folders: NodeRow[];
  collections: Map<number, string>;
  dataLoss: Set<number>;
  uploadsEditor: string | null;
}

function treeOf(
  nodes: NodeRow[],
  collections: Map<number, string>,
  dataLoss: Set<number>,
  uploadsEditor: string | null,
): Tree {
  const order: Record<NodeRow['type'], number> = { folder: 0, site: 1, upload: 2 };
  const byParent = new Map<number, NodeRow[]>();
  for (const n of nodes) {
    const list = byParent.get(n.parent_id);
    if (list) list.push(n);
    else byParent.set(n.parent_id, [n]);
  }
  for (const list of byParent.values())
    list.sort((a, b) => order[a.type] - order[b.type] || a.name_key.localeCompare(b.name_key));
  const folders = nodes.filter((n) => n.type === 'folder').sort((a, b) => childPathOf(a).localeCompare(childPathOf(b)));
  return { byParent, folders, collections, dataLoss, uploadsEditor };
}

function countBelow(tree: Tree, id: number): number {
  let n = 0;
  for (const c of tree.byParent.get(id) ?? []) n += 1 + (c.type === 'folder' ? countBelow(tree, c.id) : 0);
  return n;
}

function folderOptions(tree: Tree, selected: number, exclude?: NodeRow): Html {
  const excluded = exclude?.type === 'folder' ? childPathOf(exclude) : null;
  const opts = tree.folders
    .filter((f) => excluded === null || (childPathOf(f) !== excluded && !childPathOf(f).startsWith(`${excluded}/`)))
    .map((f) => html`<option value="${f.id}"${f.id === selected ? raw(' selected') : ''}>${childPathOf(f)}/</option>`);
  return html`<option value="0"${selected === 0 ? raw(' selected') : ''}>(top level)</option>${opts}`;
}

function actions(tree: Tree, n: NodeRow, hostUrl: string): Html {
  const base = `/_/dashboard/nodes/${n.id}`;
  const below = n.type === 'folder' ? countBelow(tree, n.id) : 0;
  const what = n.type === 'folder' ? 'folder' : n.type === 'site' ? 'document' : 'file';
  const path = childPathOf(n);
  const del =
    below > 0
      ? html`<a class="button secondary danger" href="${base}/delete" data-delete="${base}/delete"
  data-confirm="${`Delete the folder "${n.name}" and the ${below} item${below === 1 ? '' : 's'} inside it? They stay in the trash for 30 days.`}">Delete…</a>`
      : html`<form method="post" action="${base}/delete" data-confirm="${`Delete the ${what} "${n.name}"? It stays in the trash for 30 days.`}">
  <button class="secondary danger" type="submit">Delete</button></form>`;
  const app =
    n.type === 'site' && n.source_node_id === null
      ? html`<form method="post" action="${base}/app"><input type="hidden" name="enableSignups" value="${n.enable_signups ? '0' : '1'}">
  <button class="secondary" type="submit" title="${n.enable_signups ? 'Visitors can sign up and get their own copy. Click to stop new signups (existing copies stay).' : 'Let visitors sign up and get their own copy of this document.'}">${n.enable_signups ? 'Stop signups' : 'Make it an app'}</button></form>`
      : '';
  const share =
    n.type === 'site'
      ? html`<a class="button secondary" href="${base}/sharing" title="${n.share_enabled ? 'Anyone with the share link may view and save it. Manage the link, and whether other sites may frame it.' : 'Share a link that lets others view and save it; choose whether other sites may frame it.'}">${n.share_enabled ? 'Shared' : 'Share'}</a>`
      : '';
  // Links to an app or a shared document are out there: say what a new address does to them.
  const why = n.enable_signups
    ? 'is an app: its visitors'
    : n.share_enabled
      ? 'has a share link: people who have it'
      : null;
  const warn = (verb: string) =>
    why
      ? raw(
          ` data-confirm="${escapeHtml(`"${n.name}" ${why} use its current address. The old address will lead to the new one for 30 days, then stop working. ${verb} it anyway?`)}"`,
        )
      : '';
  const primary =
    n.type === 'site'
      ? html`<a class="button secondary" href="${onHost(hostUrl, nodeHref(n))}">Open</a>
<a class="button secondary" href="${onHost(hostUrl, `/_/edit?path=${encodeURIComponent(path)}`)}">Edit code</a>
<a class="button secondary" href="${onHost(hostUrl, `/_/versions?path=${encodeURIComponent(path)}`)}">Versions</a>`
      : n.type === 'upload'
        ? html`<a class="button secondary" href="${hostUrl + nodeHref(n)}">Open</a>${
            tree.uploadsEditor && EDITABLE_EXTENSIONS.has(extensionOf(n.name))
              ? html`<a class="button secondary" href="${tree.uploadsEditor}${nodeHref(n)}">Edit</a>`
              : ''
          }`
        : '';
  const download =
    n.type === 'folder' ? '' : html`<a class="button secondary" href="${base}/download" download>Download</a>`;
  const collection =
    n.type === 'folder'
      ? html`<form method="post" action="${base}/collection"><input type="hidden" name="collection" value="${tree.collections.has(n.id) ? '0' : '1'}">
  <button class="secondary" type="submit" title="${tree.collections.has(n.id) ? 'Stop taking submissions here (the form, the dashboard and the records stay as files).' : 'Gather submissions here: a public form, a private dashboard and a records/ folder.'}">${tree.collections.has(n.id) ? 'Stop collecting' : 'Make it a collection'}</button></form>`
      : '';
  const duplicate =
    n.type === 'site'
      ? html`<form method="post" action="${base}/duplicate"><button class="secondary" type="submit">Duplicate</button></form>`
      : '';
  // New bytes under the same name (pages that link to it get them); the old file goes to the trash.
  const replace =
    n.type === 'upload'
      ? html`<form method="post" action="/_/upload" enctype="multipart/form-data" class="replace-file">
  <input type="hidden" name="replaces" value="${n.id}"><input type="hidden" name="parentId" value="${n.parent_id}"><input type="hidden" name="ownerId" value="${n.owner_id}">
  <label>Replace with<input type="file" name="file" required></label>
  <button class="secondary" type="submit">Replace</button></form>`
      : '';
  return html`${primary}<details class="more"><summary class="button secondary">More<span class="visually-hidden"> actions for ${n.name}</span></summary><div class="menu-items">
${download}${duplicate}${replace}${share}${app}${collection}
<form method="post" action="${base}/rename"${warn('Rename')}><label>Rename to<input name="name" value="${n.name}" required maxlength="${limits.nameLength}"></label>
  <button class="secondary" type="submit">Rename</button></form>
<form method="post" action="${base}/move"${warn('Move')}><label>Move to<select name="parentId">${folderOptions(tree, n.parent_id, n)}</select></label>
  <button class="secondary" type="submit">Move</button></form>
${del}</div></details>`;
}

function row(tree: Tree, n: NodeRow, depth: number, hostUrl: string): Html {
  const indent = raw(`style="padding-left:${0.6 + depth * 1.4}rem"`);
  const path = childPathOf(n);
  const label =
    n.type === 'folder'
      ? html`<button class="toggle" type="button" aria-expanded="true" aria-label="${`Collapse the folder ${n.name}`}">▾</button><strong class="folder nm" title="${path}/">${n.name}/</strong>`
      : html`<a class="nm" href="${hostUrl + nodeHref(n)}" target="_blank" rel="noopener" title="${path}">${n.name}</a>`;
  const size =
    n.type === 'folder'
      ? (() => {
          const c = countBelow(tree, n.id);
          return `${c} item${c === 1 ? '' : 's'}`;
        })()
      : formatSize(n.size);
  const visibility =
    n.type === 'folder'
      ? ''
      : html`<form method="post" action="/_/dashboard/nodes/${n.id}/visibility">
  <input type="hidden" name="visibility" value="${n.visibility === 'public' ? 'private' : 'public'}">
  <button class="secondary vis" type="submit" title="${n.visibility === 'public' ? 'Anyone can open it. Click to make it private.' : 'Only you can open it. Click to make it public.'}">${n.visibility === 'public' ? 'Public' : 'Private'}</button></form>`;
  const kind =
    n.type === 'upload'
      ? html` <small class="kind">file</small>`
      : tree.collections.has(n.id)
        ? html` <small class="kind">collection · <a href="/_/dashboard/nodes/${n.id}/collection">info</a> · <a href="${onHost(hostUrl, `${nodeHref(n)}/dashboard.html`)}">submissions</a></small>`
        : n.enable_signups
          ? html` <small class="kind">app · <a href="${appSignupUrl(hostUrl, n)}" target="_blank" rel="noopener">signup page</a> · <a href="/_/dashboard/nodes/${n.id}/signups">sign-ups</a></small>`
          : '';
  // Opening the page as its owner shows hyperclayjs's data-loss panel: restore, revert or dismiss.
  const loss = tree.dataLoss.has(n.id)
    ? html` <small class="kind loss"><a href="${hostUrl + nodeHref(n)}" target="_blank" rel="noopener" title="A save replaced data this page had. Open it to restore the data, revert the page or dismiss.">saved data overwritten · review</a></small>`
    : '';
  return html`<tr data-node-id="${n.id}" data-type="${n.type}" data-path="${path}"><td class="name" data-label="Name" ${indent}>${label}${kind}${loss}</td><td class="num" data-label="Size">${size}</td>
<td class="muted nowrap" data-label="Modified">${formatTime(n.modified_at)}</td><td data-label="Visibility">${visibility}</td><td><div class="actions">${actions(tree, n, hostUrl)}</div></td></tr>`;
}

function rows(tree: Tree, parentId: number, depth: number, hostUrl: string): Html[] {
  const out: Html[] = [];
  for (const n of tree.byParent.get(parentId) ?? []) {
    out.push(row(tree, n, depth, hostUrl));
    if (n.type === 'folder') out.push(...rows(tree, n.id, depth + 1, hostUrl));
  }
  return out;
}

/** "3 of 10 documents · 1.2 MB stored": kept in the list so every AJAX answer refreshes it. */
function usage(v: ListView): Html {
  const sites = v.nodes.filter((n) => n.type === 'site').length;
  const stored = v.nodes.reduce((sum, n) => sum + (n.type === 'folder' ? 0 : n.size), 0);
  const full = v.siteLimit !== null && sites >= v.siteLimit;
  return html`<p id="usage" class="${full ? 'full' : ''}"><strong>${sites} ${v.siteLimit === null ? '' : `of ${v.siteLimit} `}document${sites === 1 && v.siteLimit === null ? '' : 's'}</strong>${v.siteLimit === null ? ' (unlimited)' : ''} · ${formatSize(stored)} stored · uploads up to ${formatSize(v.uploadLimit)} each${full ? html` · <a href="/_/billing">Upgrade for more</a>` : ''}</p>`;
}

/** The node list: what AJAX answers carry as `html`, and what the page shows in `#tree`. */
export function nodeListHtml(v: ListView): string {
  const tree = treeOf(v.nodes, v.collections, v.dataLoss, v.uploadsEditor);
  const body =
    v.nodes.length === 0
      ? html`<p class="muted empty">Nothing here yet. Create your first document above, or drop files here.</p>`
      : html`<table class="stack"><thead><tr><th>Name</th><th class="num">Size</th><th>Modified</th><th>Visibility</th><th>Actions</th></tr></thead>
<tbody>${rows(tree, 0, 0, v.hostUrl)}</tbody></table>`;
  // The folder choices of the create forms, refreshed with the list.
  return html`${usage(v)}${body}<select id="folder-choices" hidden aria-hidden="true" tabindex="-1">${folderOptions(tree, 0)}</select>`
    .value;
}

const DID: Record<string, string> = {
  saved: 'saved',
  created: 'created',
  renamed: 'renamed',
  moved: 'moved',
  deleted: 'deleted',
  impersonated: 'signed in as this account, for support',
  'data-loss': 'overwrote saved data of',
  'data-loss-restored': 'restored the overwritten data of',
  'data-loss-reverted': 'reverted, after its data was overwritten,',
  'data-loss-dismissed': 'dismissed the data-loss warning of',
  'ai-edit': 'asked for an AI edit of',
  'stale-save': 'saved, from a tab that had not loaded a change made elsewhere,',
};

/** An AI edit's facts, as the feed shows them (sizes, never content). */
function aiEditNote(a: ActivityItem): string {
  const e = a.aiEdit;
  if (!e) return '';
  const kb = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`);
  return ` ${e.engine} · ${e.outcome} · ${kb(e.in)} sent, ${kb(e.out)} back · ${(e.ms / 1000).toFixed(1)} s`;
}

/** A stale save's note: whose change it undid, and the version that holds it. */
const undidNote = (a: ActivityItem) =>
  a.undid ? ` · undid the change by ${inSentence(a.undid.by)}, kept in version ${a.undid.version}` : '';

/** The latest changes: who did what to which path, when, from where. */
function activityHtml(items: ActivityItem[]): Html {
  if (items.length === 0) return html``;
  return html`<section class="activity" aria-labelledby="activity-h"><h2 id="activity-h">Recent activity</h2><ul>${items.map(
    (
      a,
    ) => html`<li>${formatTime(a.at)} · <strong>${a.by ?? (a.client === 'share link' ? 'A share-link guest' : 'Kiln')}</strong> ${DID[a.kind] ?? a.kind}
<span class="nm" title="${a.path}">${a.oldPath ? `${a.oldPath} → ${a.path}` : a.path}</span> <small>(${a.client}${aiEditNote(a)}${undidNote(a)})</small></li>`,
  )}</ul></section>`;
}

export function dashboardPage(v: DashboardView): string {
  const tree = treeOf(v.nodes, v.collections, v.dataLoss, v.uploadsEditor);
  const team = v.owner !== v.username;
  // Forms of a team's tree say whose tree they change.
  const ownerField = team ? html`<input type="hidden" name="ownerId" value="${v.ownerId}">` : '';
  const starters = Object.entries(STARTERS).map(([value, label]) => html`<option value="${value}">${label}</option>`);
  return page({
    title: 'Dashboard',
    username: v.username,
    msg: v.msg,
    body: html`<h1>${team ? html`Documents of the team ${v.owner}` : 'Your documents'}</h1>
${
  v.accounts.length > 1
    ? html`<nav class="accounts" aria-label="Whose documents">${v.accounts.map((a, i) =>
        a === v.owner
          ? html`<a class="button" aria-current="page" href="${i === 0 ? '/_/dashboard' : `/_/dashboard?team=${encodeURIComponent(a)}`}">${i === 0 ? `${a} (you)` : a}</a>`
          : html`<a class="button secondary" href="${i === 0 ? '/_/dashboard' : `/_/dashboard?team=${encodeURIComponent(a)}`}">${i === 0 ? `${a} (you)` : a}</a>`,
      )}</nav>`
    : ''
}
<p class="muted">Served at <a href="${v.hostUrl}/" target="_blank" rel="noopener">${v.hostUrl}/</a> ·
<a href="/_/account">Your account</a>${v.isAdmin ? html` · <a href="/_/admin">Administration</a>` : ''}</p>
<div id="flash" class="msg" role="status" aria-live="polite"></div>
<div class="create">
<details class="fold" open><summary>Create a document</summary>
<form method="post" action="/_/dashboard/nodes" class="card">
  <input type="hidden" name="type" value="site">${ownerField}
  <label for="new-site">New document</label>
  <input id="new-site" name="name" required placeholder="my-app.html" maxlength="${limits.pathLength}" value="${v.newName ?? ''}"${v.newName ? raw(' autofocus') : ''} aria-describedby="new-site-help new-site-check" autocomplete="off">
  <small id="new-site-help">Ends in .html or .htmlclay. A path like <code>notes/todo.html</code> creates the folders too.</small>
  <small id="new-site-check" class="name-check" role="status"></small>
  <label for="new-site-starter">Start from</label>
  <select id="new-site-starter" name="starter">${starters}</select>
  <label for="new-site-parent">In folder</label>
  <select id="new-site-parent" name="parentId" data-folder-choices>${folderOptions(tree, 0)}</select>
  <button type="submit">Create document</button>
</form></details>
<details class="fold" open><summary>Create a folder</summary>
<form method="post" action="/_/dashboard/nodes" class="card">
  <input type="hidden" name="type" value="folder">${ownerField}
  <label for="new-folder">New folder</label>
  <input id="new-folder" name="name" required placeholder="projects" maxlength="${limits.nameLength}">
  <small>Folders nest at most ${limits.folderDepth} levels.</small>
  <label for="new-folder-parent">In folder</label>
  <select id="new-folder-parent" name="parentId" data-folder-choices>${folderOptions(tree, 0)}</select>
  <button type="submit">Create folder</button>
</form></details>
<details class="fold" open><summary>Upload</summary>
<form method="post" action="/_/upload" enctype="multipart/form-data" class="card" id="upload-form">${ownerField}
  <label for="upload-files">Upload files</label>
  <input id="upload-files" name="file" type="file" multiple required>
  <small>Up to ${formatSize(v.uploadLimit)} per file on your plan. Or drop files onto the list, or onto a folder.</small>
  <label for="upload-parent">Into folder</label>
  <select id="upload-parent" name="parentId" data-folder-choices>${folderOptions(tree, 0)}</select>
  <button type="submit">Upload</button>
  <ul id="uploads" aria-live="polite"></ul>
</form></details>
</div>
<script>/* On a phone the forms fold away (one tap each) so the list starts on the first screen; one with a
name to finish (autofocus) stays open. Run here, before the first paint. */
if(matchMedia('(max-width:640px)').matches)document.querySelectorAll('.create details.fold').forEach(function(d){if(!d.querySelector('[autofocus]'))d.open=false;});</script>
<dialog id="upload-ask" aria-labelledby="upload-ask-text"><form method="dialog">
  <p id="upload-ask-text"></p>
  <div class="actions"><button value="replace">Replace</button><button value="keep" class="secondary">Keep both</button><button value="cancel" class="secondary">Cancel</button></div>
</form></dialog>
<div class="list-tools"><label for="filter">Filter</label><input id="filter" type="search" placeholder="Type part of a name" autocomplete="off">
${team ? '' : html`<a class="trash-link" href="/_/dashboard/messages">Messages${v.unreadMessages ? ` (${v.unreadMessages} new)` : ''}</a>`}
<a class="trash-link" href="/_/dashboard/trash${team ? `?team=${encodeURIComponent(v.owner)}` : ''}">Trash${v.trashed ? ` (${v.trashed})` : ''}</a></div>
<div id="tree" data-upload-limit="${v.uploadLimit}" data-team="${team ? v.owner : ''}">${raw(nodeListHtml(v))}</div>
<p class="muted" id="missing-paths">${
      v.nodes.some((n) => n.parent_id === 0 && n.type === 'site' && n.name === '404.html')
        ? html`Addresses with nothing at them answer with your <code>404.html</code> (status 404).`
        : html`Addresses with nothing at them show your <code>index.html</code>, so a page's script can route; create a <code>404.html</code> to answer them with it, and status 404, instead.`
    }</p>
${activityHtml(v.activity)}`,
    scripts: html`<style>${raw(STYLE)}</style><script>${raw(SCRIPT)}</script>`,
  });
}

/** The page asked for when deleting a non-empty folder without script. */
export function confirmDeletePage(o: { username: string; node: NodeRow; count: number }): string {
  return page({
    title: 'Delete folder',
    username: o.username,
    body: html`<h1>Delete the folder "${o.node.name}"?</h1>
<p>It holds ${o.count} item${o.count === 1 ? '' : 's'}. Deleting the folder deletes everything inside it, with all versions; all of it stays in the trash for 30 days, restorable in one click.</p>
<form method="post" action="/_/dashboard/nodes/${o.node.id}/delete">
  <input type="hidden" name="cascade" value="1">
  <button type="submit">Delete the folder and its contents</button>
  <a class="button secondary" href="/_/dashboard">Cancel</a>
</form>`,
  });
}

const STYLE = `
.name-check{display:block;min-height:1.2em}.name-check.ok{color:var(--ok)}.name-check.bad{color:var(--bad);font-weight:600}
.create{display:grid;grid-template-columns:repeat(auto-fit,minmax(250px,1fr));gap:var(--s4);margin-bottom:var(--s5)}
.create form.card{max-width:none;margin:0}.create small{display:block;margin-top:var(--s1)}
.create details.fold>summary{display:none}
.create details.fold{display:flex;flex-direction:column}.create details.fold::details-content{flex:1;display:flex;flex-direction:column}
.create details.fold>form.card{flex:1}
@media (max-width:640px){.create{gap:var(--s2);margin-bottom:var(--s4)}
.create details.fold>summary{display:block;cursor:pointer;padding:var(--s2) var(--s3);border:1px solid var(--line);border-radius:var(--r);background:var(--card);font-weight:600}
.create details.fold[open]>summary{border-radius:var(--r) var(--r) 0 0;border-bottom:0}.create details.fold[open]>form.card{border-top-left-radius:0;border-top-right-radius:0}}
nav.accounts{display:flex;flex-wrap:wrap;gap:var(--s2);margin:0 0 var(--s3)}nav.accounts .button{margin:0}
section.activity ul{list-style:none;padding:0;margin:0}section.activity li{padding:var(--s1) 0;border-bottom:1px solid var(--line)}
section.activity .nm{max-width:22rem;vertical-align:bottom}
.list-tools{display:flex;gap:var(--s3);align-items:center;margin:var(--s4) 0}.list-tools .trash-link{white-space:nowrap}.list-tools input{flex:1}.list-tools label{margin:0;white-space:nowrap}.list-tools input{max-width:22rem}
#usage{margin:var(--s2) 0 var(--s3)}#usage.full strong{color:var(--bad)}.kind.loss a{color:var(--bad);font-weight:600}
#tree{border-radius:var(--r);min-height:4rem}#tree.drop,tr.drop td{outline:3px dashed var(--accent);outline-offset:-3px;background:var(--accent-bg)}
td.name{max-width:24rem}.nm{display:inline-block;max-width:100%;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom}
td.num,.nowrap{white-space:nowrap}strong.folder{color:var(--fg)}
button.toggle{margin:0 .3rem 0 0;padding:0 .35rem;background:none;border:1px solid transparent;color:var(--fg);font-weight:400}
tr.collapsed button.toggle{transform:rotate(-90deg)}
div.actions{display:flex;gap:var(--s2);align-items:flex-start;flex-wrap:wrap}
div.actions .button,div.actions button{margin:0;padding:.25rem .6rem;font-weight:500}
details.more{position:relative}details.more summary{list-style:none}details.more summary::-webkit-details-marker{display:none}
details.more .menu-items{position:absolute;right:0;z-index:5;min-width:15rem;display:flex;flex-direction:column;gap:var(--s2);
background:var(--card);border:1px solid var(--line);border-radius:var(--r);padding:var(--s3);box-shadow:0 6px 24px #0002}
details.more form{margin:0}details.more label{margin:0;font-weight:500}details.more .menu-items>.button,details.more .menu-items>form>button{width:100%}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
tr.row-msg td{padding:0 var(--s3) var(--s2)}tr.row-msg .msg{margin:0}
#uploads{list-style:none;padding:0;margin:var(--s3) 0 0}#uploads li{margin:var(--s2) 0}#uploads progress{width:100%}
#uploads .error{color:var(--bad)}#uploads .done{color:var(--ok)}
#upload-ask{max-width:28rem;border:1px solid var(--line,#d0d7de);border-radius:8px;padding:var(--s4)}#upload-ask::backdrop{background:rgb(0 0 0/.35)}
#upload-ask .actions{display:flex;flex-wrap:wrap;gap:var(--s2)}
@media (max-width:640px){td.name{max-width:none}details.more .menu-items{position:static;box-shadow:none}
div.actions .button,div.actions button,div.actions details{flex:1 1 auto;text-align:center}}
`;

// Progressive enhancement: forms post with fetch and the answer's `html` replaces the list; the message
// appears beside the row acted on; uploads go one request per file with a progress bar; folders
// collapse; the filter hides rows.
const SCRIPT = `
(function(){
  var flash=document.getElementById('flash'),tree=document.getElementById('tree');
  var limit=Number(tree.dataset.uploadLimit)||0;
  function show(msg,type){flash.className='msg '+(type==='error'?'error':'success');flash.textContent=msg||'';}
  function esc(t){var d=document.createElement('div');d.textContent=t;return d.innerHTML;}
  function size(n){return n<1024?n+' B':n<1048576?(n/1024).toFixed(1)+' KB':(n/1048576).toFixed(1)+' MB';}
  function rowMsg(id,msg,type){
    var tr=id&&tree.querySelector('tr[data-node-id="'+id+'"]');
    if(!tr){show(msg,type);return;}
    show('','success');
    var m=document.createElement('tr');m.className='row-msg';
    m.innerHTML='<td colspan="5"><div class="msg '+(type==='error'?'error':'success')+'" role="status">'+esc(msg)+'</div></td>';
    tr.after(m);
  }
  function refreshChoices(){
    var src=document.getElementById('folder-choices');if(!src)return;
    document.querySelectorAll('select[data-folder-choices]').forEach(function(sel){var v=sel.value;sel.innerHTML=src.innerHTML;sel.value=v;if(sel.value!==v)sel.value='0';});
  }
  function swap(h){tree.innerHTML=h;refreshChoices();applyCollapsed();applyFilter();}
  async function send(url,body,rowId){
    try{
      var res=await fetch(url,{method:'POST',headers:{'Accept':'application/json'},body:body,credentials:'same-origin'});
      var data=await res.json().catch(function(){return {msg:'HTTP '+res.status,msgType:'error'};});
      if(res.status===401){location.href='/_/login?return=/_/dashboard';return;}
      if(data.html)swap(data.html);
      rowMsg(res.ok&&data.node?data.node.id:rowId,data.msg,data.msgType);
      return res.ok;
    }catch(e){show('Could not reach the server. Nothing was changed.','error');}
  }
  async function refresh(){
    var team=tree.dataset.team;
    var res=await fetch('/_/dashboard/nodes'+(team?'?team='+encodeURIComponent(team):''),{headers:{'Accept':'application/json'},credentials:'same-origin'});
    if(res.ok){var d=await res.json();if(d.html)swap(d.html);}
  }
  document.addEventListener('submit',function(e){
    var f=e.target;if(!(f instanceof HTMLFormElement))return;
    if(f.id==='upload-form'){e.preventDefault();upload(Array.from(f.querySelector('input[type=file]').files),f.parentId.value);f.reset();return;}
    if(f.classList.contains('replace-file')){e.preventDefault();
      upload(Array.from(f.querySelector('input[type=file]').files),f.parentId.value,f.replaces.value);f.reset();return;}
    if(!f.action.includes('/_/dashboard/nodes'))return;
    if(f.dataset.confirm&&!confirm(f.dataset.confirm)){e.preventDefault();return;}
    e.preventDefault();
    var tr=f.closest('tr[data-node-id]');
    send(f.action,new URLSearchParams(new FormData(f)),tr&&tr.dataset.nodeId).then(function(ok){if(ok&&f.closest('.create'))f.reset();});
  });
  // One action menu open at a time; a click elsewhere or Escape closes it.
  function closeMenus(except){document.querySelectorAll('details.more[open]').forEach(function(d){if(d!==except)d.open=false;});}
  document.addEventListener('keydown',function(e){if(e.key==='Escape')closeMenus(null);});
  document.addEventListener('click',function(e){
    closeMenus(e.target.closest&&e.target.closest('details.more'));
    var a=e.target.closest&&e.target.closest('a[data-delete]');
    if(a){e.preventDefault();if(confirm(a.dataset.confirm))send(a.dataset.delete,new URLSearchParams({cascade:'1'}),a.closest('tr').dataset.nodeId);return;}
    var t=e.target.closest&&e.target.closest('button.toggle');
    if(t){var tr=t.closest('tr');var c=collapsed();var id=tr.dataset.nodeId;
      if(c.indexOf(id)>=0)c.splice(c.indexOf(id),1);else c.push(id);
      localStorage.setItem('kiln-collapsed',JSON.stringify(c));applyCollapsed();}
  });
  function collapsed(){try{return JSON.parse(localStorage.getItem('kiln-collapsed')||'[]');}catch(e){return [];}}
  function applyCollapsed(){
    var c=collapsed(),hidden=[];
    tree.querySelectorAll('tr[data-node-id]').forEach(function(tr){
      var p=tr.dataset.path,inside=hidden.some(function(h){return p.indexOf(h+'/')===0;});
      tr.classList.toggle('folded',inside);
      if(tr.dataset.type==='folder'){var shut=c.indexOf(tr.dataset.nodeId)>=0;tr.classList.toggle('collapsed',shut);
        var b=tr.querySelector('button.toggle');b.setAttribute('aria-expanded',String(!shut));
        b.setAttribute('aria-label',(shut?'Expand':'Collapse')+' the folder '+p);if(shut&&!inside)hidden.push(p);}
    });
    applyFilter();
  }
  var filter=document.getElementById('filter');
  function applyFilter(){
    var q=filter.value.trim().toLowerCase();
    tree.querySelectorAll('tr[data-node-id]').forEach(function(tr){
      var show=q?tr.dataset.path.toLowerCase().indexOf(q)>=0:!tr.classList.contains('folded');
      tr.hidden=!show;
    });
  }
  filter.addEventListener('input',applyFilter);
  // The New-document form checks its name as it is typed: the server answers what creating it would.
  var newSite=document.getElementById('new-site'),check=document.getElementById('new-site-check'),checkSeq=0,checkTimer;
  function checkName(){
    clearTimeout(checkTimer);
    var f=newSite.form,name=newSite.value,seq=++checkSeq;
    if(!name.trim()){check.textContent='';check.className='name-check';newSite.removeAttribute('aria-invalid');return;}
    checkTimer=setTimeout(async function(){
      var q=new URLSearchParams({type:'site',name:name,parentId:f.parentId.value});if(f.ownerId)q.set('ownerId',f.ownerId.value);
      try{
        var res=await fetch('/_/dashboard/names?'+q,{headers:{'Accept':'application/json'},credentials:'same-origin'});
        var d=await res.json();if(seq!==checkSeq)return;
        check.textContent=d.msg;check.className='name-check '+(res.ok?'ok':'bad');
        if(res.ok)newSite.removeAttribute('aria-invalid');else newSite.setAttribute('aria-invalid','true');
      }catch(e){}
    },250);
  }
  newSite.addEventListener('input',checkName);newSite.form.parentId.addEventListener('change',checkName);
  newSite.form.addEventListener('reset',function(){setTimeout(checkName);});
  // Uploads: one request per file, each with its own progress bar; too-large files are refused here,
  // with the plan's limit in words, before a byte is sent (the server enforces it too).
  var list=document.getElementById('uploads'),ask=document.getElementById('upload-ask');
  function ext(n){var i=n.lastIndexOf('.');return i>0?n.slice(i+1).toLowerCase():'';}
  // The upload already in the folder under this name, if any (the server would number the new one).
  function sameName(parentId,name){
    var folder=parentId&&parentId!=='0'?tree.querySelector('tr[data-node-id="'+parentId+'"]'):null;
    var want=(folder?folder.dataset.path+'/':'')+name;
    return Array.prototype.find.call(tree.querySelectorAll('tr[data-type="upload"]'),function(tr){return tr.dataset.path===want;});
  }
  // Replace / Keep both / Cancel; Replace is the default for a file of the same type.
  function choose(name,sameType){
    return new Promise(function(done){
      document.getElementById('upload-ask-text').textContent='“'+name+'” is already in this folder. Replace it (the old file goes to the trash), or keep both?';
      var b=ask.querySelectorAll('button');b[0].autofocus=sameType;b[1].autofocus=!sameType;
      ask.returnValue='';ask.addEventListener('close',function(){done(ask.returnValue||'cancel');},{once:true});ask.showModal();
    });
  }
  async function upload(files,parentId,replaces){
    var pending=files.length;
    function finished(){if(--pending===0)refresh();}
    for(var file of files){
      var li=document.createElement('li');
      li.innerHTML='<span class="name"></span> <progress max="100" value="0"></progress> <span class="state" role="status"></span>';
      li.querySelector('.name').textContent=file.name+' ('+size(file.size)+')';
      list.append(li);
      var bar=li.querySelector('progress'),state=li.querySelector('.state');
      if(limit&&file.size>limit){bar.remove();state.className='state error';
        state.textContent='Too large: your plan takes files up to '+size(limit)+'.';finished();continue;}
      var owner=document.querySelector('#upload-form input[name=ownerId]');
      // An HTML file becomes a document (saved through the save pipeline, with its versions), not an upload.
      if(/.(html?|htmlclay)$/i.test(file.name)){createDocument(file,parentId,owner,bar,state).then(finished);continue;}
      var into=replaces;
      if(!into){var taken=sameName(parentId,file.name);
        if(taken){var c=await choose(file.name,ext(taken.dataset.path)===ext(file.name));
          if(c==='cancel'){bar.remove();state.className='state';state.textContent='Not uploaded.';finished();continue;}
          if(c==='replace')into=taken.dataset.nodeId;}}
      send1(file,parentId,owner,into,bar,state).then(finished);
    }
  }
  function createDocument(file,parentId,owner,bar,state){
    return file.text().then(function(text){
      var d={type:'site',name:file.name.replace(/.htm$/i,'.html'),parentId:parentId||'0',html:text};if(owner)d.ownerId=owner.value;
      return fetch('/_/dashboard/nodes',{method:'POST',headers:{'Accept':'application/json','Content-Type':'application/json'},body:JSON.stringify(d),credentials:'same-origin'});
    }).then(function(res){return res.json().then(function(j){return [res.ok,j];});}).then(function(r){
      bar.value=r[0]?100:0;state.className='state '+(r[0]?'done':'error');state.textContent=r[0]?'Created as a document.':(r[1].msg||'Not created.');
    }).catch(function(){state.className='state error';state.textContent='Could not reach the server.';});
  }
  function send1(file,parentId,owner,replaces,bar,state){
    return new Promise(function(done){
      var body=new FormData();body.append('parentId',parentId||'0');
      if(owner)body.append('ownerId',owner.value);
      if(replaces)body.append('replaces',replaces);
      body.append('file',file,file.name);
      var x=new XMLHttpRequest();
      x.open('POST','/_/upload');x.setRequestHeader('Accept','application/json');
      x.upload.onprogress=function(e){if(e.lengthComputable)bar.value=Math.round(e.loaded/e.total*100);};
      x.onload=function(){var d={};try{d=JSON.parse(x.responseText);}catch(e){}
        var ok=x.status===200;bar.value=ok?100:bar.value;state.className='state '+(ok?'done':'error');
        state.textContent=d.msg||(ok?'Uploaded.':'Upload failed (HTTP '+x.status+').');done();};
      x.onerror=function(){state.className='state error';state.textContent='Could not reach the server.';done();};
      x.send(body);
    });
  }
  function folderOf(e){var tr=e.target.closest&&e.target.closest('tr[data-type="folder"]');return tr?tr.dataset.nodeId:'0';}
  function hasFiles(e){return e.dataTransfer&&Array.prototype.indexOf.call(e.dataTransfer.types,'Files')>=0;}
  function clearDrop(){tree.classList.remove('drop');tree.querySelectorAll('tr.drop').forEach(function(t){t.classList.remove('drop');});}
  tree.addEventListener('dragover',function(e){if(!hasFiles(e))return;e.preventDefault();clearDrop();
    var tr=e.target.closest('tr[data-type="folder"]');if(tr)tr.classList.add('drop');else tree.classList.add('drop');});
  tree.addEventListener('dragleave',function(e){if(!tree.contains(e.relatedTarget))clearDrop();});
  tree.addEventListener('drop',function(e){if(!hasFiles(e))return;e.preventDefault();clearDrop();upload(Array.from(e.dataTransfer.files),folderOf(e));});
  applyCollapsed();
})();
`;

/** What the owner sees at an address of their host that names nothing (visitors get the root page, so page
 *  script can route, or the account's 404.html with status 404): what visitors get, and "Create this document". */
export function nothingHere(o: { base: string; username: string; pathname: string; own404: boolean }): string {
  const path = o.pathname.replace(/^\/+|\/+$/g, '');
  const name = isDocumentName(path.split('/').pop() ?? '') ? path : `${path}.html`;
  const create = `${o.base}/_/dashboard?new=${encodeURIComponent(name)}`;
  return page({
    title: 'Nothing here yet',
    username: o.username,
    base: o.base,
    body: html`<h1>Nothing is at <code>${o.pathname}</code></h1>
<p>${
      o.own404
        ? html`Visitors get your <code>404.html</code> here, with status 404.`
        : html`Visitors get your home page (<code>index.html</code>) here, so a page's script can read the address and route. Make a <code>404.html</code> to answer missing addresses with it, and status 404, instead.`
    }</p>
<p><a class="button" href="${create}">Create this document</a> <a class="button secondary" href="/">Open the home page</a> <a class="button secondary" href="${o.base}/_/dashboard">Go to your documents</a></p>`,
  });
}

/** What the owner sees on their host when it has no `index.html` (visitors get a plain 404). */
export function noHomePage(o: { base: string; username: string; pathname: string }): string {
  const create = `${o.base}/_/dashboard?new=index.html`;
  return page({
    title: 'No index.html yet',
    username: o.username,
    base: o.base,
    body: html`<h1>Nothing is published here yet</h1>
<p>Your host answers <code>/</code> with the document named <code>index.html</code>, and you have none${o.pathname === '/' ? '' : html` (and nothing is at <code>${o.pathname}</code>)`}. Visitors see a plain “not found” page until you make one.</p>
<p><a class="button" href="${create}">Create index.html</a> <a class="button secondary" href="${o.base}/_/dashboard">Go to your documents</a></p>`,
  });
}

/** The trash of a tree: each deletion, restorable or purged for good, until the sweep after 30 days. */
export function trashPage(o: {
  username: string;
  owner: string;
  ownerId: number;
  team: boolean;
  entries: TrashEntry[];
  msg?: { text: string; type: string };
}): string {
  const back = o.team ? `/_/dashboard?team=${encodeURIComponent(o.owner)}` : '/_/dashboard';
  const rows = o.entries.map((e) => {
    const n = e.node;
    const what =
      n.type === 'folder'
        ? `folder, with ${e.inside} item${e.inside === 1 ? '' : 's'}`
        : n.type === 'site'
          ? 'document'
          : 'file';
    return html`<tr data-node-id="${n.id}"><td data-label="Name"><span class="nm" title="${childPathOf(n)}">${n.name}${n.type === 'folder' ? '/' : ''}</span>
<small class="muted"> ${n.path ? `in ${n.path}/` : 'at the top level'}</small></td><td data-label="What">${what}</td>
<td data-label="Deleted">${formatTime(n.trashed_at ?? n.modified_at)}</td><td data-label="Purged">${formatTime(e.purgeAt)}</td>
<td><div class="actions"><form method="post" action="/_/dashboard/trash/${n.id}/restore"><button type="submit">Restore</button></form>
<form method="post" action="/_/dashboard/trash/${n.id}/purge" data-confirm="${`Delete "${n.name}" for good, with its versions? This cannot be undone.`}"><button class="secondary danger" type="submit">Delete for good</button></form></div></td></tr>`;
  });
  return page({
    title: 'Trash',
    username: o.username,
    msg: o.msg,
    body: html`<h1>Trash${o.team ? ` of ${o.owner}` : ''}</h1>
<p class="muted">What you delete stays here for 30 days with its versions, then goes for good. Names in the trash are free to use again.
<a href="${back}">Back to the documents</a></p>
${
  o.entries.length === 0
    ? html`<p class="muted">The trash is empty.</p>`
    : html`<table class="stack"><thead><tr><th>Name</th><th>What</th><th>Deleted</th><th>Purged after</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody></table>
<form method="post" action="/_/dashboard/trash/empty" data-confirm="Delete everything in the trash for good? This cannot be undone.">
${o.team ? html`<input type="hidden" name="ownerId" value="${o.ownerId}">` : ''}<button class="secondary danger" type="submit">Empty the trash</button></form>`
}`,
    scripts: html`<style>${raw(STYLE)}</style><script>document.addEventListener('submit',function(e){var f=e.target;if(f.dataset&&f.dataset.confirm&&!confirm(f.dataset.confirm))e.preventDefault();});</script>`,
  });
}
