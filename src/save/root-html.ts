// "Does this body have a root <html> element?" — a cheap scan instead of a full parse, so large
// saves stay fast: skip a BOM, whitespace, comments, the doctype and processing instructions.
export function hasRootHtml(text: string): boolean {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t' || c === '\f') {
      i++;
    } else if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end === -1) return false;
      i = end + 3;
    } else if (text.startsWith('<!', i) || text.startsWith('<?', i)) {
      const end = text.indexOf('>', i);
      if (end === -1) return false;
      i = end + 1;
    } else {
      return /^<html[\s>/]/i.test(text.slice(i, i + 6));
    }
  }
  return false;
}
