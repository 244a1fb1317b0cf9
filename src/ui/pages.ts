// The page frame shared by every server-rendered page.
import { html, type Html } from './html.ts';

const STYLE = `
:root{--fg:#1d1d1f;--muted:#6e6e73;--line:#e5e5ea;--accent:#c2410c;--bg:#fafaf9}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;gap:1rem;align-items:center;padding:.75rem 1.5rem;border-bottom:1px solid var(--line);background:#fff}
header .brand{font-weight:700;color:var(--accent);text-decoration:none}header nav{margin-left:auto;display:flex;gap:1rem;align-items:center}
main{max-width:960px;margin:2rem auto;padding:0 1.5rem}
form.card{max-width:380px;background:#fff;border:1px solid var(--line);border-radius:10px;padding:1.5rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}input,select{width:100%;padding:.5rem;border:1px solid var(--line);border-radius:6px;font:inherit}
button,.button{display:inline-block;margin-top:1rem;padding:.5rem 1rem;border:0;border-radius:6px;background:var(--accent);color:#fff;font:inherit;cursor:pointer;text-decoration:none}
button.secondary{background:#e7e5e4;color:var(--fg)}button.link{background:none;color:var(--accent);padding:0;margin:0}
.msg{padding:.6rem 1rem;border-radius:6px;margin-bottom:1rem}.msg.success{background:#ecfdf5;color:#065f46}.msg.error{background:#fef2f2;color:#991b1b}
table{width:100%;border-collapse:collapse;background:#fff}th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line)}
td.num{text-align:right;color:var(--muted)}small,.muted{color:var(--muted)}
`;

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
}

export function page(o: PageOpts): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${o.title} · Kiln</title><style>${raw(STYLE)}</style></head>
<body><header><a class="brand" href="/">Kiln</a><nav>${
    o.username
      ? html`<a href="/_/dashboard">Dashboard</a><a href="/_/dashboard/keys">Sync keys</a><a href="/_/dashboard/teams">Teams</a><a href="/_/dashboard/domains">Domains</a><span class="muted">${o.username}</span><form method="post" action="/_/logout" style="margin:0"><button class="link" type="submit">Sign out</button></form>`
      : html`<a href="/_/login">Sign in</a><a href="/_/signup">Sign up</a>`
  }</nav></header>
<main>${o.msg ? html`<div class="msg ${o.msg.type === 'error' ? 'error' : 'success'}" role="status">${o.msg.text}</div>` : ''}${o.body}</main>
${o.scripts ?? ''}</body></html>`.value;
}

export function errorPage(status: number, msg: string): string {
  return page({ title: `Error ${status}`, body: html`<h1>${status}</h1><p>${msg}</p><p><a href="/">Home</a></p>` });
}

import { raw } from './html.ts';
