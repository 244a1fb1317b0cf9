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

/** `signupsOpen`: this Kiln takes new accounts without an invitation (then the page offers sign-up). */
export function loginPage(o: Common & { returnTo?: string; signupsOpen?: boolean }): string {
  return page({
    title: 'Sign in',
    username: o.username,
    msg: o.msg,
    signedOutLinks: o.signupsOpen ? 'both' : 'sign-in',
    body: html`<h1>Sign in</h1>
${o.username ? html`<p class="muted">You are signed in as <strong>${o.username}</strong>. Sign in below to switch accounts.</p>` : ''}
<form class="card" method="post" action="/_/login">
${returnField(o.returnTo)}
${emailInput('Email or username', 'username', 'text')}
${passwordInput('current-password')}
<button type="submit">Sign in</button>
</form>
<p><a href="/_/reset">Forgot your password?</a></p>
${o.signupsOpen ? html`<p>No account yet? <a href="${withReturn('/_/signup', o.returnTo)}">Sign up</a></p>` : ''}`,
  });
}

/** How this Kiln takes new accounts, as the sign-up page meets it: open, by invitation (`invited`: with a valid
 *  invitation link), or closed. */
export type SignupMode = 'open' | 'invite' | 'invited' | 'closed';

export function signupPage(o: Common & { returnTo?: string; invite?: string; mode?: SignupMode }): string {
  const mode = o.mode ?? 'open';
  if (mode === 'closed' || mode === 'invite')
    return page({
      title: 'Sign up',
      username: o.username,
      msg: o.msg,
      signedOutLinks: 'sign-in',
      body: html`<h1>${mode === 'closed' ? 'Sign-ups are closed' : 'Sign-up is by invitation'}</h1>
<p>${mode === 'closed' ? 'This Kiln takes no new accounts at the moment.' : 'This Kiln takes new accounts by invitation only: open the invitation link you were sent (it works once).'}</p>
<p>Already have an account? <a href="${withReturn('/_/login', o.returnTo)}">Sign in</a></p>`,
    });
  return page({
    title: 'Sign up',
    username: o.username,
    msg: o.msg,
    signedOutLinks: mode === 'invited' ? 'sign-in' : 'both',
    body: html`<h1>Create your account</h1>${mode === 'invited' ? html`<p>You were invited: choose your email, username and password.</p>` : ''}
<form class="card" method="post" action="/_/signup">
${returnField(o.returnTo)}${o.invite ? html`<input type="hidden" name="invite" value="${o.invite}">` : ''}
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
    // No account exists yet: nothing to sign in to or up for.
    signedOutLinks: 'none',
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

export function landingPage(o: Common & { signupsOpen: boolean }): string {
  return page({
    title: 'Home',
    username: o.username,
    msg: o.msg,
    signedOutLinks: o.signupsOpen ? 'both' : 'sign-in',
    body: html`<style>.hero{padding:var(--s5) 0}.hero p{font-size:1.15rem;max-width:40rem}
.points{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:var(--s4);margin:var(--s5) 0}
.points h2{font-size:1.05rem;margin:0 0 var(--s2)}</style>
<section class="hero"><h1>Pages that save themselves</h1>
<p>Kiln hosts single-file HTML apps. Each document is one HTML file that is both the app and its data:
you edit it in the browser, it saves itself, and everyone else sees the saved page on your own address.</p>
<p>${o.signupsOpen ? html`<a class="button" href="/_/signup">Create an account</a> ` : ''}<a class="button${o.signupsOpen ? ' secondary' : ''}" href="/_/login">Sign in</a></p></section>
<div class="points">
<section class="card"><h2>Edit in place</h2><p>Click the text of your page, change it, press Ctrl+S. No build step, no database to design.</p></section>
<section class="card"><h2>Every save kept</h2><p>Each save is a version: compare any two, restore one in a click.</p></section>
<section class="card"><h2>Apps for your visitors</h2><p>Turn a page into an app: each visitor who signs up gets a copy of their own.</p></section>
<section class="card"><h2>Sync and share</h2><p>Keep a folder on your computer in sync, share a link, read any page as JSON.</p></section>
</div>`,
  });
}
