// The page frame shared by every server-rendered page, and Kiln's one stylesheet: a type scale, spacing,
// buttons, focus rings and colours with AA contrast; below 640 px the header's links fold into a menu,
// tables become stacked rows and form buttons take the full width, so no page scrolls sideways.
import { html, raw, type Html } from './html.ts';

const STYLE = `
:root{--fg:#1c1917;--muted:#57534e;--line:#e7e5e4;--accent:#b43d0a;--accent-bg:#fff7ed;--bg:#fafaf9;--card:#fff;
--ok:#065f46;--ok-bg:#ecfdf5;--bad:#991b1b;--bad-bg:#fef2f2;--focus:#1d4ed8;--r:8px;
--s1:.25rem;--s2:.5rem;--s3:.75rem;--s4:1rem;--s5:1.5rem;--s6:2rem}
*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
h1{font-size:1.75rem;line-height:1.2;margin:0 0 var(--s4)}h2{font-size:1.3rem;margin:var(--s6) 0 var(--s3)}h3{font-size:1.1rem}
a{color:var(--accent)}a:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px;border-radius:3px}
.skip{position:absolute;left:-999px}.skip:focus{left:var(--s2);top:var(--s2);background:#fff;padding:var(--s2);z-index:10}
header.site{display:flex;flex-wrap:wrap;gap:var(--s3);align-items:center;padding:var(--s3) var(--s5);border-bottom:1px solid var(--line);background:var(--card)}
header.site .brand{font-weight:800;font-size:1.15rem;color:var(--accent);text-decoration:none}
header.site nav{margin-left:auto;display:flex;flex-wrap:wrap;gap:var(--s4);align-items:center}
header.site nav a{text-decoration:none;color:var(--fg)}header.site nav a:hover{color:var(--accent)}
header.site nav form{margin:0}header .who{color:var(--muted)}
button.menu{display:none;margin:0 0 0 auto}
main{max-width:1040px;margin:var(--s6) auto;padding:0 var(--s5)}
.card,form.card{background:var(--card);border:1px solid var(--line);border-radius:var(--r);padding:var(--s5)}
form.card{max-width:420px}
label{display:block;margin:var(--s3) 0 var(--s1);font-weight:600}
input,select,textarea{width:100%;padding:.55rem .6rem;border:1px solid #a8a29e;border-radius:6px;font:inherit;background:#fff;color:var(--fg)}
input[type=checkbox],input[type=radio]{width:auto}
button,.button{display:inline-block;margin-top:var(--s4);padding:.5rem 1rem;border:1px solid var(--accent);border-radius:6px;
background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer;text-decoration:none;line-height:1.3}
button,.button,th,label{overflow-wrap:normal}button:hover,.button:hover{filter:brightness(.92)}button:disabled{opacity:.6;cursor:default}
button.secondary,.button.secondary{background:#fff;color:var(--fg);border-color:#a8a29e}
button.danger,.button.danger{color:var(--bad)}
button.link{background:none;border:0;color:var(--accent);padding:0;margin:0;font-weight:400;text-decoration:underline}
.msg{padding:var(--s3) var(--s4);border-radius:6px;margin-bottom:var(--s4)}.msg:empty{display:none}
.msg.success{background:var(--ok-bg);color:var(--ok)}.msg.error{background:var(--bad-bg);color:var(--bad)}
table{width:100%;border-collapse:collapse;background:var(--card)}th,td{text-align:left;padding:var(--s2) var(--s3);border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.85rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
td.num{text-align:right;color:var(--muted)}small,.muted{color:var(--muted)}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}pre{overflow:auto;max-width:100%}
footer.site{max-width:1040px;margin:var(--s6) auto;padding:0 var(--s5);color:var(--muted);font-size:.9rem}
@media (max-width:640px){
  header.site{padding:var(--s3) var(--s4)}
  html.js button.menu{display:inline-block}
  html.js header.site nav{display:none;width:100%;flex-direction:column;align-items:stretch;gap:var(--s2)}
  html.js header.site.open nav{display:flex}
  main{margin:var(--s5) auto;padding:0 var(--s4)}
  form.card{max-width:none}
  form button,form .button,.card .button{width:100%}
  table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}
  table.stack thead{display:none}table.stack tr{border-bottom:1px solid var(--line);padding:var(--s2) 0}
  table.stack td{border:0;padding:var(--s1) var(--s3)}table.stack td.num{text-align:left}
  table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}
}
`;

// The menu button of phones (the header is usable without script: the links then stay visible); times
// shown in the viewer's timezone; and forms that keep what was typed when the server sends them back
// with an error (values wait in this tab's sessionStorage, never passwords, never in a URL).
const HEAD_SCRIPT = `document.documentElement.classList.add('js');`;
const BODY_SCRIPT = `document.addEventListener('click',function(e){
var b=e.target.closest&&e.target.closest('button.menu');if(!b)return;var h=b.closest('header');
var open=h.classList.toggle('open');b.setAttribute('aria-expanded',String(open));});
document.querySelectorAll('time[datetime]').forEach(function(t){var d=new Date(t.getAttribute('datetime'));
if(!isNaN(d))t.textContent=d.toLocaleString(undefined,{dateStyle:'medium',timeStyle:'short'});});
(function(){var K='kiln-form:';function key(f){return K+f.getAttribute('action');}
document.addEventListener('submit',function(e){var f=e.target;if(!(f instanceof HTMLFormElement)||f.method!=='post')return;
var v={};Array.prototype.forEach.call(f.elements,function(el){if(el.name&&(el.type==='text'||el.type==='email'||el.type==='search'||el.tagName==='TEXTAREA'))v[el.name]=el.value;});
try{sessionStorage.setItem(key(f),JSON.stringify(v));}catch(x){}},true);
var failed=document.querySelector('main>.msg.error');
document.querySelectorAll('form[method=post]').forEach(function(f){var saved;try{saved=JSON.parse(sessionStorage.getItem(key(f))||'null');sessionStorage.removeItem(key(f));}catch(x){}
if(!failed||!saved)return;Object.keys(saved).forEach(function(n){var el=f.elements.namedItem(n);if(el&&'value'in el&&!el.value)el.value=saved[n];});});})();`;

/** A message shown at the top of a page (from a redirect's msg/msgType). */
export interface Msg {
  text: string;
  type: string;
}

export interface PageOpts {
  title: string;
  body: Html;
  /** Shown in the header when someone is signed in. */
  username?: string;
  msg?: Msg;
  scripts?: Html;
  /** The main app's address, for pages served on a document host (their header links lead there). */
  base?: string;
  /** What the header offers someone signed out: only sign in (default: most pages do not know whether this
   *  Kiln takes new accounts), sign in and sign up (pages that know sign-ups are open), or nothing (first-run
   *  setup, before any account exists). */
  signedOutLinks?: 'both' | 'sign-in' | 'none';
}

/** A small flame, inline: every page has an icon, so no browser asks for a missing /favicon.ico. */
const ICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path fill="#b45309" d="M8 1c1 3 5 5 5 9a5 5 0 0 1-10 0c0-2 1-3 2-4 0 2 1 3 2 3-1-3 0-6 1-8z"/></svg>')}`;

export function page(o: PageOpts): string {
  const b = o.base ?? '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${o.title} · Kiln</title><link rel="icon" href="${ICON}"><style>${raw(STYLE)}</style><script>${raw(HEAD_SCRIPT)}</script></head>
<body><a class="skip" href="#main">Skip to content</a><header class="site"><a class="brand" href="${b}/">Kiln</a>
<button class="menu secondary" type="button" aria-expanded="false" aria-controls="site-nav">Menu</button>
<nav id="site-nav" aria-label="Main">${
    o.username
      ? html`<a href="${b}/_/dashboard">Documents</a><a href="${b}/_/dashboard/keys">Sync keys</a><a href="${b}/_/dashboard/teams">Teams</a><a href="${b}/_/dashboard/domains">Domains</a><a href="${b}/_/billing">Billing</a><a class="who" href="${b}/_/account" title="Your account">${o.username}</a><form method="post" action="${b}/_/logout"><button class="link" type="submit">Sign out</button></form>`
      : o.signedOutLinks === 'none'
        ? ''
        : o.signedOutLinks === 'both'
          ? html`<a href="${b}/_/login">Sign in</a><a href="${b}/_/signup">Sign up</a>`
          : html`<a href="${b}/_/login">Sign in</a>`
  }</nav></header>
<main id="main">${o.msg ? html`<div class="msg ${o.msg.type === 'error' ? 'error' : 'success'}" role="status">${o.msg.text}</div>` : ''}${o.body}</main>
<script>${raw(BODY_SCRIPT)}</script>${o.scripts ?? ''}</body></html>`.value;
}

export function errorPage(status: number, msg: string, o: { username?: string; base?: string } = {}): string {
  const b = o.base ?? '';
  return page({
    title: `Error ${status}`,
    username: o.username,
    base: o.base,
    body: html`<h1>${status}</h1><p>${msg}</p><p><a href="${b}/">${o.username ? 'Back to your documents' : 'Home'}</a></p>`,
  });
}
