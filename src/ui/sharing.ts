// The sharing page of one document: turn sharing on or off, regenerate the link; whether other sites may
// show it in a frame. Plain forms, no script.
import { html, raw } from './html.ts';
import { page } from './pages.ts';

export interface SharingView {
  username: string;
  nodeId: number;
  name: string;
  shareEnabled: boolean;
  /** Other sites may show the document in a frame (else `frame-ancestors 'self'`). */
  framingAllowed: boolean;
  /** A link made by this request: shown once (only a hash of its token is kept). */
  shareUrl?: string;
  msg?: { text: string; type: string };
}

const STYLE = `
.newlink{background:#fffbeb;border:1px solid #f59e0b;border-radius:10px;padding:1rem 1.25rem;margin:1rem 0}
.newlink input{font-family:ui-monospace,monospace;margin:.5rem 0}.row{display:flex;gap:.75rem;flex-wrap:wrap;align-items:center}
.row form{margin:0}.state{font-weight:600}.state.on{color:#065f46}.state.off{color:var(--muted)}
section.framing{margin-top:var(--s5);padding-top:var(--s2);border-top:1px solid var(--line)}section.framing h2{margin-top:var(--s4)}
`;

export function sharingPage(v: SharingView): string {
  const base = `/_/dashboard/nodes/${v.nodeId}/sharing`;
  return page({
    title: `Share ${v.name}`,
    username: v.username,
    msg: v.msg,
    body: html`<h1>Share "${v.name}"</h1>
<p class="muted">Whoever opens the share link may view this document (even when it is private), save it and follow its
live edits, until you turn sharing off or make a new link. They cannot open the code editor or see versions.</p>
<p>Sharing is <span class="state ${v.shareEnabled ? 'on' : 'off'}" id="share-state">${v.shareEnabled ? 'on' : 'off'}</span>.</p>
${
  v.shareUrl
    ? html`<div class="newlink" role="status"><strong>The share link</strong> — copy it now; it is shown only once.
<label class="visually-hidden" for="share-url">The share link</label><input id="share-url" readonly value="${v.shareUrl}" onfocus="this.select()"><small>Lost it? Make a new link: the old one stops working.</small></div>`
    : ''
}
<div class="row">
<form method="post" action="${base}"><input type="hidden" name="enabled" value="${v.shareEnabled ? 'false' : 'true'}">
<button type="submit"${v.shareEnabled ? raw(' class="secondary"') : ''}>${v.shareEnabled ? 'Turn sharing off' : 'Turn sharing on'}</button></form>
${
  v.shareEnabled
    ? html`<form method="post" action="${base}/regenerate" onsubmit="return confirm('Make a new link? The current link stops working at once.')">
<button class="secondary" type="submit">Make a new link</button></form>`
    : ''
}
</div>
<section class="framing" aria-labelledby="framing-h"><h2 id="framing-h">Frames on other sites</h2>
<p class="muted">Pages on other sites (other accounts' hosts too) may show this document inside a frame unless you forbid
it here. In such a frame it shows as every visitor sees it, and never opens in edit mode for you, even while you are
signed in. Your own pages may always frame it.</p>
<p id="framing-state">${
      v.framingAllowed
        ? html`<span class="state on">Other sites may show it in a frame.</span>`
        : html`<span class="state off">Only your own pages may show it in a frame.</span>`
    }</p>
<form method="post" action="/_/dashboard/nodes/${v.nodeId}/framing"><input type="hidden" name="allowed" value="${v.framingAllowed ? 'false' : 'true'}">
<button class="secondary" type="submit">${v.framingAllowed ? 'Forbid framing by other sites' : 'Let other sites frame it'}</button></form>
</section>
<p><a href="/_/dashboard">Back to the dashboard</a></p>`,
    scripts: html`<style>${raw(STYLE)}</style>`,
  });
}
