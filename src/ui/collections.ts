// A collection's info page: its id, submit token and addresses, and the API in brief (README, Collections).
import { html } from './html.ts';
import { page, type Msg } from './pages.ts';

export function collectionPage(o: {
  username: string;
  name: string;
  id: string;
  submitToken: string;
  formUrl: string;
  dashboardUrl: string;
  recordsUrl: string;
  msg?: Msg;
}): string {
  return page({
    title: `Collection ${o.name}`,
    username: o.username,
    msg: o.msg,
    body: html`<h1>Collection “${o.name}”</h1>
<p class="muted">Submissions arrive as JSON files in <code>${o.name}/records/</code>: they sync to Hyperclay Local like any file. <a href="/_/dashboard">Back to the documents</a></p>
<dl>
<dt>Public form</dt><dd><a href="${o.formUrl}" target="_blank" rel="noopener">${o.formUrl}</a></dd>
<dt>Dashboard (only you)</dt><dd><a href="${o.dashboardUrl}" target="_blank" rel="noopener">${o.dashboardUrl}</a></dd>
<dt>Collection ID</dt><dd><code>${o.id}</code> (stays the same when the folder is renamed or moved)</dd>
<dt>Submit token</dt><dd><code>${o.submitToken}</code> (what a form sends to add a record; it is in your form page)</dd>
</dl>
<h2>Build your own pages</h2>
<p>Send and read JSON on your own host:</p>
<ul>
<li><code>POST ${o.recordsUrl}</code> with <code>X-Submit-Token</code> and <code>{"data": …}</code>: adds a record (201, with its <code>id</code> and an <code>editToken</code>).</li>
<li><code>GET ${o.recordsUrl}?limit=&amp;offset=</code>: your records, newest first (signed in as you).</li>
<li><code>GET</code>, <code>PUT</code>, <code>DELETE ${o.recordsUrl}/&lt;id&gt;</code>: one record (you; its submitter reads and updates it with <code>X-Record-Token: &lt;editToken&gt;</code>).</li>
<li><code>GET /_/collection/${o.id}/events</code>: <code>collection-record</code> events as records arrive, change or go.</li>
</ul>`,
  });
}
