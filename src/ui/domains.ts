// The custom domains page: add a domain, see its DNS instructions and state, remove it. Plain forms.
import { html, raw } from './html.ts';
import { page } from './pages.ts';
import type { DomainInfo } from '../domains/domains.ts';

export interface DomainsView {
  username: string;
  domains: DomainInfo[];
  /** `kiln.example.com`: where CNAME records point. */
  rootHostname: string;
  msg?: { text: string; type: string };
}

const STATUS_TEXT: Record<DomainInfo['status'], string> = {
  pending: 'waiting for DNS',
  verifying: 'checking DNS',
  active: 'active',
  failed: 'DNS check failed',
};

const STYLE = `
section.domain{margin:1.25rem 0;padding:1rem 1.25rem;background:#fff;border:1px solid var(--line);border-radius:10px}
section.domain h2{margin:.2rem 0 .5rem;font-size:1.15rem}.badge{display:inline-block;padding:.1rem .5rem;border-radius:999px;font-size:.85rem;background:#e7e5e4}
.badge.active{background:#ecfdf5;color:#065f46}.badge.failed{background:#fef2f2;color:#991b1b}.badge.pending,.badge.verifying{background:#fffbeb;color:#92400e}
section.domain code{word-break:break-all}section.domain form{margin:.5rem 0 0}section.domain form button{margin-top:0}
`;

export function domainsPage(v: DomainsView): string {
  const sections = v.domains.map(
    (
      d,
    ) => html`<section class="domain" data-domain-id="${d.id}"><h2>${d.domain} <span class="badge ${d.status}" data-status="${d.status}">${STATUS_TEXT[d.status]}</span></h2>
<p class="muted">SSL certificate: <strong data-ssl-status="${d.sslStatus ?? ''}">${d.sslStatus ?? (d.status === 'active' ? 'pending' : 'not yet')}</strong>${
      d.status === 'active'
        ? html` · <a href="/_/session/start?host=${d.domain}&amp;return=%2F" target="_blank" rel="noopener" title="Opens the domain signed in as you">open https://${d.domain}/</a>`
        : ''
    }</p>
${
  d.status === 'active'
    ? ''
    : html`<p>Add these DNS records at your DNS provider:</p>
<table><thead><tr><th>Type</th><th>Name</th><th>Value</th></tr></thead><tbody>
<tr><td>${d.dns.cname.type}</td><td><code>${d.dns.cname.name}</code></td><td><code>${d.dns.cname.value}</code></td></tr>
<tr><td>${d.dns.txt.type}</td><td><code>${d.dns.txt.name}</code></td><td><code>${d.dns.txt.value}</code></td></tr>
</tbody></table>
<small>At a zone apex (a domain without a subdomain) use an ALIAS/ANAME record, or the A/AAAA records of ${d.dns.cname.value}, instead of the CNAME.</small>`
}
<form method="post" action="/_/dashboard/domains/${d.id}/delete" onsubmit="return confirm('Remove ${d.domain}? Your documents stop being served there.')">
<button class="secondary" type="submit">Remove</button></form></section>`,
  );
  return page({
    title: 'Custom domains',
    username: v.username,
    msg: v.msg,
    body: html`<h1>Custom domains</h1>
<p class="muted">Serve your documents at a domain of your own: <code>docs.example.com/</code> serves your <code>index.html</code>,
<code>docs.example.com/app.html</code> your <code>app.html</code>. A domain is served once its DNS is verified.</p>
<form class="card" method="post" action="/_/dashboard/domains"><label for="new-domain">Add a domain</label>
<input id="new-domain" name="domain" required placeholder="docs.example.com" maxlength="253" autocapitalize="none" spellcheck="false">
<small>You then point it at <code>${v.rootHostname}</code> with a CNAME record.</small>
<button type="submit">Add domain</button></form>
${v.domains.length === 0 ? html`<p class="muted">No custom domains yet.</p>` : sections}`,
    scripts: html`<style>${raw(STYLE)}</style>`,
  });
}
