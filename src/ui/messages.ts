// The inbox of contact messages sent from the account's pages.
import { html } from './html.ts';
import { page, type Msg } from './pages.ts';
import type { InboxMessage } from '../messages/messages.ts';

export function inboxPage(o: { username: string; unread: number; messages: InboxMessage[]; msg?: Msg }): string {
  const items = o.messages.map(
    (
      m,
    ) => html`<li class="card${m.read ? '' : ' unread'}"><p class="muted"><time datetime="${m.at}">${m.at.slice(0, 16).replace('T', ' ')} UTC</time>
· from ${m.page}${m.read ? '' : html` · <strong>new</strong>`}</p>
<dl>${Object.entries(m.fields).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
<form method="post" action="/_/dashboard/messages/${m.id}/delete" data-confirm="Delete this message?"><button class="secondary danger" type="submit">Delete</button></form></li>`,
  );
  return page({
    title: 'Messages',
    username: o.username,
    msg: o.msg,
    body: html`<style>ul.inbox{list-style:none;padding:0}ul.inbox li{margin-bottom:var(--s3)}li.unread{border-left:4px solid var(--accent)}
dl{display:grid;grid-template-columns:minmax(6rem,max-content) 1fr;gap:var(--s1) var(--s3)}dt{font-weight:600}dd{margin:0;white-space:pre-wrap}</style>
<h1>Messages</h1>
<p class="muted">What visitors send with your pages' contact forms (hyperclayjs <code>sendMessage</code>).
${o.messages.length ? html`<a href="/_/dashboard/messages.csv">Export as CSV</a>` : ''}</p>
${o.messages.length === 0 ? html`<p class="muted">No messages yet.</p>` : html`<ul class="inbox">${items}</ul>`}`,
    scripts: html`<script>document.addEventListener('submit',function(e){var f=e.target;if(f.dataset&&f.dataset.confirm&&!confirm(f.dataset.confirm))e.preventDefault();});</script>`,
  });
}
