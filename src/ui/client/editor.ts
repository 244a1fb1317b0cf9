// Browser code of the code editor (bundled by esbuild into /_/assets/editor.js at install time).
// Reads the document from #kiln-editor-data, saves through POST /_/save with If-Match.
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

function say(text: string, kind: 'info' | 'success' | 'error') {
  status.textContent = text;
  status.className = `status ${kind}`;
}

async function save() {
  const content = view.state.doc.toString();
  if (content === saved) return say('No changes to save.', 'info');
  saveButton.disabled = true;
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
    } else if (res.status === 412) {
      const who =
        body.changedBy === 'another-tab'
          ? 'by you, in another tab or window'
          : body.changedBy === 'another-person'
            ? 'by someone else'
            : 'elsewhere';
      say(
        `Not saved: this document was changed ${who} after you opened it. Copy your changes, reload to get the latest version, and apply them again.`,
        'error',
      );
    } else {
      say(`Not saved: ${body.msg ?? `HTTP ${res.status}`}`, 'error');
    }
  } catch {
    say('Not saved: the server did not answer. Check your connection and try again.', 'error');
  } finally {
    saveButton.disabled = false;
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
  ],
  parent: document.getElementById('kiln-editor')!,
});
saveButton.addEventListener('click', save);
window.addEventListener('beforeunload', (e) => {
  if (view.state.doc.toString() !== saved) e.preventDefault();
});
(window as unknown as { kilnEditor: EditorView }).kilnEditor = view;
