// Pages a multi-tenant app's visitors see on the app's host: sign up, sign in, password reset, email
// confirmation. Framed by the app's name, not by Kiln's developer navigation (a visitor of someone's
// app has no use for Kiln's dashboard or developer sign-up).
import { html, raw, type Html } from './html.ts';
import { limits } from '../limits.ts';

export type { Msg } from './pages.ts';
import { page, type Msg } from './pages.ts';

export interface AppRef {
  /** The app's file name, shown as its title (`todo.html`). */
  name: string;
  /** The app's path on its host (`todo.html`, `tools/todo.html`), carried in every form. */
  path: string;
}

const STYLE = `
:root{--fg:#1d1d1f;--muted:#6e6e73;--line:#e5e5ea;--accent:#c2410c;--bg:#fafaf9}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:420px;margin:3rem auto;padding:0 1.5rem}h1{font-size:1.5rem}
form{background:#fff;border:1px solid var(--line);border-radius:10px;padding:1.5rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}input{width:100%;padding:.5rem;border:1px solid var(--line);border-radius:6px;font:inherit}
button,.button{display:inline-block;margin-top:1rem;padding:.5rem 1rem;border:0;border-radius:6px;background:var(--accent);color:#fff;font:inherit;cursor:pointer;text-decoration:none}
.msg{padding:.6rem 1rem;border-radius:6px;margin-bottom:1rem}.msg.success{background:#ecfdf5;color:#065f46}.msg.error{background:#fef2f2;color:#991b1b}
small,.muted{color:var(--muted)}footer{margin-top:2rem;font-size:.85rem;color:var(--muted)}
`;

function frame(o: { title: string; app?: AppRef; msg?: Msg; body: Html }): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${o.title}${o.app ? ` · ${o.app.name}` : ''}</title><style>${raw(STYLE)}</style></head>
<body><main>
${o.msg ? html`<div class="msg ${o.msg.type === 'error' ? 'error' : 'success'}" role="status">${o.msg.text}</div>` : ''}${o.body}
<footer>${o.app ? html`<a href="${appHref(o.app)}">${o.app.name}</a> · ` : ''}hosted on Kiln</footer>
</main></body></html>`.value;
}

/** `/tools/todo.html`, each segment encoded. */
export function appHref(app: AppRef): string {
  return `/${app.path.split('/').map(encodeURIComponent).join('/')}`;
}

/** `/_/app/<page>?app=<path>` */
export function appPageUrl(page: string, app: AppRef): string {
  return `/_/app/${page}?app=${encodeURIComponent(app.path)}`;
}

const appField = (app: AppRef) => html`<input type="hidden" name="app" value="${app.path}">`;
const emailInput = (label: string, autocomplete: string, type = 'email') => html`<label for="email">${label}</label>
<input id="email" name="email" type="${type}" required maxlength="${limits.emailLength}" autocomplete="${autocomplete}" autofocus>`;
/** Developers sign in on the main app: this host runs the app owner's scripts. */
const developers = (mainLogin: string) =>
  html`<p class="muted">Have a Kiln developer account? Sign in on <a href="${mainLogin}">the main site</a>, never on an app’s page.</p>`;
const newPassword = () => html`<label for="password">Password</label>
<input id="password" name="password" type="password" required minlength="${limits.password.minLength}" maxlength="${limits.password.maxLength}" autocomplete="new-password">
<small>At least ${limits.password.minLength} characters, not a common password.</small>`;

export function appSignupPage(o: {
  app: AppRef;
  msg?: Msg;
  signedIn?: { username: string; instanceUrl?: string };
  mainLogin: string;
}): string {
  const already = o.signedIn?.instanceUrl
    ? html`<p class="muted">You are signed in as <strong>${o.signedIn.username}</strong>. <a href="${o.signedIn.instanceUrl}">Open your copy</a>.</p>`
    : '';
  return frame({
    title: 'Sign up',
    app: o.app,
    msg: o.msg,
    body: html`<h1>Get your own ${o.app.name}</h1>
<p class="muted">Sign up and you get your own copy of this app to keep and edit.</p>
${already}
<form method="post" action="/_/app/signup">
${appField(o.app)}
${emailInput('Email', 'email')}
${newPassword()}
<label for="username">Username <small>(optional)</small></label>
<input id="username" name="username" minlength="${limits.usernameLength.min}" maxlength="${limits.usernameLength.max}"
  pattern="[a-z0-9]+(-[a-z0-9]+)*" autocomplete="username" autocapitalize="none" spellcheck="false">
<small>Your copy lives at <code>&lt;username&gt;.</code>this service. Leave it empty to get one made up for you.</small>
<button type="submit">Sign up</button>
</form>
<p>Already signed up? <a href="${appPageUrl('login', o.app)}">Sign in</a></p>
${developers(o.mainLogin)}`,
  });
}

export function appLoginPage(o: { app: AppRef; msg?: Msg; mainLogin: string }): string {
  return frame({
    title: 'Sign in',
    app: o.app,
    msg: o.msg,
    body: html`<h1>Sign in to ${o.app.name}</h1>
<form method="post" action="/_/app/login">
${appField(o.app)}
${emailInput('Email or username', 'username', 'text')}
<label for="password">Password</label>
<input id="password" name="password" type="password" required maxlength="${limits.password.maxLength}" autocomplete="current-password">
<button type="submit">Sign in</button>
</form>
<p><a href="${appPageUrl('reset', o.app)}">Forgot your password?</a> · <a href="${appPageUrl('signup', o.app)}">Sign up</a></p>
${developers(o.mainLogin)}`,
  });
}

export function appResetRequestPage(o: { app: AppRef; msg?: Msg; mainLogin: string }): string {
  return frame({
    title: 'Reset your password',
    app: o.app,
    msg: o.msg,
    body: html`<h1>Reset your password</h1>
<form method="post" action="/_/app/reset">
${appField(o.app)}
${emailInput('Email', 'email')}
<button type="submit">Send me a link</button>
</form>
<p><a href="${appPageUrl('login', o.app)}">Back to sign in</a></p>
${developers(o.mainLogin)}`,
  });
}

export function appResetPage(o: { app?: AppRef; token: string; msg?: Msg }): string {
  return frame({
    title: 'Choose a new password',
    app: o.app,
    msg: o.msg,
    body: html`<h1>Choose a new password</h1>
<form method="post" action="/_/app/reset/${encodeURIComponent(o.token)}">
${o.app ? appField(o.app) : ''}
${newPassword()}
<button type="submit">Set password</button>
</form>`,
  });
}

/** A page that says one thing and offers one link. */
export function appNoticePage(o: {
  title: string;
  text: string;
  app?: AppRef;
  link?: { href: string; label: string };
  msg?: Msg;
}): string {
  return frame({
    title: o.title,
    app: o.app,
    msg: o.msg,
    body: html`<h1>${o.title}</h1><p>${o.text}</p>${o.link ? html`<p><a class="button" href="${o.link.href}">${o.link.label}</a></p>` : ''}`,
  });
}

/** Who signed up on an app (its owner's view): email confirmed or not, when, their copy; disable one. */
export function signupsPage(o: {
  username: string;
  app: { id: number; name: string };
  users: Array<{
    id: number;
    username: string;
    email: string;
    emailConfirmed: boolean;
    createdAt: string;
    instance: string | null;
    disabled: boolean;
  }>;
  signupUrl: string;
  msg?: Msg;
}): string {
  const rows = o.users.map(
    (u) => html`<tr><td data-label="Person"><strong>${u.username}</strong><br><small>${u.email}</small></td>
<td data-label="Email">${u.emailConfirmed ? 'confirmed' : 'not confirmed yet'}</td>
<td data-label="Signed up"><time datetime="${u.createdAt}">${u.createdAt.slice(0, 16).replace('T', ' ')} UTC</time></td>
<td data-label="Copy">${u.instance ?? '—'}</td>
<td><form method="post" action="/_/dashboard/nodes/${o.app.id}/signups/${u.id}/disable"><input type="hidden" name="disabled" value="${u.disabled ? '0' : '1'}">
<button class="secondary${u.disabled ? '' : ' danger'}" type="submit">${u.disabled ? 'Enable' : 'Disable'}</button></form></td></tr>`,
  );
  return page({
    title: `Sign-ups of ${o.app.name}`,
    username: o.username,
    msg: o.msg,
    body: html`<h1>Sign-ups of ${o.app.name}</h1>
<p class="muted">Visitors sign up at <a href="${o.signupUrl}">${o.signupUrl}</a> and get their own copy. <a href="/_/dashboard">Back to the documents</a></p>
${
  o.users.length === 0
    ? html`<p class="muted">Nobody has signed up yet.</p>`
    : html`<table class="stack"><thead><tr><th>Person</th><th>Email</th><th>Signed up</th><th>Copy</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
}`,
  });
}
