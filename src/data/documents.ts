// Parsed documents for the data API, kept in a small in-process LRU keyed by checksum: parsing is the
// expensive part of an extraction, a parsed document is never modified, and a checksum names exact bytes
// (so an entry can never be stale, whichever document or process saved them).
import type { Services } from '../services.ts';
import type { NodeRow } from '../nodes/tree.ts';
import { documentContent } from '../nodes/serve.ts';
import { parseDocument, type ParsedDocument } from '../rules/index.ts';

/** A parsed tree takes about 16 bytes of heap per source character (measured on the bench document):
 *  4 M characters of source is about 64 MB. */
const MAX_SOURCE_CHARS = 4 * 1024 * 1024;
const MAX_ENTRIES = 256;

const parsed = new Map<string, ParsedDocument>();
let sourceChars = 0;

function remember(checksum: string, doc: ParsedDocument) {
  if (doc.chars > MAX_SOURCE_CHARS / 2) return;
  parsed.set(checksum, doc);
  sourceChars += doc.chars;
  for (const [k, v] of parsed) {
    if (sourceChars <= MAX_SOURCE_CHARS && parsed.size <= MAX_ENTRIES) break;
    parsed.delete(k);
    sourceChars -= v.chars;
  }
}

/** The parsed document of a node and the checksum of the bytes parsed (normally `node.checksum`; the
 *  newer one when a save landed between reading the node and reading its bytes). Null when the
 *  document has no content. */
export async function parsedDocumentOf(
  s: Services,
  node: Pick<NodeRow, 'id' | 'checksum'>,
): Promise<{ doc: ParsedDocument; checksum: string } | null> {
  if (node.checksum) {
    const hit = parsed.get(node.checksum);
    if (hit) {
      parsed.delete(node.checksum);
      parsed.set(node.checksum, hit);
      return { doc: hit, checksum: node.checksum };
    }
  }
  const content = await documentContent(s, node);
  if (!content) return null;
  const again = parsed.get(content.checksum);
  if (again) return { doc: again, checksum: content.checksum };
  const doc = parseDocument(content.bytes.toString('utf8'));
  remember(content.checksum, doc);
  return { doc, checksum: content.checksum };
}

/** Forgets every parsed document (tests and benchmarks measuring the uncached path). */
export function clearParsedDocuments(): void {
  parsed.clear();
  sourceChars = 0;
}
