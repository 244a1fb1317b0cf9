// Pages of the billing flow: the welcome form of a bought account, and the plan summary.
import { html } from './html.ts';
import { page } from './pages.ts';
import { limits, planLimits } from '../limits.ts';
import { PLAN_NAMES, type PlanSummary } from '../billing/plans.ts';

interface Msg {
  text: string;
  type: string;
}

export function welcomePage(o: { token: string; email: string; msg?: Msg }): string {
  const action = `/_/welcome/${encodeURIComponent(o.token)}`;
  return page({
    title: 'Welcome',
    msg: o.msg,
    body: html`<h1>Welcome to Kiln</h1>
<p>Your plan is active for <strong>${o.email}</strong>. Choose the username your documents will live under, and a password.</p>
<form class="card" method="post" action="${action}">
<label for="username">Username</label>
<input id="username" name="username" required minlength="${limits.usernameLength.min}" maxlength="${limits.usernameLength.max}"
  pattern="[a-z0-9]+(-[a-z0-9]+)*" autocomplete="username" autocapitalize="none" spellcheck="false" autofocus>
<small>Lowercase letters, digits and single hyphens. Your documents live at <code>&lt;username&gt;.</code>this host.</small>
<label for="password">Password</label>
<input id="password" name="password" type="password" required minlength="${limits.password.minLength}" maxlength="${limits.password.maxLength}" autocomplete="new-password">
<small>At least ${limits.password.minLength} characters, not a common password.</small>
<button type="submit">Start</button>
</form>`,
  });
}

const size = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
const of = (used: number | null, max: number | null) =>
  max === null ? `${used ?? 0} (unlimited)` : `${used ?? 0} of ${max}`;

export function billingPage(o: {
  username: string;
  summary: PlanSummary;
  msg?: Msg;
  /** This Kiln sells plans (Stripe Checkout). */
  payments?: boolean;
  /** The account has a Stripe customer (the Customer Portal manages its subscription). */
  canManage?: boolean;
  /** The prices' currency (ISO 4217). */
  currency: string;
}): string {
  const money = new Intl.NumberFormat('en', { style: 'currency', currency: o.currency, maximumFractionDigits: 2 });
  const price = (n: number) => money.format(n).replace(/\.00$/, '');
  const p = o.summary;
  const lapsed = p.plan !== 'free' && p.effectivePlan === 'free';
  const a = p.allowances;
  const grows = (g: string | null) => (g ? html` <small>(grows on ${g.slice(0, 10)})</small>` : '');
  return page({
    title: 'Plan',
    username: o.username,
    msg: o.msg,
    body: html`<h1>Your plan: ${PLAN_NAMES[p.effectivePlan]}</h1>
${lapsed ? html`<p class="msg error">Your ${PLAN_NAMES[p.plan]} subscription has ended: the free plan's limits apply, and sync keys can only list, read and delete.</p>` : ''}
${p.effectivePlan !== 'free' ? html`<p class="muted">${p.monthsActive === 0 ? 'Active since this month.' : `${p.monthsActive} month${p.monthsActive === 1 ? '' : 's'} active.`}</p>` : ''}
<table>
<tr><th>Documents</th><td>${of(p.sites.used, p.sites.unlimited ? null : p.sites.max)}</td></tr>
<tr><th>Upload size per file</th><td>${size(p.uploadSize)}</td></tr>
<tr><th>Subdomains</th><td>${of(a.subdomains.used, a.subdomains.max)}${grows(a.subdomains.growsAt)}</td></tr>
<tr><th>Custom domains</th><td>${of(a.customDomains.used, a.customDomains.max)}${grows(a.customDomains.growsAt)}</td></tr>
<tr><th>Multi-tenant apps</th><td>${of(a.apps.used, a.apps.max)}${grows(a.apps.growsAt)}</td></tr>
</table>
<p class="muted">Personal: ${price(planLimits.personal.price.monthly)} / month or ${price(planLimits.personal.price.annual)} / year.
Maker: ${price(planLimits.maker.price.monthly)} / month or ${price(planLimits.maker.price.annual)} / year.</p>
${
  o.payments
    ? html`<div class="buy">${(['personal', 'maker'] as const)
        .filter((plan) => plan !== p.effectivePlan)
        .map(
          (
            plan,
          ) => html`<form method="post" action="/_/billing/checkout"><input type="hidden" name="plan" value="${plan}">
<button type="submit">${p.effectivePlan === 'free' ? 'Buy' : 'Switch to'} ${PLAN_NAMES[plan]}</button></form>`,
        )}
${o.canManage ? html`<form method="post" action="/_/billing/portal"><button class="secondary" type="submit">Manage your subscription</button></form>` : ''}</div>`
    : html`<p class="muted">Plans are given by the administrator of this Kiln.</p>`
}`,
  });
}
