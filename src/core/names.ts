// Naming rules for usernames, documents, folders and uploads. Pure functions: a problem string or null.
import { limits } from '../limits.ts';

/** Usernames become host labels, so they can never collide with the service's own names. */
const RESERVED_USERNAMES = new Set([
  'www',
  'api',
  'admin',
  'administrator',
  'mail',
  'email',
  'smtp',
  'imap',
  'pop',
  'ftp',
  'ssh',
  'ns',
  'ns1',
  'ns2',
  'dns',
  'mx',
  'app',
  'apps',
  'dashboard',
  'login',
  'logout',
  'signup',
  'register',
  'account',
  'accounts',
  'auth',
  'oauth',
  'sso',
  'static',
  'assets',
  'cdn',
  'media',
  'img',
  'images',
  'files',
  'uploads',
  'download',
  'downloads',
  'docs',
  'help',
  'support',
  'status',
  'blog',
  'news',
  'about',
  'billing',
  'pay',
  'payments',
  'stripe',
  'webhook',
  'webhooks',
  'sync',
  'edit',
  'editor',
  'root',
  'system',
  'kiln',
  'hyperclay',
  'localhost',
  'test',
  'dev',
  'staging',
  'prod',
  'production',
  'security',
  'abuse',
  'postmaster',
  'hostmaster',
  'webmaster',
  'noreply',
  'no-reply',
  'team',
  'teams',
  'settings',
  'new',
  'null',
  'undefined',
  'superadmin',
  'internal',
  'git',
  'svn',
]);

export function usernameProblem(username: string): string | null {
  const { min, max } = limits.usernameLength;
  if (username.length < min || username.length > max) return `Username must be ${min} to ${max} characters.`;
  if (!/^[a-z0-9-]+$/.test(username)) return 'Username may contain only lowercase letters, digits and hyphens.';
  if (username.startsWith('-') || username.endsWith('-')) return 'Username cannot start or end with a hyphen.';
  if (username.includes('--')) return 'Username cannot contain two hyphens in a row.';
  if (RESERVED_USERNAMES.has(username)) return `The username "${username}" is reserved.`;
  return null;
}

export function emailProblem(email: string): string | null {
  if (email.length > limits.emailLength) return 'Email address is too long.';
  if (!/^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/.test(email)) return 'Enter a valid email address.';
  return null;
}

/** Node names that would clash with Kiln's own paths or with file systems (compared without extension too). */
const RESERVED_NODE_NAMES = new Set([
  '_',
  '.',
  '..',
  'con',
  'prn',
  'aux',
  'nul',
  'com1',
  'com2',
  'com3',
  'com4',
  'com5',
  'com6',
  'com7',
  'com8',
  'com9',
  'lpt1',
  'lpt2',
  'lpt3',
  'lpt4',
  'lpt5',
  'lpt6',
  'lpt7',
  'lpt8',
  'lpt9',
  'tailwindcss',
  'favicon.ico',
  'robots.txt',
]);
const DOCUMENT_EXT = /\.(html|htmlclay)$/i;
/** Invisible and direction-changing characters: a name must look like what it is. */
const INVISIBLE =
  /[\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0]/;

/** True when `name` is a document name (ends in .html or .htmlclay). */
export function isDocumentName(name: string): boolean {
  return DOCUMENT_EXT.test(name);
}

/** Names unique among siblings only: index documents (each account's and each folder's home page,
 *  so every account may have one), `404.html` (an account's page for missing addresses) and the two pages
 *  of every collection (src/collections). Every
 *  other document name is unique beyond its folder: across this Kiln (as Hyperclay, the default), or
 *  across its account's folders when the instance setting says names are per account. */
export const SIBLING_UNIQUE_NAMES = [
  'index.html',
  'index.htmlclay',
  'submission-form.html',
  'dashboard.html',
  '404.html',
] as const;

/** True when a document name is unique beyond its folder (every name but those above). */
export function isGlobalDocumentName(name: string): boolean {
  return isDocumentName(name) && !(SIBLING_UNIQUE_NAMES as readonly string[]).includes(name.toLowerCase());
}

/** Why a node name is refused (naming the rule), or null. `type` decides the extension rule.
 *  Callers normalize names to NFC first. */
export function nodeNameProblem(name: string, type: 'site' | 'folder' | 'upload'): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'Name is required.';
  if (name.length > limits.nameLength) return `Name must be at most ${limits.nameLength} characters.`;
  if (name !== name.trim()) return 'Name cannot start or end with a space.';
  if (name === '.' || name === '..' || name.includes('/') || name.includes('\\'))
    return 'Name cannot contain slashes or be "." or "..".';
  // Control characters and characters that are special in URLs or file systems.
  if (/[\u0000-\u001f\u007f-\u009f<>:"|?*#%&{}$!'`@=+^~[\];,]/.test(name)) {
    return 'Name contains a special character; use letters, digits, spaces, dots, hyphens and underscores.';
  }
  if (INVISIBLE.test(name)) return 'Name cannot contain invisible or direction-changing characters.';
  if (/\s{2,}/.test(name) || /\s/.test(name.replace(/ /g, '')))
    return 'Name may contain single spaces only (no tabs or runs of spaces).';
  if (name.startsWith('.')) return 'Name cannot start with a dot.';
  if (name.endsWith('.')) return 'Name cannot end with a dot.';
  if (name.includes('..')) return 'Name cannot contain two dots in a row.';
  if (name.startsWith('_')) return 'Names starting with "_" are reserved.';
  const lower = name.toLowerCase();
  const base = lower.replace(/\.[^.]*$/, '');
  if (RESERVED_NODE_NAMES.has(lower) || RESERVED_NODE_NAMES.has(base)) return `The name "${name}" is reserved.`;
  if (type === 'site') {
    if (!DOCUMENT_EXT.test(name)) return 'Document names must end in .html or .htmlclay.';
    if (name.replace(DOCUMENT_EXT, '') === '') return 'Document names need a name before the extension.';
  }
  if (type === 'folder' && name.includes('.')) return 'Folder names cannot contain dots.';
  return null;
}

/** Splits a relative path like `a/b/c.html` into segments, refusing traversal and empty segments.
 *  Each segment must still pass `nodeNameProblem`. */
export function splitPath(p: string): string[] | string {
  if (p.length > limits.pathLength) return `Path must be at most ${limits.pathLength} characters.`;
  if (p.includes('\\') || p.includes('\u0000')) return 'Path cannot contain backslashes or NUL characters.';
  const parts = p.split('/');
  if (parts.some((s) => s === '' || s === '.' || s === '..')) return 'Path segments cannot be empty, "." or "..".';
  return parts;
}
