// Content types by file extension, and which uploads open in the code editor.
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  htmlclay: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  jsx: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  zip: 'application/zip',
  wasm: 'application/wasm',
};

/** Text uploads the code editor opens (the spec's list). */
export const EDITABLE_EXTENSIONS = new Set([
  'json',
  'md',
  'htm',
  'html',
  'htmlclay',
  'css',
  'js',
  'jsx',
  'svg',
  'txt',
  'xml',
  'csv',
  'tsv',
  'mjs',
]);

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot + 1).toLowerCase();
}

export function contentTypeFor(name: string): string {
  return TYPES[extensionOf(name)] ?? 'application/octet-stream';
}

/** Types that could run script as the document host's origin: served under a sandbox CSP. */
export function isActiveContent(contentType: string): boolean {
  return /^(text\/html|image\/svg\+xml|application\/xml|text\/xml|application\/xhtml)/.test(contentType);
}
