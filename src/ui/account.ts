// The account page (password, sign-ins, agents, export and import, deleting the account) and the password
// reset pages of developer accounts.
import { html, raw, type Html } from './html.ts';
import { page, type Msg } from './pages.ts';
import type { LoginInfo } from '../accounts/account.ts';
import { limits } from '../limits.ts';
import { AGENTS_SCRIPT, AGENTS_STYLE, agentsSection, type AgentsView } from './agents.ts';
import { connectedAgentsSection, type AgentRow } from './connect.ts';

const STYLE = html`<style>
section.card{margin-bottom:var(--s5)}section.card h2{margin-top:0}
ul.logins{list-style:none;padding:0;margin:0}ul.logins li{display:flex;flex-wrap:wrap;gap:var(--s3);align-items:center;
padding:var(--s2) 0;border-bottom:1px solid var(--line)}ul.logins li:last-child{border:0}ul.logins form{margin:0 0 0 auto}
ul.logins button{margin:0;padding:.25rem .6rem}.danger-zone{border-color:#fca5a5}
${raw(AGENTS_STYLE)}</style>`;

/** A short name for a browser from its User-Agent. */
function browserOf(ua: string | null): string {
  if (!ua) return 'Unknown browser';
  const name = /Edg\//.test(ua)
    ? 'Edge'
    : /Chrome\//.test(ua)
      ? 'Chrome'
      : /Firefox\//.test(ua)
        ? 'Firefox'
        : /Safari\//.test(ua)
          ? 'Safari'
          : ua.split(/[ /]/)[0];
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad/.test(ua)
      ? 'iOS'
      : /Mac OS X/.test(ua)
        ? 'macOS'
        : /Windows/.test(ua)
          ? 'Windows'
          : /Linux/.test(ua)
            ? 'Linux'
            : '';
  return os ? `${name} on ${os}` : name;
}

const when = (iso: string) => html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;

export function accountPage(o: {
  username: string;
  email: string;
  /** False until the address is confirmed (AI editing needs it). */
  emailConfirmed?: boolean;
  plan: string;
  logins: LoginInfo[];
  /** "Connect an agent": absent on a page drawn again after a refusal elsewhere. */
  agents?: AgentsView;
  /** Agents connected by OAuth (src/oauth/grants.ts). */
  connected?: AgentRow[];
  msg?: Msg;
}): string {
  const logins: Html[] = o.logins.map(
    (
      l,
    ) => html`<li><span><strong>${browserOf(l.userAgent)}</strong>${l.current ? html` <small>(this browser)</small>` : ''}<br>
<small>signed in ${when(l.createdAt)}${l.hosts.length ? html` · also on ${[...new Set(l.hosts)].join(', ')}` : ''}</small></span>
${
  l.current
    ? ''
    : html`<form method="post" action="/_/account/sessions/${l.id}/end"><button class="secondary" type="submit">Sign out</button></form>`
}</li>`,
  );
  return page({
    title: 'Account',
    username: o.username,
    msg: o.msg,
    body: html`${STYLE}<h1>Your account</h1>
<p class="muted"><strong>${o.username}</strong> · ${o.email} · ${o.plan} plan (<a href="/_/billing">billing</a>)</p>

<section class="card" aria-labelledby="pw"><h2 id="pw">Password</h2>
<form method="post" action="/_/account/password">
<label for="current-password">Current password</label><input id="current-password" name="current" type="password" required autocomplete="current-password" maxlength="${limits.password.maxLength}">
<label for="new-password">New password</label><input id="new-password" name="password" type="password" required minlength="${limits.password.minLength}" maxlength="${limits.password.maxLength}" autocomplete="new-password">
<small>At least ${limits.password.minLength} characters, not a common password. Every other browser is signed out.</small><br>
<button type="submit">Change password</button></form></section>

<section class="card" aria-labelledby="un"><h2 id="un">Username</h2>
<form method="post" action="/_/account/username">
<label for="new-username">New username</label><input id="new-username" name="username" required minlength="${limits.usernameLength.min}" maxlength="${limits.usernameLength.max}" autocomplete="off">
<label for="username-password">Password</label><input id="username-password" name="password" type="password" required autocomplete="current-password" maxlength="${limits.password.maxLength}">
<small>Your documents move to the new name's address; the old address (${o.username}) leads there for 30 days.</small><br>
<button type="submit">Change username</button></form></section>

<section class="card" aria-labelledby="em"><h2 id="em">Email</h2>
${o.emailConfirmed === false ? html`<p><strong>${o.email} is not confirmed yet.</strong> Enter it below with your password to get a confirmation link: AI editing needs a confirmed address.</p>` : ''}
<form method="post" action="/_/account/email">
<label for="new-email">New email address</label><input id="new-email" name="email" type="email" required autocomplete="email" maxlength="${limits.emailLength}">
<label for="email-password">Password</label><input id="email-password" name="password" type="password" required autocomplete="current-password" maxlength="${limits.password.maxLength}">
<small>A link goes to the new address; it changes when you open it. ${o.email} is told.</small><br>
<button type="submit">Change email</button></form></section>

<section class="card" aria-labelledby="where"><h2 id="where">Where you are signed in</h2>
<ul class="logins">${logins}</ul>
<form method="post" action="/_/account/sessions/end-all"><button class="secondary" type="submit">Sign out everywhere</button></form></section>
${o.agents ? agentsSection(o.agents) : ''}

${connectedAgentsSection(o.connected ?? [])}

<section class="card" aria-labelledby="export"><h2 id="export">Export and import</h2>
<p>Everything you have, as one zip: documents as they are stored, uploads byte for byte, and a manifest (paths, checksums, visibility, apps).</p>
<form method="get" action="/_/account/export"><label><input type="checkbox" name="versions" value="1"> Include every version of every document (an import brings them along)</label>
<button type="submit">Download the zip</button></form>
<form method="post" action="/_/account/import" enctype="multipart/form-data" id="import-form">
<label for="import-zip">Import a zip</label><input id="import-zip" name="file" type="file" accept=".zip,application/zip" required>
<small>A Kiln export, or any zip of HTML files and assets (a Hyperclay Local folder, say). Nothing is imported if any name is already taken (a starter page you never saved gives way, into the trash).</small>
<label for="import-folder">Into folder <small>(optional; made if missing)</small></label><input id="import-folder" name="folder" placeholder="top level" maxlength="${limits.pathLength}" autocomplete="off">
<progress id="import-progress" max="100" hidden aria-label="Import progress" style="width:100%"></progress>
<div id="import-msg" role="status" aria-live="polite"></div>
<button type="submit">Import</button></form></section>

<section class="card danger-zone" aria-labelledby="delete"><h2 id="delete">Delete the account</h2>
<p>Deletes every document, upload, version, sync key, share link and custom domain of <strong>${o.username}</strong>, for good.
Export first if you want to keep anything. The username stays unavailable for 90 days.</p>
<form method="post" action="/_/account/delete">
<label for="confirm-username">Type your username to confirm</label><input id="confirm-username" name="confirm" required autocomplete="off" maxlength="${limits.usernameLength.max}">
<label for="delete-password">Password</label><input id="delete-password" name="password" type="password" required autocomplete="current-password" maxlength="${limits.password.maxLength}">
<label><input type="checkbox" name="exportFirst" value="1" checked> Export everything first (with every version) and mail me the link</label>
<button class="danger secondary" type="submit">Delete my account</button></form></section>`,
    scripts: html`<script>${raw(IMPORT_SCRIPT)}${raw(AGENTS_SCRIPT)}</script>`,
  });
}

export function resetRequestPage(o: { msg?: Msg; username?: string }): string {
  return page({
    title: 'Reset your password',
    username: o.username,
    msg: o.msg,
    body: html`<h1>Reset your password</h1>
<form class="card" method="post" action="/_/reset">
<label for="email">Email</label><input id="email" name="email" type="email" required autocomplete="email" maxlength="${limits.emailLength}" autofocus>
<small>If an account uses this address, a link to choose a new password is on its way (valid for an hour).</small><br>
<button type="submit">Send the link</button></form>
<p><a href="/_/login">Back to sign in</a></p>`,
  });
}

export function resetPage(o: { token: string; valid: boolean; msg?: Msg }): string {
  return page({
    title: 'Choose a new password',
    msg: o.msg,
    body: o.valid
      ? html`<h1>Choose a new password</h1>
<form class="card" method="post" action="/_/reset/${o.token}">
<label for="password">New password</label><input id="password" name="password" type="password" required minlength="${limits.password.minLength}" maxlength="${limits.password.maxLength}" autocomplete="new-password" autofocus>
<small>Every browser signed in to the account is signed out.</small><br>
<button type="submit">Set the password</button></form>`
      : html`<h1>This link does not work</h1><p>It was used already, or it expired (links last an hour).</p>
<p><a class="button" href="/_/reset">Ask for a new link</a></p>`,
  });
}

export function emailChangePage(o: { token: string; email?: string; error?: string }): string {
  return page({
    title: 'Confirm your new email',
    body: o.email
      ? html`<h1>Confirm your new email</h1><p>Make <strong>${o.email}</strong> the address of your Kiln account?</p>
<form class="card" method="post" action="/_/account/email/${o.token}"><button type="submit">Confirm</button></form>`
      : html`<h1>This link does not work</h1><div class="msg error" role="status">${o.error ?? ''}</div>
<p>Ask for a new one on your <a href="/_/account">account page</a>.</p>`,
  });
}

// The import form without a page load: a refusal keeps the chosen zip, and when a new folder would take
// it without a clash, one click imports it there (the form posts as usual without script).
const IMPORT_SCRIPT = `
(function(){
  var f=document.getElementById('import-form'),box=document.getElementById('import-msg');
  function say(msg,type,folder){
    box.className='msg '+(type==='error'?'error':'success');box.textContent=msg;
    if(folder){var b=document.createElement('button');b.type='button';b.className='secondary';
      b.textContent='Import into the folder "'+folder+'"';
      b.onclick=function(){f.folder.value=folder;send();};box.append(document.createElement('br'),b);}
  }
  // XMLHttpRequest rather than fetch: its upload reports progress, shown on the bar while the zip goes up;
  // then the bar runs without a value while Kiln unpacks and writes it.
  function send(){
    var bar=document.getElementById('import-progress'),go=f.querySelector('button[type=submit]'),x=new XMLHttpRequest();
    bar.hidden=false;bar.value=0;go.disabled=true;say('Sending the zip…','success');
    x.open('POST',f.action);x.setRequestHeader('Accept','application/json');
    x.upload.onprogress=function(e){if(!e.lengthComputable)return;var p=Math.round(e.loaded/e.total*100);
      bar.value=p;box.textContent='Sending the zip: '+p+' %';};
    x.upload.onload=function(){bar.removeAttribute('value');say('Sent. Importing: checking, then writing every file…','success');};
    x.onload=function(){
      var d;try{d=JSON.parse(x.responseText);}catch(e){d={msg:'HTTP '+x.status,msgType:'error'};}
      bar.hidden=true;go.disabled=false;
      if(x.status>=200&&x.status<300){say(d.msg,'success');location.href=d.next||'/_/dashboard';return;}
      say(d.msg,'error',d.intoFolder);
    };
    x.onerror=function(){bar.hidden=true;go.disabled=false;say('Could not reach the server. Nothing was imported.','error');};
    x.send(new FormData(f));
  }
  f.addEventListener('submit',function(e){e.preventDefault();send();});
})();
`;
