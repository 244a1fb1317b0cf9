// Server-rendered sign-in, sign-up, sign-out, first-run setup and landing pages.
import { html } from './html.ts';
import { page } from './pages.ts';
import { limits } from '../limits.ts';

export type { Msg } from './pages.ts';
import type { Msg } from './pages.ts';

interface Common {
  msg?: Msg;
  /** Signed-in username, shown in the header. */
  username?: string;
}

const returnField = (returnTo?: string) =>
  returnTo ? html`<input type="hidden" name="return" value="${returnTo}">` : '';
const withReturn = (path: string, returnTo?: string) =>
  returnTo ? `${path}?return=${encodeURIComponent(returnTo)}` : path;

const emailInput = (label: string, autocomplete: string, type = 'email') => html`<label for="email">${label}</label>
<input id="email" name="email" type="${type}" required maxlength="${limits.emailLength}" autocomplete="${autocomplete}" autofocus>`;
const usernameInput = () => html`<label for="username">Username</label>
<input id="username" name="username" required minlength="${limits.usernameLength.min}" maxlength="${limits.usernameLength.max}"
  pattern="[a-z0-9]+(-[a-z0-9]+)*" autocomplete="username" autocapitalize="none" spellcheck="false">
<small>Lowercase letters, digits and single hyphens. Your documents live at <code>&lt;username&gt;.</code>this host.</small>`;
const passwordInput = (autocomplete: string) => html`<label for="password">Password</label>
<input id="password" name="password" type="password" required ${autocomplete === 'new-password' ? html`minlength="${limits.password.minLength}"` : ''}
  maxlength="${limits.password.maxLength}" autocomplete="${autocomplete}">
${autocomplete === 'new-password' ? html`<small>At least ${limits.password.minLength} characters, not a common password.</small>` : ''}`;

export function loginPage(o: Common & { returnTo?: string }): string {
  return page({
    title: 'Sign in',
    username: o.username,
    msg: o.msg,
    body: html`<h1>Sign in</h1>
${o.username ? html`<p class="muted">You are signed in as <strong>${o.username}</strong>. Sign in below to switch accounts.</p>` : ''}
<form class="card" method="post" action="/_/login">
${returnField(o.returnTo)}
${emailInput('Email or username', 'username', 'text')}
${passwordInput('current-password')}
<button type="submit">Sign in</button>
</form>
<p>No account yet? <a href="${withReturn('/_/signup', o.returnTo)}">Sign up</a></p>`,
  });
}

export function signupPage(o: Common & { returnTo?: string }): string {
  return page({
    title: 'Sign up',
    username: o.username,
    msg: o.msg,
    body: html`<h1>Create your account</h1>
<form class="card" method="post" action="/_/signup">
${returnField(o.returnTo)}
${emailInput('Email', 'email')}
${usernameInput()}
${passwordInput('new-password')}
<button type="submit">Sign up</button>
</form>
<p>Already have an account? <a href="${withReturn('/_/login', o.returnTo)}">Sign in</a></p>`,
  });
}

export function logoutPage(o: Common): string {
  return page({
    title: 'Sign out',
    username: o.username,
    msg: o.msg,
    body: html`<h1>Sign out</h1>
<form class="card" method="post" action="/_/logout">
<p>${o.username ? html`Sign out <strong>${o.username}</strong> on this browser?` : 'You are not signed in. Clear any session cookies anyway?'}</p>
<button type="submit">Sign out</button>
</form>`,
  });
}

export function setupPage(o: Common): string {
  return page({
    title: 'Set up Kiln',
    msg: o.msg,
    body: html`<h1>Welcome to Kiln</h1>
<p>No account exists yet. Create the first one: it becomes the administrator of this Kiln (Maker plan, no payment needed).</p>
<form class="card" method="post" action="/_/setup">
${emailInput('Email', 'email')}
${usernameInput()}
${passwordInput('new-password')}
<button type="submit">Create administrator</button>
</form>`,
  });
}

export function landingPage(o: Common): string {
  return page({
    title: 'Home',
    username: o.username,
    msg: o.msg,
    body: html`<h1>Kiln</h1>
<p>Host single-file HTML apps: each document is a whole app that saves itself.</p>
<p><a class="button" href="/_/login">Sign in</a> <a class="button" href="/_/signup">Sign up</a></p>`,
  });
}
