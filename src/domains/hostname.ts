// Custom domain names: what a person may add. Pure.
import { domainToASCII } from 'node:url';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A top-level label: letters (or an IDN `xn--` label), never all digits (so no IP addresses). */
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

export type HostnameCheck = { ok: true; domain: string } | { ok: false; problem: string };

/** The refusal of an empty domain (and, at the route, of one that is not text). */
export const ENTER_A_DOMAIN = 'Enter a domain, like docs.example.com.';

/** The normalized domain (lowercase, ASCII/punycode, no trailing dot) or why it is refused.
 *  `rootHostname` (Kiln's own domain) and everything below it are refused: those hosts are Kiln's. */
export function checkHostname(input: string, rootHostname: string): HostnameCheck {
  if (input.trim() === '') return { ok: false, problem: ENTER_A_DOMAIN };
  let name = input.trim().toLowerCase();
  if (name.length > 300) return { ok: false, problem: 'That domain is too long.' };
  if (/[/:@?#\s\\]/.test(name))
    return { ok: false, problem: 'Enter the domain alone, like docs.example.com: no scheme, port or path.' };
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (/[^\x00-\x7f]/.test(name)) {
    const ascii = domainToASCII(name);
    if (!ascii) return { ok: false, problem: 'That is not a valid domain name.' };
    name = ascii;
  }
  if (name.length > 253) return { ok: false, problem: 'A domain name has at most 253 characters.' };
  const labels = name.split('.');
  if (labels.length < 2) return { ok: false, problem: 'Enter a full domain, like docs.example.com.' };
  if (!labels.every((l) => LABEL.test(l))) {
    return {
      ok: false,
      problem: 'Each part of a domain has 1 to 63 letters, digits or hyphens, and no hyphen at either end.',
    };
  }
  if (!TLD.test(labels[labels.length - 1])) return { ok: false, problem: 'That is not a valid domain name.' };
  const root = rootHostname.toLowerCase();
  if (name === root || name.endsWith(`.${root}`))
    return { ok: false, problem: `Addresses under ${root} are Kiln's own.` };
  if (name === 'localhost' || name.endsWith('.localhost'))
    return { ok: false, problem: 'localhost names cannot be custom domains.' };
  return { ok: true, domain: name };
}
