// The code editor page. The document travels as JSON inside a script tag (escaped so it cannot close it),
// written straight from its stored bytes: the page is three Buffers, and the document is copied once.
import { html, raw } from './html.ts';
import { page } from './pages.ts';
import { jsonStringOfBytes } from '../core/json-bytes.ts';

/** Where the document goes: a comment no escaped text can make. */
const DOCUMENT = '<!--kiln-document-->';

export function editorPage(o: {
  name: string;
  bytes: Buffer;
  etag: string;
  documentUrl: string;
  username?: string;
  base?: string;
}): Buffer[] {
  const fields = JSON.stringify({ etag: o.etag, documentUrl: o.documentUrl, name: o.name }).replace(/</g, '\\u003c');
  const data = `${fields.slice(0, -1)},"content":${DOCUMENT}}`;
  const text = page({
    title: `Edit ${o.name}`,
    username: o.username,
    base: o.base,
    body: html`<style>
        main{max-width:none;margin:1rem}#kiln-editor{border:1px solid var(--line);background:#fff;height:calc(100vh - 170px);overflow:auto}
        #kiln-editor .cm-editor{height:100%}.bar{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin-bottom:.5rem}.bar>strong,.bar>a{white-space:nowrap}.bar button{margin:0}
        .status button{margin:0 .4rem 0 0;padding:.3rem .7rem}
        .status.error{color:#991b1b}.status.success{color:#065f46}
      </style>
      <div class="bar"><strong>${o.name}</strong><a href="${o.documentUrl}" target="_blank">Open</a>
        <button id="kiln-editor-save" type="button">Save (Ctrl+S)</button><span id="kiln-editor-status" class="status" role="status"></span></div>
      <div id="kiln-editor"></div>
      <script type="application/json" id="kiln-editor-data">${raw(data)}</script>`,
    scripts: html`<script type="module" src="/_/assets/editor.js"></script>`,
  });
  const at = text.indexOf(DOCUMENT);
  return [Buffer.from(text.slice(0, at)), jsonStringOfBytes(o.bytes), Buffer.from(text.slice(at + DOCUMENT.length))];
}
