// The developer dashboard: the account's tree of documents, folders and uploads. Server-rendered and
// usable with plain form posts; a little inline script turns the forms into AJAX calls that swap in
// the pre-rendered node list the server answers with.
import { html, raw, type Html } from './html.ts';
import { page } from './pages.ts';
import type { NodeRow } from '../nodes/tree.ts';
import { childPathOf } from '../nodes/tree.ts';
import { limits } from '../limits.ts';

export interface DashboardView {
  username: string;
  /** Every node of the account (listTree order). */
  nodes: NodeRow[];
  /** `http://alice.kiln.localhost:8080` */
  hostUrl: string;
  /** Sites the plan allows; null when unlimited. */
  siteLimit: number | null;
  msg?: { text: string; type: string };
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
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

/** Where visitors sign up on an app: `<host>/_/app/signup?app=<path>` (see src/http/routes/apps.ts). */
export function appSignupUrl(hostUrl: string, node: Pick<NodeRow, 'path' | 'name'>): string {
  return `${hostUrl}/_/app/signup?app=${encodeURIComponent(childPathOf(node))}`;
}

interface Tree {
  byParent: Map<number, NodeRow[]>;
  folders: NodeRow[];
}

function treeOf(nodes: NodeRow[]): Tree {
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
  return { byParent, folders };
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

function actions(tree: Tree, n: NodeRow): Html {
  const base = `/_/dashboard/nodes/${n.id}`;
  const below = n.type === 'folder' ? countBelow(tree, n.id) : 0;
  const what = n.type === 'folder' ? 'folder' : n.type === 'site' ? 'document' : 'file';
  const del =
    below > 0
      ? html`<a class="button secondary danger" href="${base}/delete" data-delete="${base}/delete"
  data-confirm="${`Delete the folder "${n.name}" and the ${below} item${below === 1 ? '' : 's'} inside it? This cannot be undone.`}">Delete…</a>`
      : html`<form method="post" action="${base}/delete" data-confirm="${`Delete the ${what} "${n.name}"? This cannot be undone.`}">
  <button class="secondary danger" type="submit">Delete</button></form>`;
  const app =
    n.type === 'site' && n.source_node_id === null
      ? html`<form method="post" action="${base}/app"><input type="hidden" name="enableSignups" value="${n.enable_signups ? '0' : '1'}">
  <button class="secondary" type="submit" title="${n.enable_signups ? 'Visitors can sign up and get their own copy. Click to stop new signups (existing copies stay).' : 'Let visitors sign up and get their own copy of this document.'}">${n.enable_signups ? 'Stop signups' : 'Make it an app'}</button></form>`
      : '';
  const share =
    n.type === 'site'
      ? html`<a class="button secondary" href="${base}/sharing" title="${n.share_enabled ? 'Anyone with the share link may view and save it. Manage the link.' : 'Share a link that lets others view and save it.'}">${n.share_enabled ? 'Shared' : 'Share'}</a>`
      : '';
  return html`${app}${share}<details><summary>Rename</summary>
  <form method="post" action="${base}/rename"><input name="name" value="${n.name}" required maxlength="${limits.nameLength}" aria-label="New name">
  <button type="submit">Rename</button></form></details>
<details><summary>Move</summary>
  <form method="post" action="${base}/move"><select name="parentId" aria-label="Move to folder">${folderOptions(tree, n.parent_id, n)}</select>
  <button type="submit">Move</button></form></details>
${del}`;
}

function row(tree: Tree, n: NodeRow, depth: number, hostUrl: string): Html {
  const indent = raw(`style="padding-left:${0.6 + depth * 1.4}rem"`);
  const label =
    n.type === 'folder'
      ? html`<strong class="folder">${n.name}/</strong>`
      : html`<a href="${hostUrl + nodeHref(n)}" target="_blank" rel="noopener">${n.name}</a>`;
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
      : n.enable_signups
        ? html` <small class="kind">app · <a href="${appSignupUrl(hostUrl, n)}" target="_blank" rel="noopener">signup page</a></small>`
        : '';
  return html`<tr data-node-id="${n.id}" data-type="${n.type}"><td ${indent}>${label}${kind}</td><td class="num">${size}</td>
<td class="muted nowrap">${formatTime(n.modified_at)}</td><td>${visibility}</td><td><div class="actions">${actions(tree, n)}</div></td></tr>`;
}

function rows(tree: Tree, parentId: number, depth: number, hostUrl: string): Html[] {
  const out: Html[] = [];
  for (const n of tree.byParent.get(parentId) ?? []) {
    out.push(row(tree, n, depth, hostUrl));
    if (n.type === 'folder') out.push(...rows(tree, n.id, depth + 1, hostUrl));
  }
  return out;
}

/** The node list: what AJAX answers carry as `html`, and what the page shows in `#tree`. */
export function nodeListHtml(nodes: NodeRow[], hostUrl: string): string {
  const tree = treeOf(nodes);
  const body =
    nodes.length === 0
      ? html`<p class="muted empty">Nothing here yet. Create your first document above.</p>`
      : html`<table><thead><tr><th>Name</th><th class="num">Size</th><th>Modified</th><th>Visibility</th><th>Actions</th></tr></thead>
<tbody>${rows(tree, 0, 0, hostUrl)}</tbody></table>`;
  // The folder choices of the create forms, refreshed with the list.
  return html`${body}<select id="folder-choices" hidden>${folderOptions(tree, 0)}</select>`.value;
}

export function dashboardPage(v: DashboardView): string {
  const sites = v.nodes.filter((n) => n.type === 'site').length;
  const tree = treeOf(v.nodes);
  return page({
    title: 'Dashboard',
    username: v.username,
    msg: v.msg,
    body: html`<h1>Your documents</h1>
<p class="muted">Served at <a href="${v.hostUrl}/" target="_blank" rel="noopener">${v.hostUrl}/</a> ·
${sites} document${sites === 1 ? '' : 's'}${v.siteLimit === null ? ' (unlimited)' : ` of ${v.siteLimit}`}</p>
<div id="flash" role="status" aria-live="polite"></div>
<div class="create">
<form method="post" action="/_/dashboard/nodes" class="card">
  <input type="hidden" name="type" value="site">
  <label for="new-site">New document</label>
  <input id="new-site" name="name" required placeholder="my-app.html" maxlength="${limits.pathLength}">
  <small>Ends in .html or .htmlclay. A path like <code>notes/todo.html</code> creates the folders too.</small>
  <label for="new-site-parent">In folder</label>
  <select id="new-site-parent" name="parentId" data-folder-choices>${folderOptions(tree, 0)}</select>
  <button type="submit">Create document</button>
</form>
<form method="post" action="/_/dashboard/nodes" class="card">
  <input type="hidden" name="type" value="folder">
  <label for="new-folder">New folder</label>
  <input id="new-folder" name="name" required placeholder="projects" maxlength="${limits.nameLength}">
  <small>Folders nest at most ${limits.folderDepth} levels.</small>
  <label for="new-folder-parent">In folder</label>
  <select id="new-folder-parent" name="parentId" data-folder-choices>${folderOptions(tree, 0)}</select>
  <button type="submit">Create folder</button>
</form>
</div>
<div id="tree">${raw(nodeListHtml(v.nodes, v.hostUrl))}</div>`,
    scripts: html`<style>${raw(STYLE)}</style><script>${raw(SCRIPT)}</script>`,
  });
}

/** The page asked for when deleting a non-empty folder without script. */
export function confirmDeletePage(o: { username: string; node: NodeRow; count: number }): string {
  return page({
    title: 'Delete folder',
    username: o.username,
    body: html`<h1>Delete the folder "${o.node.name}"?</h1>
<p>It holds ${o.count} item${o.count === 1 ? '' : 's'}. Deleting the folder deletes everything inside it, with all versions. This cannot be undone.</p>
<form method="post" action="/_/dashboard/nodes/${o.node.id}/delete">
  <input type="hidden" name="cascade" value="1">
  <button type="submit">Delete the folder and its contents</button>
  <a class="button secondary" href="/_/dashboard">Cancel</a>
</form>`,
  });
}

const STYLE = `
.create{display:flex;gap:1rem;flex-wrap:wrap;margin-bottom:1.5rem}.create form.card{flex:1;min-width:260px;max-width:none}
#tree td{vertical-align:top}td.num,.nowrap{white-space:nowrap}strong.folder{color:var(--fg)}
div.actions{display:flex;gap:.6rem;align-items:flex-start;flex-wrap:wrap}div.actions details{display:inline-block}
div.actions summary{cursor:pointer;color:var(--accent)}div.actions form{margin:0;display:flex;gap:.3rem}
div.actions input,div.actions select{width:auto}td form button,td .button{margin-top:0;padding:.2rem .6rem}
.button.secondary,button.secondary{background:#e7e5e4;color:var(--fg)}button.danger,.button.danger{color:#991b1b}button.vis{min-width:5rem}
`;

// Progressive enhancement: forms post with fetch and the answer's `html` replaces the list.
const SCRIPT = `
(function(){
  var flash=document.getElementById('flash');
  function show(msg,type){flash.className='msg '+(type==='error'?'error':'success');flash.textContent=msg||'';}
  function refreshChoices(){
    var src=document.getElementById('folder-choices');if(!src)return;
    document.querySelectorAll('select[data-folder-choices]').forEach(function(sel){var v=sel.value;sel.innerHTML=src.innerHTML;sel.value=v;if(sel.value!==v)sel.value='0';});
  }
  async function send(url,body){
    try{
      var res=await fetch(url,{method:'POST',headers:{'Accept':'application/json','X-Requested-With':'fetch'},body:body,credentials:'same-origin'});
      var data=await res.json().catch(function(){return {msg:'HTTP '+res.status,msgType:'error'};});
      if(res.status===401){location.href='/_/login?return=/_/dashboard';return;}
      show(data.msg,data.msgType);
      if(data.html){document.getElementById('tree').innerHTML=data.html;refreshChoices();}
      return res.ok;
    }catch(e){show('Could not reach the server.','error');}
  }
  document.addEventListener('submit',function(e){
    var f=e.target;if(!(f instanceof HTMLFormElement)||!f.action.includes('/_/dashboard/nodes'))return;
    if(f.dataset.confirm&&!confirm(f.dataset.confirm)){e.preventDefault();return;}
    e.preventDefault();
    send(f.action,new URLSearchParams(new FormData(f))).then(function(ok){if(ok&&f.closest('.create'))f.reset();});
  });
  document.addEventListener('click',function(e){
    var a=e.target.closest&&e.target.closest('a[data-delete]');if(!a)return;
    e.preventDefault();
    if(confirm(a.dataset.confirm))send(a.dataset.delete,new URLSearchParams({cascade:'1'}));
  });
})();
`;
