// "Connect an agent", a section of the account page: make an agent key (shown once, with the lines to paste into
// Claude Code, Claude Desktop, Cursor or any MCP client), and the list of keys with Revoke.
import { html, type Html } from './html.ts';
import type { Msg } from './pages.ts';
import type { AgentKeyInfo, agentsPanel, freshAgentKey } from '../agents/keys.ts';
import { limits } from '../limits.ts';

export type AgentsView = Awaited<ReturnType<typeof agentsPanel>> & {
  /** A key made a moment ago: shown once, never again. */
  fresh?: ReturnType<typeof freshAgentKey>;
  /** The answer of this section's last form. */
  msg?: Msg;
};

export const AGENTS_STYLE = `
#agents .newkey{background:#fffbeb;border:1px solid #b45309;border-radius:10px;padding:var(--s3) var(--s4);margin:var(--s3) 0}
#agents .newkey h3{font-size:1rem;margin:var(--s4) 0 var(--s1)}#agents .newkey p{margin:var(--s1) 0}
#agents pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fff;border:1px solid var(--line);border-radius:6px;padding:var(--s2);margin:var(--s1) 0}
#agents .copyrow{display:flex;gap:var(--s2);align-items:center}#agents .copyrow input{flex:1;min-width:0;font-family:ui-monospace,Menlo,Consolas,monospace;margin:0}
#agents .copyrow button,#agents button[data-copy]{margin:0;padding:.25rem .6rem;width:auto}
#agents fieldset label{font-weight:400}#agents td form{margin:0}#agents td form button{margin:0;padding:.2rem .6rem}
#agents .state{color:var(--muted)}#agents dl{margin:var(--s1) 0}#agents dd{margin:0 0 var(--s2);overflow-wrap:anywhere}
`;

const when = (iso: string | null) =>
  iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} UTC</time>` : 'never';

/** What a key reaches, in words: `alice`, `team acme`, `alice: notes/2026`. */
function reach(k: Pick<AgentKeyInfo, 'account' | 'folder' | 'folderGone'>): string {
  const who = k.account.kind === 'team' ? `team ${k.account.username}` : k.account.username;
  if (!k.folder) return `${who} (all)`;
  return k.folderGone ? `${who}: ${k.folder}/ (the folder is gone)` : `${who}: ${k.folder}/`;
}

/** A block to copy: its text, and a button that copies it. */
function copyable(id: string, label: string, text: string): Html {
  return html`<pre id="${id}" aria-label="${label}">${text}</pre><button type="button" class="secondary" data-copy="${id}">Copy</button>`;
}

function freshBlock(f: NonNullable<AgentsView['fresh']>): Html {
  const c = f.connect;
  return html`<div class="newkey" role="status" id="new-agent-key">
<p><strong>Your new agent key “${f.info.name}”</strong>: copy it now, it is shown only once. It ${f.info.readOnly ? 'reads' : 'reads and writes'} ${reach(f.info)}, until ${when(f.info.expiresAt)}.</p>
<div class="copyrow"><input id="agent-key" readonly value="${f.key}" aria-label="The new agent key"><button type="button" class="secondary" data-copy="agent-key">Copy</button></div>
<h3>Claude Code</h3>${copyable('connect-claude-code', 'Claude Code command', c.claudeCode)}
<p>Or through the local bridge, <code>kiln mcp</code> from a checkout of Kiln on the agent’s machine (it talks to this Kiln for the agent; Kiln is not on npm, so not <code>npx kiln</code>):</p>${copyable('connect-claude-code-stdio', 'Claude Code command with the local bridge', c.claudeCodeStdio)}
<h3>Claude Desktop</h3><p>Settings → Developer → Edit Config: into <code>claude_desktop_config.json</code> (it runs the local bridge: Node.js and a checkout of Kiln):</p>${copyable('connect-claude-desktop', 'Claude Desktop configuration', c.claudeDesktop)}
<h3>Cursor</h3><p>Into <code>~/.cursor/mcp.json</code> (or <code>.cursor/mcp.json</code> in a project):</p>${copyable('connect-cursor', 'Cursor configuration', c.cursor)}
<h3>Any MCP client</h3><dl><dt>URL (Streamable HTTP)</dt><dd><code>${c.url}</code></dd><dt>Header</dt><dd><code>${c.header}</code></dd></dl>
</div>`;
}

function keyForm(v: AgentsView): Html {
  const days = v.lifetimesDays.map(
    (d) =>
      html`<option value="${d}"${d === v.defaultDays ? html` selected` : ''}>${d === 365 ? '1 year' : `${d} days`}</option>`,
  );
  const accounts = v.accounts.map(
    (a) =>
      html`<option value="${a.id}">${a.kind === 'team' ? `Team ${a.username}${a.role === 'viewer' ? ' (you are a viewer: reads only)' : ''}` : `Your account (${a.username})`}</option>`,
  );
  return html`<form method="post" action="/_/account/agent-keys">
<label for="agent-name">Name</label><input id="agent-name" name="name" required maxlength="${limits.agentKeys.nameLength}" placeholder="laptop, Cursor, CI" autocomplete="off">
<fieldset><legend>Rights</legend><label><input type="radio" name="access" value="write" checked> Read and write</label>
<label><input type="radio" name="access" value="read"> Read only</label></fieldset>
<label for="agent-account">Reaches</label><select id="agent-account" name="account">${accounts}</select>
<label for="agent-folder">Only this folder <small>(optional)</small></label><input id="agent-folder" name="folder" maxlength="${limits.pathLength}" placeholder="all of it" autocomplete="off" aria-describedby="agent-folder-hint">
<small id="agent-folder-hint">A folder of the account above, such as <code>notes/2026</code>; empty: the whole account.</small>
<label for="agent-days">Expires after</label><select id="agent-days" name="days">${days}</select>
<button type="submit">Make the key</button></form>`;
}

function keyRows(keys: AgentKeyInfo[]): Html {
  const rows = keys.map(
    (
      k,
    ) => html`<tr data-agent-key="${k.id}"><td data-label="Name"><strong>${k.name}</strong> <small><code>${k.prefix}…</code></small></td>
<td data-label="Rights">${k.readOnly ? 'read only' : 'read and write'}</td><td data-label="Reaches">${reach(k)}</td>
<td data-label="Created">${when(k.createdAt)}</td><td data-label="Last used">${when(k.lastUsedAt)}</td><td data-label="Expires">${when(k.expiresAt)}</td>
<td>${
      k.state === 'active'
        ? html`<form method="post" action="/_/account/agent-keys/${k.id}/revoke" onsubmit="return confirm('Revoke this key? The agent using it is refused from its next call.')"><button class="secondary danger" type="submit" aria-label="${`Revoke ${k.name}`}">Revoke</button></form>`
        : html`<span class="state">${k.state}</span>`
    }</td></tr>`,
  );
  return html`<table class="stack"><thead><tr><th>Name</th><th>Rights</th><th>Reaches</th><th>Created</th><th>Last used</th><th>Expires</th><th><span class="visually-hidden">Revoke or state</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function agentsSection(v: AgentsView): Html {
  return html`<section class="card" id="agents" aria-labelledby="agents-h"><h2 id="agents-h">Connect an agent</h2>
<p>Agents (Claude Code, Claude Desktop, Cursor, any MCP client) read and edit your documents with an agent key. A key reaches one account (yours or a team's), or one folder of it; it reads only, or reads and writes; it expires. Only a hash of it is kept, so it is shown once. Every change it makes is a version, named after the key.</p>
${v.msg ? html`<div class="msg ${v.msg.type === 'error' ? 'error' : 'success'}" role="status">${v.msg.text}</div>` : ''}
${v.fresh ? freshBlock(v.fresh) : ''}
${v.closed ? html`<p><strong>${v.closed}</strong></p>` : keyForm(v)}
<h3>Your agent keys</h3>
${v.keys.length ? keyRows(v.keys) : html`<p class="muted">No agent keys yet.</p>`}</section>`;
}

// "Copy" beside a key or a block: the clipboard where the browser allows it, else the text selected to copy by hand.
export const AGENTS_SCRIPT = `document.addEventListener('click',function(e){
  var b=e.target.closest&&e.target.closest('#agents [data-copy]');if(!b)return;
  var f=document.getElementById(b.dataset.copy),text=f.value!==undefined?f.value:f.textContent;
  if(f.select)f.select();else{var r=document.createRange();r.selectNodeContents(f);var s=getSelection();s.removeAllRanges();s.addRange(r);}
  var ok=function(){b.textContent='Copied';},no=function(){b.textContent='Selected: press Ctrl+C';};
  if(navigator.clipboard)navigator.clipboard.writeText(text).then(ok,no);else no();
});`;
