// The two documents a new collection starts with (written into the owner's tree, not pages Kiln renders).
// swap them out or write others against the same API (README, Collections). The form sends every
// named field of itself as one record; the dashboard lists records and follows them live.
import { escapeHtml } from '../ui/html.ts';
import { csvCell } from '../core/csv.ts';

const STYLE = `:root{color-scheme:light;--ink:#1c1917;--soft:#57534e;--line:#e7e5e4;--accent:#0f766e}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:var(--ink);background:#fafaf9}
main{max-width:44rem;margin:0 auto;padding:2rem 1rem}h1{font-size:1.6rem;margin:0 0 .25rem}p{color:var(--soft)}
label{display:block;font-weight:600;margin:1rem 0 .25rem}input,textarea{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #a8a29e;border-radius:8px;background:#fff}
button,.button{display:inline-block;font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:8px;padding:.6rem 1.1rem;margin-top:1rem;cursor:pointer;text-decoration:none}
button:disabled{opacity:.6}button.quiet{background:#e7e5e4;color:var(--ink);margin:0;padding:.35rem .7rem}
:focus-visible{outline:3px solid #93c5fd;outline-offset:2px}[role=status]{min-height:1.5em;font-weight:600}
.error{color:#b91c1c}.ok{color:var(--accent)}`;

/** The public form. Its script posts `{data: {<field>: <value>, …}}` with the submit token. */
export function submissionFormPage(collectionId: string, submitToken: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Get in touch</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Get in touch</h1>
<p>Fill this in and it reaches us straight away.</p>
<form id="submission" data-collection="${escapeHtml(collectionId)}" data-token="${escapeHtml(submitToken)}">
<label for="f-name">Name</label><input id="f-name" name="name" autocomplete="name" required>
<label for="f-email">Email</label><input id="f-email" name="email" type="email" autocomplete="email">
<label for="f-message">Message</label><textarea id="f-message" name="message" rows="5" required></textarea>
<button type="submit">Send</button>
<p id="status" role="status" aria-live="polite"></p>
</form>
</main>
<script>
(() => {
  const form = document.getElementById('submission');
  const status = document.getElementById('status');
  const button = form.querySelector('button');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    status.className = '';
    status.textContent = 'Sending…';
    try {
      const res = await fetch('/_/collection/' + form.dataset.collection + '/records', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Submit-Token': form.dataset.token },
        body: JSON.stringify({ data: Object.fromEntries(new FormData(form)) }),
      });
      const answer = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(answer.msg || 'Not sent (' + res.status + ').');
      form.reset();
      status.className = 'ok';
      status.textContent = 'Thank you: your submission was received.';
    } catch (err) {
      status.className = 'error';
      status.textContent = err.message + ' Please try again.';
    } finally {
      button.disabled = false;
    }
  });
})();
</script>
</body>
</html>
`;
}

/** The owner's dashboard: the records as a table, kept current by the collection's event stream. */
export function dashboardPage(collectionId: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Submissions</title>
<style>${STYLE}
main{max-width:64rem}.bar{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}.bar button,.bar .button{margin:0}
.table{overflow-x:auto;margin-top:1rem;border:1px solid var(--line);border-radius:10px;background:#fff}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.55rem .7rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.85rem;color:var(--soft)}td{white-space:pre-wrap;word-break:break-word}tr.new{background:#ecfdf5}
@media (max-width:40rem){thead{display:none}tr{display:block;border-bottom:1px solid var(--line)}td{display:block;border:0;padding:.25rem .7rem}
td::before{content:attr(data-label);display:block;font-size:.8rem;color:var(--soft)}}</style>
</head>
<body>
<main data-collection="${escapeHtml(collectionId)}">
<h1>Submissions</h1>
<p id="live" role="status" aria-live="polite">Connecting…</p>
<div class="bar"><a class="button" href="submission-form.html">Open the form</a><button type="button" id="csv" class="quiet">Download CSV</button><span id="count"></span></div>
<div class="table" save-remove><table id="records"><thead><tr></tr></thead><tbody></tbody></table></div>
<p id="empty" hidden>No submissions yet. Share the form, and they appear here as they arrive.</p>
</main>
<script>
(() => {
  const id = document.querySelector('main').dataset.collection;
  const base = '/_/collection/' + id + '/records';
  const live = document.getElementById('live');
  const records = new Map();
  let fresh = new Set();
  const text = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  // The CSV download's cells: formula triggers neutralised (src/core/csv.ts, the same rule as the inbox).
  const csvCell = ${csvCell};
  const fieldsOf = (data) => (data && typeof data === 'object' && !Array.isArray(data) ? data : { value: data });
  function columns() {
    const cols = [];
    for (const r of records.values()) for (const k of Object.keys(fieldsOf(r.data))) if (!cols.includes(k)) cols.push(k);
    return cols;
  }
  function sorted() {
    return [...records.values()].sort((a, b) => (a.modifiedAt < b.modifiedAt ? 1 : a.modifiedAt > b.modifiedAt ? -1 : 0));
  }
  function render() {
    const cols = columns();
    const head = document.querySelector('#records thead tr');
    head.replaceChildren(...['Received', ...cols, ''].map((c) => Object.assign(document.createElement('th'), { textContent: c })));
    const body = document.querySelector('#records tbody');
    body.replaceChildren(...sorted().map((r) => {
      const tr = document.createElement('tr');
      tr.dataset.id = r.id;
      if (fresh.has(r.id)) tr.className = 'new';
      const cell = (label, value) => {
        const td = document.createElement('td');
        td.textContent = value;
        td.dataset.label = label;
        return td;
      };
      tr.append(cell('Received', new Date(r.modifiedAt).toLocaleString()));
      for (const c of cols) tr.append(cell(c, text(fieldsOf(r.data)[c])));
      const del = document.createElement('button');
      del.type = 'button';
      del.className = 'quiet';
      del.textContent = 'Delete';
      del.setAttribute('aria-label', 'Delete submission ' + r.id);
      del.addEventListener('click', () => remove(r.id));
      const last = document.createElement('td');
      last.append(del);
      tr.append(last);
      return tr;
    }));
    document.getElementById('count').textContent = records.size + (records.size === 1 ? ' submission' : ' submissions');
    document.getElementById('empty').hidden = records.size > 0;
  }
  async function remove(key) {
    if (!confirm('Delete this submission? It goes to the trash for 30 days.')) return;
    const res = await fetch(base + '/' + encodeURIComponent(key), { method: 'DELETE' });
    live.textContent = res.ok ? 'Submission deleted.' : 'Could not delete it (' + res.status + ').';
    if (res.ok) { records.delete(key); render(); }
  }
  async function fetchOne(key) {
    const res = await fetch(base + '/' + encodeURIComponent(key));
    if (res.ok) { const r = await res.json(); records.set(r.id, r); render(); }
  }
  const refused = 'Sign in as this collection’s owner to see its submissions.';
  async function load() {
    const res = await fetch(base + '?limit=100');
    if (!res.ok) { live.textContent = refused; return; }
    for (const r of (await res.json()).records) if (!records.has(r.id)) records.set(r.id, r);
    render();
  }
  // The stream first, then the list: a record that arrives in between is in one or the other.
  function follow() {
    const events = new EventSource('/_/collection/' + id + '/events');
    let loaded = false;
    events.onopen = () => {
      live.textContent = 'Live: new submissions appear here as they arrive.';
      if (!loaded) { loaded = true; load(); }
    };
    events.onerror = () => { live.textContent = events.readyState === EventSource.CLOSED ? refused : 'Reconnecting…'; };
    events.addEventListener('collection-record', (e) => {
      const f = JSON.parse(e.data);
      if (f.op === 'delete') { records.delete(f.id); render(); return; }
      fresh.add(f.id);
      if ('data' in f) { records.set(f.id, { id: f.id, data: f.data, modifiedAt: f.modifiedAt }); render(); }
      else fetchOne(f.id);
      live.textContent = 'New submission received.';
    });
  }
  document.getElementById('csv').addEventListener('click', () => {
    const cols = columns();
    const row = (cells) => cells.map((v) => csvCell(text(v))).join(',');
    const lines = [row(['id', 'received', ...cols])];
    for (const r of sorted()) lines.push(row([r.id, r.modifiedAt, ...cols.map((c) => fieldsOf(r.data)[c])]));
    const a = Object.assign(document.createElement('a'), {
      href: URL.createObjectURL(new Blob([lines.join('\\r\\n')], { type: 'text/csv' })),
      download: 'submissions.csv',
    });
    a.click();
    live.textContent = 'CSV downloaded.';
  });
  follow();
})();
</script>
</body>
</html>
`;
}
