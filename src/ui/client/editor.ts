// Browser code of the code editor (bundled by esbuild into /_/assets/editor.js at install time).
// Reads the document from #kiln-editor-data, saves through POST /_/save with If-Match. Marks unsaved
// changes (status and tab title); listens on the document's saved lane, so a save made elsewhere is
// noticed at once; a newer version is never overwritten silently: the editor offers "Reload" or "Keep
// mine as a new version" (an explicit save over it; the other version stays in the history).
import { EditorView, basicSetup } from 'codemirror';
import { keymap } from '@codemirror/view';
import { html } from '@codemirror/lang-html';

interface EditorData {
  content: string;
  etag: string;
  documentUrl: string;
  name: string;
}

const data = JSON.parse(document.getElementById('kiln-editor-data')!.textContent!) as EditorData;
const status = document.getElementById('kiln-editor-status')!;
const saveButton = document.getElementById('kiln-editor-save') as HTMLButtonElement;
let etag = data.etag;
let saved = data.content;
/** The content of a save on its way (its own saved-lane frame is not news). */
let inFlight: string | null = null;
const title = document.title;

function say(text: string, kind: 'info' | 'success' | 'error') {
  status.textContent = text;
  status.className = `status ${kind}`;
}

function dirty(): boolean {
  return view.state.doc.toString() !== saved;
}

function markDirty() {
  document.title = dirty() ? `• ${title}` : title;
  if (dirty() && !status.classList.contains('error')) say('Unsaved changes.', 'info');
}

/** A newer version exists: say so, with the two ways on. */
function stale(why: string) {
  say(`${why} `, 'error');
  const reload = document.createElement('button');
  reload.type = 'button';
  reload.textContent = 'Reload';
  reload.addEventListener('click', () => location.reload());
  const keep = document.createElement('button');
  keep.type = 'button';
  keep.textContent = 'Keep mine as a new version';
  keep.addEventListener('click', async () => {
    // The newest version's ETag, then an ordinary conditional save on top of it.
    const head = await fetch(data.documentUrl, { method: 'HEAD', credentials: 'same-origin', cache: 'no-store' });
    const current = head.headers.get('etag')?.replace(/"/g, '');
    if (current) etag = current;
    saved = '\u0000'; // whatever is on screen is now a change to save
    await save();
  });
  status.append(reload, ' ', keep);
}

async function save() {
  const content = view.state.doc.toString();
  if (content === saved) return say('No changes to save.', 'info');
  saveButton.disabled = true;
  inFlight = content;
  say('Saving…', 'info');
  try {
    const res = await fetch('/_/save', {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'Content-Type': 'text/plain;charset=UTF-8',
        'Document-URL': data.documentUrl,
        'If-Match': `"${etag}"`,
        'X-Kiln-Editor': '1',
      },
      body: content,
    });
    const body = await res.json().catch(() => ({}) as Record<string, string>);
    if (res.ok) {
      etag = body.etag ?? etag;
      saved = content;
      say('Saved.', 'success');
      markDirty();
    } else if (res.status === 412) {
      const who =
        body.changedBy === 'another-tab'
          ? 'by you, in another tab or window'
          : body.changedBy === 'another-person'
            ? 'by someone else'
            : 'elsewhere';
      stale(`Not saved: this document was changed ${who} after you opened it.`);
    } else {
      say(`Not saved: ${body.msg ?? `HTTP ${res.status}`}`, 'error');
    }
  } catch {
    say('Not saved: the server did not answer. Check your connection and try again.', 'error');
  } finally {
    saveButton.disabled = false;
    inFlight = null;
  }
}

const view = new EditorView({
  doc: data.content,
  extensions: [
    basicSetup,
    html(),
    keymap.of([
      {
        key: 'Mod-s',
        preventDefault: true,
        run: () => {
          void save();
          return true;
        },
      },
    ]),
    EditorView.lineWrapping,
    // The current line is marked at its left edge, not tinted: the default token colours keep AA
    // contrast only on white (tag names #085 are 4.5:1 there).
    EditorView.theme({ '.cm-activeLine': { backgroundColor: 'transparent', boxShadow: 'inset 3px 0 0 #a8a29e' } }),
    EditorView.contentAttributes.of({ 'aria-label': `HTML of ${data.name}` }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) markDirty();
    }),
  ],
  parent: document.getElementById('kiln-editor')!,
});
// Keyboard users reach the scrolling area too.
view.scrollDOM.tabIndex = 0;
view.scrollDOM.setAttribute('aria-label', `Code of ${data.name}`);
saveButton.addEventListener('click', save);

// The saved lane: every accepted save of this document, from anywhere.
const lane = new EventSource(`/_/sync?document-url=${encodeURIComponent(data.documentUrl)}&lane=saved`);
lane.addEventListener('message', async (e) => {
  let frame: { html?: unknown };
  try {
    frame = JSON.parse(e.data);
  } catch {
    return;
  }
  if (typeof frame.html !== 'string' || frame.html === saved || frame.html === inFlight) return;
  // Our own save as stored (e.g. re-formatted by formathtml) has the ETag we hold: not news.
  const head = await fetch(data.documentUrl, { method: 'HEAD', credentials: 'same-origin', cache: 'no-store' });
  if (head.headers.get('etag') === `"${etag}"`) return;
  stale('A newer version of this document was saved elsewhere.');
});
window.addEventListener('beforeunload', (e) => {
  if (view.state.doc.toString() !== saved) e.preventDefault();
});
(window as unknown as { kilnEditor: EditorView }).kilnEditor = view;
