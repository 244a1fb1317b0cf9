// The owner's toolbar (src/ui/toolbar.ts adds its tag at serve time). It lives in a shadow root on
// an element marked no-save, so neither its markup nor its styles reach a saved page.
(() => {
  const me = document.currentScript;
  if (!me) return;
  const q = new URL(me.src).searchParams;
  const path = q.get('path') || '';
  const main = q.get('main') || '';
  // An app user's own copy: app users may not edit code and have no dashboard.
  const appUser = q.get('app') === '1';
  const html = document.documentElement;
  const host = document.createElement('kiln-toolbar');
  for (const a of ['no-save', 'save-remove', 'snapshot-remove']) host.setAttribute(a, '');
  const root = host.attachShadow({ mode: 'open' });
  const enc = encodeURIComponent(path);
  // The owner cookie Kiln sets on every load for whoever may save: set means the email got confirmed since
  // this page was stored in the browser's cache (a revalidation answers 304 and keeps the old tag).
  const mayEdit = /(^|;\s*)isAdminOfCurrentResource=/.test(document.cookie);
  const confirm = mayEdit ? null : q.get('confirm');
  if (confirm) {
    // An app user's own copy before their email is confirmed: why it cannot be edited yet, and the way on.
    const esc = (t) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    root.innerHTML = `<style>
:host{all:initial}.bar{position:fixed;left:12px;right:12px;bottom:12px;z-index:2147483600;display:flex;gap:8px;align-items:center;
flex-wrap:wrap;padding:10px 12px;border-radius:10px;background:#1c1917;color:#fafaf9;font:500 14px/1.4 system-ui,sans-serif;box-shadow:0 4px 18px #0004}
button{color:#1c1917;background:#fde68a;border:0;border-radius:6px;padding:6px 10px;font:inherit;cursor:pointer}
button:focus-visible{outline:3px solid #93c5fd;outline-offset:1px}form{margin:0}
</style><div class="bar" role="status"><span>This copy is yours. Confirm your email to edit it: we sent a link to <strong>${esc(confirm)}</strong>.</span>
<form method="post" action="/_/app/confirm"><button type="submit">Send the link again</button></form></div>`;
    const mountNotice = () => html.appendChild(host);
    if (document.body) mountNotice();
    else document.addEventListener('DOMContentLoaded', mountNotice);
    return;
  }
  root.innerHTML = `<style>
:host{all:initial}
.bar{position:fixed;right:12px;bottom:12px;z-index:2147483600;display:flex;gap:6px;align-items:center;flex-wrap:wrap;
max-width:calc(100vw - 24px);padding:6px 8px;border-radius:10px;background:#1c1917;color:#fafaf9;
font:500 13px/1.2 system-ui,sans-serif;box-shadow:0 4px 18px #0004}
a,button{color:#fafaf9;background:#44403c;border:0;border-radius:6px;padding:6px 9px;font:inherit;text-decoration:none;cursor:pointer}
a:hover,button:hover{background:#57534e}a:focus-visible,button:focus-visible{outline:3px solid #93c5fd;outline-offset:1px}
.state{padding:0 4px;min-width:4.5em}.state.error{color:#fca5a5}.state.saved{color:#86efac}
.bar.min>:not(.show){display:none}.show{display:none}.bar.min .show{display:inline-block}
.bar.beside{right:68px;max-width:calc(100vw - 80px)}
.news{flex-basis:100%;padding:2px 4px;color:#fde68a;max-width:36em}.news[hidden],.act[hidden]{display:none}
.act{background:#fde68a;color:#1c1917}.act:hover{background:#fcd34d}
</style><div class="bar" role="toolbar" aria-label="Kiln owner toolbar">
<span class="news" role="alert" hidden></span><button class="act" type="button" hidden></button>
<a class="mode" href="#"></a><span class="state" role="status" aria-live="polite"></span>
${appUser ? '' : `<a href="/_/edit?path=${enc}">Code</a>`}<a href="/_/versions?path=${enc}">Versions</a>
${appUser ? '' : `<a href="${main}/_/dashboard">Dashboard</a>`}<button class="hide" type="button" aria-label="Hide the toolbar">×</button>
<button class="show" type="button" aria-label="Show the Kiln toolbar">Kiln</button></div>`;
  const bar = root.querySelector('.bar');
  const mode = root.querySelector('.mode');
  const state = root.querySelector('.state');
  const WORDS = { saving: 'Saving…', saved: 'Saved', error: 'Not saved', offline: 'Offline', dirty: 'Unsaved' };
  // hyperclayjs's own rule: ?editmode= wins, else the owner cookie Kiln sets for whoever may save.
  const asked = new URLSearchParams(location.search).get('editmode');
  const editing = asked ? asked === 'true' : mayEdit;
  function update() {
    const url = new URL(location.href);
    url.searchParams.set('editmode', editing ? 'false' : 'true');
    mode.href = url.pathname + url.search;
    mode.textContent = editing ? 'View as visitor' : 'Edit';
    const st = html.getAttribute('savestatus') || '';
    state.className = `state ${st}`;
    const selfSaving = 'hyperclay' in window || html.hasAttribute('savestatus');
    state.textContent = selfSaving ? WORDS[st] || (editing ? 'Editing' : 'Viewing') : 'Not self-saving';
  }
  addEventListener('load', update);
  new MutationObserver(update).observe(html, { attributes: true, attributeFilter: ['savestatus', 'editmode'] });
  root.querySelector('.hide').addEventListener('click', () => bar.classList.add('min'));
  root.querySelector('.show').addEventListener('click', () => bar.classList.remove('min'));
  update();
  // A change made elsewhere (an agent, a sync tool, the code editor, a restore): an editing tab does not take the
  // stored page in (its editing state would go), so Kiln tells it, and Reload shows the change (hyperclayjs's
  // unsaved-changes warning still guards typing not yet saved). A save from a tab that had not loaded such a change
  // undid it: Compare opens what it lost. hyperclayjs's live sync brings these notices as `hyperclay:notification`
  // events; in a tab without it, the `notices` lane does, as the same events (so the data-loss panel hears of an
  // outside write that destroyed data at once, too).
  const news = root.querySelector('.news');
  const act = root.querySelector('.act');
  let onAct = null;
  act.addEventListener('click', () => onAct?.());
  const tell = (msg, label, then) => {
    news.textContent = msg;
    act.textContent = label;
    onAct = then;
    news.hidden = act.hidden = false;
    bar.classList.remove('min');
  };
  document.addEventListener('hyperclay:notification', (e) => {
    const d = e.detail || {};
    if (d.action === 'reload') tell(d.msg || 'This page was changed elsewhere.', 'Reload', () => location.reload());
    const diff = d.data?.diff;
    if (d.action === 'stale-save' && typeof diff === 'string' && diff.startsWith('/_/version/'))
      tell(d.msg, 'Compare', () => location.assign(diff));
  });
  const hear = () => {
    if (window.hyperclayModules?.['live-sync']) return;
    // `since` the page this tab was served: a change made elsewhere before the lane opens is its first frame.
    const since = me.dataset.etag;
    const lane = `/_/sync?document-url=${encodeURIComponent(location.href)}&lane=notices${since ? `&since=${encodeURIComponent(since)}` : ''}`;
    const notices = new EventSource(lane);
    notices.onopen = () => host.setAttribute('data-notices', 'open');
    notices.onmessage = (m) => {
      let d = null;
      try {
        d = JSON.parse(m.data);
      } catch {}
      if (d?.type !== 'notification') return;
      const { msgType, msg, action, persistent, data } = d;
      document.dispatchEvent(
        new CustomEvent('hyperclay:notification', { detail: { msgType, msg, action, persistent, data } }),
      );
    };
  };
  // Once hyperclayjs has loaded its modules (`hyperclay.ready`), whether it has live sync is known.
  if (editing)
    addEventListener('load', () =>
      Promise.resolve(window.hyperclay?.ready)
        .catch(() => {})
        .then(hear),
    );
  // hyperclayjs's AI editing puts its whole-page 💬 bubble in the bottom-right corner: the bar stands beside it.
  const beside = () => bar.classList.toggle('beside', !!document.getElementById('hyper-edit-doc-bubble'));
  // hyperclayjs's own panels, as this Kiln has them (the owner's page only; never saved): the data-loss panel's
  // small grey text at 4.5:1 (its own greys fall short of it), and the AI panel's placeholder naming the
  // engines this Kiln has (from /_/meta) instead of the library's.
  const fixes = document.createElement('style');
  for (const a of ['no-save', 'save-remove', 'snapshot-remove', 'mutations-ignore']) fixes.setAttribute(a, '');
  fixes.textContent =
    'html .hcdl{--mirk-placeholder-color:light-dark(#6b5c45,#a4aac6);--mirk-sortable-label:light-dark(#6b5c45,#a4aac6);' +
    '--mirk-destructive:light-dark(#a3392a,#ff8a94)}html .hcdl .dg-now{opacity:1}';
  // Asked of /_/meta once, and only on a page whose AI panel exists (most owner page views have none).
  let engines = null;
  let metaAsked = false;
  const placeholder = () => {
    const box = document.querySelector('#hyper-edit-panel textarea');
    if (!box) return;
    if (engines) box.placeholder = `Describe the change… (@file.ext adds context; ${engines})`;
    if (metaAsked) return;
    metaAsked = true;
    fetch('/_/meta', { headers: { accept: 'application/json' } })
      .then((r) => r.json())
      .then((m) => {
        const list = m?.bus?.aiEdit?.engines ?? [];
        const named = list.map((e) => `@${e.name}${e.default ? ' (default)' : ''}`).join(', ');
        engines = named ? `engines: ${named}, or your own agent's` : 'answered by your own agent (kiln ai-edit serve)';
        placeholder();
      })
      .catch(() => {});
  };
  const mount = () => {
    html.appendChild(host);
    (document.head || html).appendChild(fixes);
    beside();
    placeholder();
    new MutationObserver(() => {
      beside();
      placeholder();
    }).observe(document.body, { childList: true });
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);
})();
