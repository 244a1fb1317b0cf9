// Connecting an agent by URL (OAuth): the consent page (`/_/connect/:uid`), the page of an OAuth error, and the
// account page's list of connected agents.
import { html, type Html } from './html.ts';
import { page, type Msg } from './pages.ts';
import { limits } from '../limits.ts';

const STYLE = html`<style>
.connect{max-width:560px}.connect .card{margin-bottom:var(--s4)}.connect section.card p:first-of-type{margin-top:0}
.connect dl{margin:var(--s3) 0 0}.connect dt{font-weight:600;margin-top:var(--s3)}.connect dd{margin:0}
.connect dd code{word-break:break-all}
.connect fieldset{border:0;padding:0;margin:0 0 var(--s4)}.connect legend{font-weight:700;font-size:1.1rem;padding:0}
.connect label.choice{font-weight:400;display:flex;gap:var(--s2);align-items:flex-start}
.connect label.choice input{margin-top:.35rem}
.connect .answers{display:flex;flex-wrap:wrap;gap:var(--s3)}
</style>`;

export interface ConsentView {
  uid: string;
  username: string;
  client: { name: string; id: string; metadataDocument: boolean };
  redirectUri: string;
  accounts: Array<{ id: number; username: string; kind: 'personal' | 'team'; role: string }>;
  msg?: Msg;
}

export function consentPage(o: ConsentView): string {
  const options = o.accounts.map((a) =>
    a.kind === 'personal'
      ? html`<option value="${a.id}">Your own documents (${a.username})</option>`
      : html`<option value="${a.id}">Team ${a.username} (${a.role}${a.role === 'viewer' ? ', reads only' : ''})</option>`,
  );
  const host = hostOf(o.redirectUri);
  return page({
    title: `Connect ${o.client.name}`,
    username: o.username,
    msg: o.msg,
    body: html`${STYLE}<div class="connect"><h1>Connect ${o.client.name} to your Kiln?</h1>
<section class="card" aria-labelledby="who"><h2 id="who" class="visually-hidden">The agent</h2>
<p><strong>${o.client.name}</strong> asks to use your documents as <strong>${o.username}</strong>: it reads them and, if you let it, changes them (every change is a version you can restore).</p>
<dl><dt>After you answer, you go back to</dt><dd><code>${o.redirectUri}</code></dd>
<dt>The agent says it is</dt><dd>${o.client.name} <small>(${o.client.metadataDocument ? html`described at <code>${o.client.id}</code>` : 'registered itself here'})</small></dd></dl>
<p class="muted"><small>Kiln does not vouch for the name: an agent names itself. Allow only if you started this connection, and ${host ? html`<strong>${host}</strong>` : 'the address above'} is where you expect to go back to.</small></p>
</section>
<form class="card" method="post" action="/_/connect/${o.uid}">
<fieldset><legend>Which documents</legend>
<label for="account">Account</label><select id="account" name="account">${options}</select>
<label for="folder">Only this folder <small>(optional)</small></label><input id="folder" name="folder" maxlength="${limits.pathLength}" placeholder="the whole account" autocomplete="off" aria-describedby="folder-help">
<small id="folder-help">A folder path such as <code>notes/2026</code>; the agent sees nothing outside it.</small>
</fieldset>
<fieldset><legend>What it may do</legend>
<label class="choice"><input type="radio" name="access" value="read" checked> <span>Read only</span></label>
<label class="choice"><input type="radio" name="access" value="write"> <span>Read and change documents</span></label>
</fieldset>
<div class="answers"><button type="submit" name="answer" value="allow">Allow</button>
<button class="secondary" type="submit" name="answer" value="deny">Deny</button></div>
<p class="muted"><small>You can disconnect it at any time on your <a href="/_/account#connected">account page</a>.</small></p>
</form></div>`,
  });
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).host;
  } catch {
    return '';
  }
}

/** An OAuth request Kiln refused (a bad client, redirect address, or an expired step). */
export function oauthErrorPage(msg: string): string {
  return page({
    title: 'Connection refused',
    body: html`<h1>This connection did not work</h1><p>${msg}</p>
<p>Start connecting again from the agent. <a href="/_/account#connected">Your connected agents</a></p>`,
  });
}

export interface AgentRow {
  id: number;
  client: string;
  account: { username: string; kind: 'personal' | 'team' };
  folder: string | null;
  readOnly: boolean;
  connectedAt: string;
  lastUsedAt: string | null;
}

const when = (iso: string) => html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;

/** The account page's "Connected agents" card. */
export function connectedAgentsSection(agents: AgentRow[]): Html {
  const rows = agents.map(
    (a) => html`<li><span><strong>${a.client}</strong> · ${a.readOnly ? 'reads only' : 'reads and changes'}<br>
<small>${a.account.kind === 'team' ? html`team ${a.account.username}` : 'your documents'}${a.folder ? html`, folder <code>${a.folder}</code>` : ''}
· connected ${when(a.connectedAt)} · ${a.lastUsedAt ? html`last used ${when(a.lastUsedAt)}` : 'not used yet'}</small></span>
<form method="post" action="/_/account/agents/${a.id}/revoke"><button class="secondary" type="submit" aria-label="${`Revoke ${a.client}`}">Revoke</button></form></li>`,
  );
  return html`<section class="card" id="connected" aria-labelledby="connected-h"><h2 id="connected-h">Connected agents</h2>
<p class="muted">Agents you connected by their URL sign-in (OAuth: Claude and ChatGPT connectors, Cursor…). Revoking one stops it at its next call.</p>
${agents.length ? html`<ul class="logins">${rows}</ul>` : html`<p>No agent is connected.</p>`}</section>`;
}
