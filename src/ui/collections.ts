// A collection's info page: its id, submit token and addresses, and the API in brief (README, Collections).
import { html } from './html.ts';
import { page, type Msg } from './pages.ts';
import { limits } from '../limits.ts';
import { formatSize } from '../core/size.ts';
import type { CollectionLimits } from '../collections/collections.ts';

const MB = 1024 * 1024;
const megabytes = (n: number) => Math.round((n / MB) * 10) / 10;
const percent = (used: number, max: number) => Math.min(100, Math.round((used / max) * 100));

const STYLE = html`<style>
.usage{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:var(--s3);margin:var(--s3) 0}
.usage meter{width:100%}
form.limits{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:var(--s3);align-items:end}
form.limits label{display:block}form.limits input{width:100%}
</style>`;

export function collectionPage(o: {
  username: string;
  name: string;
  id: string;
  submitToken: string;
  formUrl: string;
  dashboardUrl: string;
  recordsUrl: string;
  folderId: number;
  limits: CollectionLimits;
  usage: { records: number; bytes: number };
  msg?: Msg;
}): string {
  const l = o.limits;
  const b = limits.collection;
  return page({
    title: `Collection ${o.name}`,
    username: o.username,
    msg: o.msg,
    body: html`${STYLE}<h1>Collection “${o.name}”</h1>
<p class="muted">Submissions arrive as JSON files in <code>${o.name}/records/</code>: they sync to Hyperclay Local like any file. <a href="/_/dashboard">Back to the documents</a></p>
<dl>
<dt>Public form</dt><dd><a href="${o.formUrl}" target="_blank" rel="noopener">${o.formUrl}</a></dd>
<dt>Dashboard (only you)</dt><dd><a href="${o.dashboardUrl}" target="_blank" rel="noopener">${o.dashboardUrl}</a></dd>
<dt>Collection ID</dt><dd><code>${o.id}</code> (stays the same when the folder is renamed or moved)</dd>
<dt>Submit token</dt><dd><code>${o.submitToken}</code> (what a form sends to add a record; it is in your form page)</dd>
<dt>Records</dt><dd>Private: only you read <code>${o.name}/records/</code>; each submitter reads and changes only its own record, with the edit token it got.</dd>
</dl>
<h2 id="limits">Limits</h2>
<p class="muted">What anonymous visitors may store here, counted against your account. A submission past a limit is refused before anything is stored.</p>
<div class="usage">
<div><label for="use-records">Records: ${o.usage.records.toLocaleString('en')} of ${l.maxRecords.toLocaleString('en')}</label>
<meter id="use-records" min="0" max="100" value="${percent(o.usage.records, l.maxRecords)}">${percent(o.usage.records, l.maxRecords)}%</meter></div>
<div><label for="use-bytes">Storage: ${formatSize(o.usage.bytes)} of ${formatSize(l.maxBytes)}</label>
<meter id="use-bytes" min="0" max="100" value="${percent(o.usage.bytes, l.maxBytes)}">${percent(o.usage.bytes, l.maxBytes)}%</meter></div>
</div>
<form class="limits" method="post" action="/_/dashboard/nodes/${o.folderId}/collection/limits">
<div><label for="max-records">Most records</label><input id="max-records" name="maxRecords" type="number" min="1" max="${b.records.max}" step="1" required value="${l.maxRecords}"></div>
<div><label for="max-mb">Most storage (MB)</label><input id="max-mb" name="maxMegabytes" type="number" min="0.1" max="${b.bytes.max / MB}" step="0.1" required value="${megabytes(l.maxBytes)}"></div>
<div><label for="max-hour">Submissions per address an hour</label><input id="max-hour" name="maxPerAddressHour" type="number" min="1" max="${b.perAddressHour.max}" step="1" required value="${l.maxPerAddressHour}"></div>
<div><button type="submit">Save limits</button></div>
</form>
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
