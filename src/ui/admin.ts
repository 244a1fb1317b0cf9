// The administration page of a Kiln (superadmins): accounts, and how this Kiln takes new ones.
import { emailHtml, html, raw } from './html.ts';
import { page, type Msg } from './pages.ts';
import type { InstanceSettings, listAccounts } from '../admin/admin.ts';
import { formatSize } from '../core/size.ts';

type Listing = Awaited<ReturnType<typeof listAccounts>>;

/** AI editing as the administrator sees it: the operator's engines (never a key), which plans include it, and
 *  each plan's daily budget per account. */
export interface AiEditView {
  engines: Array<{ name: string; describe: string; isDefault: boolean }>;
  plans: Record<(typeof PLANS)[number], boolean>;
  budgets: Record<(typeof PLANS)[number], { requests: number; bytes: number }>;
}

function aiEditCard(v: AiEditView) {
  const on = v.engines.length > 0;
  return html`<section class="card" aria-labelledby="ai-edit"><h2 id="ai-edit" style="margin-top:0">AI editing</h2>
${
  on
    ? html`<p><strong class="good">On.</strong> Owners ask for an edit in their pages (edit mode, hover an element or press ⌘K); these engines answer:</p>
<ul>${v.engines.map((e) => html`<li><code>@${e.name}</code>${e.isDefault ? ' (default)' : ''}: ${e.describe}</li>`)}</ul>`
    : html`<p><strong>Off:</strong> no engine is set. Set <code>AI_EDIT_COMMAND</code> (a local command) or <code>AI_EDIT_URL</code> with <code>AI_EDIT_API_KEY</code> and <code>AI_EDIT_MODEL</code> (a hosted model), and restart; the README says what goes to the engine. Owners may still answer their own pages with <code>kiln ai-edit serve</code> (<code>node bin/kiln.js ai-edit serve</code> in a checkout of Kiln).</p>`
}
<p>Who may use them: developer accounts whose email is confirmed, on a plan that includes it, within its daily budget per account (counted from 00:00 UTC; each account's use today is in the list below). App users never do; administrators have no budget.</p>
<form method="post" action="/_/admin/ai-edit"><fieldset><legend>Plans that include it</legend>${PLANS.map(
    (p) => html`<label><input type="checkbox" name="${p}" value="1"${v.plans[p] ? html` checked` : ''}> ${p}</label>`,
  )}</fieldset>
<fieldset class="budgets"><legend>Daily budget per account</legend>
<table><thead><tr><th>Plan</th><th>Requests a day</th><th>KB sent to the engine a day</th></tr></thead><tbody>${PLANS.map(
    (p) =>
      html`<tr><th scope="row">${p}</th><td><input name="requests${cap(p)}" inputmode="numeric" pattern="[0-9]+" required value="${v.budgets[p].requests}" aria-label="${`Requests a day, ${p}`}"></td><td><input name="kb${cap(p)}" inputmode="numeric" pattern="[0-9]+" required value="${Math.round(v.budgets[p].bytes / 1024)}" aria-label="${`KB sent to the engine a day, ${p}`}"></td></tr>`,
  )}</tbody></table></fieldset><button type="submit" class="secondary">Save AI editing</button></form></section>`;
}

/** Agents (MCP) as the administrator sees them: on for this Kiln, and which plans include them. */
export interface McpView {
  on: boolean;
  plans: Record<(typeof PLANS)[number], boolean>;
  /** MCP_CALLS_PER_MINUTE. */
  callsPerMinute: number;
}

function mcpCard(v: McpView) {
  return html`<section class="card" aria-labelledby="mcp"><h2 id="mcp" style="margin-top:0">Agents (MCP)</h2>
<p>${v.on ? html`<strong class="good">On.</strong>` : html`<strong>Off.</strong>`} Agents such as Claude Code, Cursor and Claude Desktop read and edit documents through <code>/_/mcp</code>, with an agent key their person makes on the account page (read-only or read-write; the whole account, one team or one folder; an expiry) or a sync key. Each call is a request like a sync API call: reads, and saves that make a version each through the same pipeline (uploads count against the plan's sizes). Each credential makes at most ${v.callsPerMinute} calls a minute.</p>
<form method="post" action="/_/admin/mcp"><label><input type="checkbox" name="on" value="1"${v.on ? html` checked` : ''}> On for this Kiln</label>
<fieldset><legend>Plans that include it</legend>${PLANS.map(
    (p) => html`<label><input type="checkbox" name="${p}" value="1"${v.plans[p] ? html` checked` : ''}> ${p}</label>`,
  )}</fieldset><small class="muted">Off, or not in a caller's plan: every call answers 403 <code>mcp-off</code>. Administrators connect whatever their plan.</small><br>
<button type="submit" class="secondary">Save agents</button></form></section>`;
}

const PLANS = ['free', 'personal', 'maker'] as const;
const cap = (p: string) => p[0].toUpperCase() + p.slice(1);
const MODES = { open: 'Open to anyone', invite: 'By invitation link only', closed: 'Closed' } as const;

export function adminPage(o: {
  username: string;
  q: string;
  listing: Listing;
  settings: InstanceSettings;
  uploadMb: Record<(typeof PLANS)[number], number>;
  aiEdit: AiEditView;
  mcp: McpView;
  inviteUrl?: string;
  msg?: Msg;
}): string {
  const rows = o.listing.accounts.map(
    (
      a,
    ) => html`<tr data-account="${a.username}"><td data-label="Account"><strong>${a.username}</strong>${a.kind === 'team' ? html` <small>team</small>` : ''}${a.superadmin ? html` <small>admin</small>` : ''}${a.suspended ? html` <small class="bad">suspended</small>` : ''}<br><small class="email">${emailHtml(a.email ?? '')}</small></td>
<td data-label="Plan"><form method="post" action="/_/admin/accounts/${a.id}/plan" class="inline"><select name="plan" aria-label="${`Plan of ${a.username}`}">${PLANS.map(
      (p) => html`<option value="${p}"${p === a.plan ? html` selected` : ''}>${p}</option>`,
    )}</select><button class="secondary" type="submit">Set</button></form></td>
<td class="num" data-label="Documents">${a.documents}</td><td class="num" data-label="Storage">${formatSize(a.storage)}</td>
<td class="num" data-label="AI edits today">${a.aiEditToday.requests} · ${formatSize(a.aiEditToday.bytes)}</td>
<td data-label="Last active">${a.lastActive ? html`<time datetime="${a.lastActive}">${a.lastActive.slice(0, 16).replace('T', ' ')} UTC</time>` : 'never'}</td>
<td><div class="actions-row">${a.kind === 'person' ? html`<form method="post" action="/_/admin/accounts/${a.id}/impersonate"><button class="secondary" type="submit">Sign in as</button></form>` : ''}
${a.accountType === 'app_user' && !a.emailConfirmed ? html`<form method="post" action="/_/admin/accounts/${a.id}/confirmation"><button class="secondary" type="submit">Resend confirmation</button></form>` : ''}
<form method="post" action="/_/admin/accounts/${a.id}/suspend"><input type="hidden" name="suspended" value="${a.suspended ? '0' : '1'}">
<button class="secondary${a.suspended ? '' : ' danger'}" type="submit">${a.suspended ? 'Unsuspend' : 'Suspend'}</button></form></div></td></tr>`,
  );
  const pageLink = (n: number) => `/_/admin?${new URLSearchParams({ q: o.q, page: String(n) })}`;
  return page({
    title: 'Administration',
    username: o.username,
    msg: o.msg,
    body: html`<style>.bad{color:var(--bad);font-weight:600}.email{overflow-wrap:normal}form.inline{display:flex;gap:var(--s2);margin:0}form.inline select{width:auto}
form.inline button,td form button{margin:0;padding:.25rem .6rem}.invite .inline{display:flex;gap:var(--s2)}fieldset label:has(input[type=radio]){font-weight:400}.invite input{flex:1;min-width:0}.invite button{margin:0}.pager{display:flex;gap:var(--s3);align-items:center}.actions-row{display:flex;gap:var(--s2);flex-wrap:wrap}.good{color:var(--good,#18794e)}
td[data-label="AI edits today"]{white-space:nowrap}.budgets{min-width:0}.budgets table{width:100%;max-width:32rem;table-layout:fixed}.budgets thead th:first-child{width:5.5rem}
.budgets input{width:100%;min-width:0;margin:0;padding-left:.5rem;padding-right:.25rem}.budgets th,.budgets td{padding:.25rem .5rem .25rem 0;vertical-align:middle}</style>
<h1>Administration</h1>
<section class="card" aria-labelledby="signups"><h2 id="signups" style="margin-top:0">New accounts</h2>
<form method="post" action="/_/admin/settings">
<label for="signup-mode">Sign-ups</label><select id="signup-mode" name="signups">${Object.entries(MODES).map(
      ([k, v]) => html`<option value="${k}"${k === o.settings.signups ? html` selected` : ''}>${v}</option>`,
    )}</select>
<label for="default-plan">Plan of new accounts</label><select id="default-plan" name="defaultPlan">${PLANS.map(
      (p) => html`<option value="${p}"${p === o.settings.defaultPlan ? html` selected` : ''}>${p}</option>`,
    )}</select>
<fieldset><legend>Document names</legend>
<label><input type="radio" name="documentNames" value="instance"${o.settings.documentNames === 'instance' ? html` checked` : ''}> Unique across this Kiln, as on Hyperclay: one <code>notes.html</code> in all of it</label>
<label><input type="radio" name="documentNames" value="account"${o.settings.documentNames === 'account' ? html` checked` : ''}> Unique per account: everyone may have their own <code>notes.html</code>, and an app's visitors keep its name</label>
<small class="muted">Index pages and a collection's two pages are unique per folder either way. Going back to unique across this Kiln needs every name shared by two accounts renamed first.</small></fieldset>
<fieldset><legend>Upload size per file (MB)</legend>${PLANS.map(
      (p) =>
        html`<label for="upload-${p}">${p}</label><input id="upload-${p}" name="upload${p[0].toUpperCase()}${p.slice(1)}" type="number" min="1" max="150" step="1" value="${Math.round(o.uploadMb[p])}">`,
    )}</fieldset>
<button type="submit">Save</button></form>
<form method="post" action="/_/admin/invites"><button class="secondary" type="submit">Make an invitation link</button></form>
${
  o.inviteUrl
    ? html`<div class="invite"><label for="invite-url">Invitation link: one person may sign up with it, for 14 days</label>
<div class="inline"><input id="invite-url" readonly value="${o.inviteUrl}"><button type="button" class="secondary" data-copy="invite-url">Copy</button></div></div>`
    : ''
}
<form method="post" action="/_/admin/mail-test" class="inline"><label for="mail-to" class="visually-hidden">Send a test mail to</label>
<input id="mail-to" name="to" type="email" required placeholder="you@example.com"><button class="secondary" type="submit">Send a test mail</button></form>
</section>
${aiEditCard(o.aiEdit)}
${mcpCard(o.mcp)}
<h2>Accounts <small class="muted">(${o.listing.total})</small></h2>
<form method="get" action="/_/admin" class="inline" role="search"><label for="q" class="visually-hidden">Search accounts</label>
<input id="q" name="q" type="search" value="${o.q}" placeholder="Username or email"><button type="submit">Search</button></form>
<table class="stack"><thead><tr><th>Account</th><th>Plan</th><th class="num">Documents</th><th class="num">Storage</th><th class="num">AI edits today</th><th>Last active</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>
<p class="pager">${o.listing.page > 1 ? html`<a href="${pageLink(o.listing.page - 1)}">Previous</a>` : ''}
<span>Page ${o.listing.page} of ${o.listing.pages}</span>${o.listing.page < o.listing.pages ? html`<a href="${pageLink(o.listing.page + 1)}">Next</a>` : ''}</p>`,
    scripts: html`<script>${raw(COPY_SCRIPT)}</script>`,
  });
}

// "Copy" beside a field: the clipboard where the browser allows it, else the text selected to copy by hand.
const COPY_SCRIPT = `document.addEventListener('click',function(e){
  var b=e.target.closest&&e.target.closest('[data-copy]');if(!b)return;
  var f=document.getElementById(b.dataset.copy);f.select();
  var ok=function(){b.textContent='Copied';},no=function(){b.textContent='Selected: press Ctrl+C';};
  if(navigator.clipboard)navigator.clipboard.writeText(f.value).then(ok,no);else no();
});`;
