// What a new document starts with: a self-saving page (hyperclayjs loaded from Kiln itself, so it works
// without a CDN) with regions its owner edits in place. `editmode:contenteditable` makes a region
// editable for the owner only, and hyperclayjs removes the attribute's effect before each save; Ctrl+S
// or a `trigger-save` button saves. Sections carry `data-edit-id`, the units hyperclayjs's AI editing
// (Ctrl+K, the hover 💬) works on; the notes starter's list is data (an `api` rules tag), so `/_/api` reads
// it and the data-clobber guard protects it from its first save. Pure: a template name and a document
// name in, bytes out.
import { escapeHtml } from '../ui/html.ts';

export const STARTERS = {
  blank: 'Blank self-saving page',
  notes: 'Notes and to-do list',
  site: 'Simple site page',
  app: 'Multi-tenant app starter',
  contact: 'Contact page (messages come to your inbox)',
} as const;
export type Starter = keyof typeof STARTERS;

/** hyperclayjs from Kiln itself: the standard preset, with `features` added (`ai-edit` when this Kiln has an
 *  engine, so Ctrl+K and the 💬 chip work on the page's `data-edit-id` sections from the start). */
function library(features: string[]): string {
  const extra = features.length ? `&amp;features=${features.join(',')}` : '';
  return `<script type="module" src="/_/hyperclayjs/src/hyperclay.js?preset=standard${extra}"></script>`;
}

// Owner-only controls stay hidden unless the page is in edit mode: the second style sheet is an
// `editmode:resource`, which hyperclayjs switches on in edit mode only (and keeps inert in saves).
const BASE_STYLE = `body{font:17px/1.6 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
[contenteditable]{outline:1px dashed #c2410c66;outline-offset:4px;border-radius:2px}
.owner-only{display:none}
button{font:inherit;padding:.4rem .9rem;border-radius:6px;border:1px solid #d0d7de;background:#fff;cursor:pointer}
button.save{background:#c2410c;color:#fff;border-color:#c2410c}
html[savestatus="saving"] button.save::after{content:" …"}`;

function frame(title: string, style: string, body: string, script: string): Buffer {
  return Buffer.from(`<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <style>
${BASE_STYLE}
${style}
  </style>
  <style editmode:resource type="inert/text/css">.owner-only{display:block}.visitor-only{display:none}</style>
  ${script}
</head>
<body>
<main>
${body}
</main>
  <p class="owner-only"><button class="save" trigger-save>Save</button> <small>or press Ctrl+S (⌘S). Click any dashed text to edit it.</small></p>
</body>
</html>
`);
}

/** The title a document name suggests: `my-notes.html` → `my notes`. */
function titleOf(name: string): string {
  return name
    .replace(/\.(html|htm|htmlclay)$/i, '')
    .replace(/[-_]+/g, ' ')
    .trim();
}

/** `aiEdit`: this Kiln has an AI engine (its starters load hyperclayjs's AI editing). */
export function starterDocument(starter: Starter, name: string, opts: { aiEdit?: boolean } = {}): Buffer {
  const title = escapeHtml(/^index\.html?$/i.test(name) ? 'My site' : titleOf(name) || 'Untitled');
  const ai = opts.aiEdit ? ['ai-edit'] : [];
  const standard = library(ai);
  switch (starter) {
    case 'blank':
      return frame(
        title,
        '',
        `  <h1 editmode:contenteditable>${title}</h1>
  <section data-edit-id="intro" editmode:contenteditable>
    <p>This page saves itself. Click this text, change it, and save: what you see is what your visitors get.</p>
  </section>`,
        standard,
      );
    case 'notes':
      return frame(
        title,
        `ul.todo{list-style:none;padding:0}ul.todo li{display:flex;gap:.6rem;align-items:baseline;padding:.3rem 0;border-bottom:1px solid #eaeef2}
ul.todo li span{flex:1}ul.todo input:checked+span{text-decoration:line-through;color:#6e7781}`,
        `  <h1 editmode:contenteditable>${title}</h1>
  <section data-edit-id="todo">
  <ul class="todo">
    <li><input type="checkbox" persist aria-label="Done"><span editmode:contenteditable>Write the first thing to do</span></li>
    <li><input type="checkbox" persist aria-label="Done"><span editmode:contenteditable>Tick a box, then save</span></li>
  </ul>
  <p class="owner-only"><button type="button" onclick="const li=this.closest('body').querySelector('ul.todo li').cloneNode(true);li.querySelector('input').checked=false;li.querySelector('input').removeAttribute('checked');li.querySelector('span').textContent='New item';this.closest('body').querySelector('ul.todo').append(li)">Add an item</button></p>
  </section>
  <section data-edit-id="notes">
  <h2 editmode:contenteditable>Notes</h2>
  <div id="notes" editmode:contenteditable>
    <p>Anything you type here is kept in this page.</p>
  </div>
  </section>
  <script type="application/json" data-rules-name="api" data-rules-version="1">
    {"title": "h1", "items": ["ul.todo li", {"text": "span", "done": "input@checked"}], "notes": "#notes"}
  </script>`,
        standard,
      );
    case 'site':
      return frame(
        title,
        `header{border-bottom:2px solid #c2410c;margin-bottom:1.5rem}header nav{display:flex;gap:1rem}
section{margin:2rem 0}footer{margin-top:3rem;color:#6e7781;font-size:.9rem}`,
        `  <header>
    <h1 editmode:contenteditable>${title}</h1>
    <nav><a href="#about">About</a><a href="#contact">Contact</a></nav>
  </header>
  <section id="about" data-edit-id="about">
    <h2 editmode:contenteditable>About</h2>
    <div editmode:contenteditable><p>Say who you are and what this site is for.</p></div>
  </section>
  <section id="contact" data-edit-id="contact">
    <h2 editmode:contenteditable>Contact</h2>
    <div editmode:contenteditable><p>Where people can reach you.</p></div>
  </section>
  <footer editmode:contenteditable>Made with Kiln.</footer>`,
        standard,
      );
    case 'contact':
      // The form posts what hyperclayjs's sendMessage would (its fields and the behaviour data the library
      // gathered: features added to the starters' preset below), but shows Kiln's own answer: a refusal's
      // words in an error toast (sendMessage shows "Request failed: 400" in a success-style one).
      // `website` is the honeypot a person never fills.
      return frame(
        title,
        `form label{display:block;margin:.8rem 0 .2rem}form input,form textarea{font:inherit;width:100%;padding:.4rem;border:1px solid #d0d7de;border-radius:6px;box-sizing:border-box}`,
        `  <h1 editmode:contenteditable>${title}</h1>
  <div editmode:contenteditable><p>Write to me here: every message comes to my inbox.</p></div>
  <form id="contact" onsubmit="event.preventDefault(); const form = this, data = Object.fromEntries(new FormData(form));
    data.behaviorData = hyperclay.behaviorCollector.getData();
    fetch('/_/message', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) })
      .then((r) => r.json().then((answer) => r.ok
        ? (hyperclay.toast('Thank you: your message was sent.', 'success'), form.reset())
        : hyperclay.toast(answer.msg, 'error')))
      .catch(() => hyperclay.toast('The message was not sent: try again in a moment.', 'error'))">
    <label for="contact-name">Your name</label><input id="contact-name" name="name" required autocomplete="name">
    <label for="contact-email">Your email</label><input id="contact-email" name="email" type="email" autocomplete="email">
    <label for="contact-message">Message</label><textarea id="contact-message" name="message" rows="5" required></textarea>
    <input name="website" tabindex="-1" autocomplete="off" aria-hidden="true" hidden>
    <p><button type="submit">Send</button></p>
  </form>`,
        library([...ai, 'send-message', 'behavior-collector']),
      );
    case 'app':
      // The developer's note shows in edit mode on the app itself only: the page asks Kiln what it is
      // (`/_/app/info`), and a copy (an app user's own page, editable by them) keeps the note hidden. The
      // mark that lets it show (as any owner-only part) is `save-remove`, so no save (and no copy) keeps
      // it. The sign-up link comes from Kiln too: on a copy, the app's own sign-up on the app's host.
      return frame(
        title,
        `.card{border:1px solid #d0d7de;border-radius:8px;padding:1rem;margin:1rem 0}
html:not(:has(meta[data-kiln-app-page])) .app-note{display:none!important}`,
        `  <h1 editmode:contenteditable>${title}</h1>
  <div class="card owner-only app-note" editmode:contenteditable>
    <p>This is an app starter (only you see this box). On the dashboard, choose <strong>Make it an app</strong>:
    every visitor who signs up gets their own copy of this page, which saves itself just like yours.</p>
  </div>
  <p class="card visitor-only"><a id="get-copy" href="/_/app/signup">Sign up to get your own copy of this page</a>: it saves itself, and only you can change it.</p>
  <script>(() => {
    const path = decodeURIComponent(location.pathname.slice(1)) || 'index.html';
    document.getElementById('get-copy').search = '?app=' + encodeURIComponent(path);
    fetch('/_/app/info?app=' + encodeURIComponent(path)).then((r) => r.ok ? r.json() : null).then((info) => {
      if (info?.signupUrl) document.getElementById('get-copy').href = info.signupUrl;
      if (!info || info.copy) return;
      const mark = document.createElement('meta');
      for (const a of ['save-remove', 'no-save', 'snapshot-remove', 'data-kiln-app-page']) mark.setAttribute(a, '');
      document.head.append(mark);
    });
  })();</script>
  <h2 editmode:contenteditable>My list</h2>
  <ul editmode:contenteditable>
    <li>Each copy keeps its own items.</li>
  </ul>`,
        standard,
      );
  }
}

export function isStarter(value: unknown): value is Starter {
  return typeof value === 'string' && Object.hasOwn(STARTERS, value);
}
