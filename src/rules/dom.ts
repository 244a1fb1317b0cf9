// Reading values out of an htmlparser2/domhandler tree: text, HTML, attributes and DOM-like properties.
// Every walk is iterative (documents may nest thousands deep) and charged to the extraction budget.
import type { AnyNode, Document, Element } from 'domhandler';
import { spend, tick } from './budget.ts';

export type ParentLike = Document | Element;

export function isElement(node: AnyNode): node is Element {
  const t = node.type;
  return t === 'tag' || t === 'script' || t === 'style';
}

function hasChildren(node: AnyNode): node is ParentLike | (AnyNode & { children: AnyNode[] }) {
  return Array.isArray((node as { children?: unknown }).children);
}

export function attribute(el: Element, name: string): string | undefined {
  const attribs = el.attribs;
  return Object.hasOwn(attribs, name) ? attribs[name] : undefined;
}

/** The text of every text node under `node`, in document order (script and style text included, comments not),
 *  like the DOM's textContent. Not trimmed. `charge`: count it as extraction output (not for selector matching). */
export function textContent(node: AnyNode, charge = true): string {
  if (node.type === 'text') {
    if (charge) spend(node.data.length);
    return node.data;
  }
  if (!hasChildren(node)) return '';
  let out = '';
  const stack: AnyNode[][] = [node.children as AnyNode[]];
  const index: number[] = [0];
  while (stack.length > 0) {
    const top = stack.length - 1;
    const list = stack[top];
    if (index[top] >= list.length) {
      stack.pop();
      index.pop();
      continue;
    }
    const child = list[index[top]++];
    tick();
    if (child.type === 'text') {
      if (charge) spend(child.data.length);
      out += child.data;
    } else if (child.type !== 'comment' && hasChildren(child) && child.children.length > 0) {
      stack.push(child.children as AnyNode[]);
      index.push(0);
    }
  }
  return out;
}

/** Trimmed text, what a plain selector rule answers. */
export function text(node: AnyNode): string {
  return textContent(node).trim();
}

// Serialization follows the HTML serializer browsers (and parse5) use: attributes in double quotes, `&`, `"` and
// no-break space escaped in attribute values; `&`, `<`, `>` and no-break space escaped in text except inside the
// raw-text elements; void elements without an end tag; comments and the doctype as written by the parser.
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'bgsound',
  'br',
  'col',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const RAW_TEXT = new Set(['style', 'script', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext', 'noscript']);

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\u00a0': '&nbsp;' };
const ATTR_ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '\u00a0': '&nbsp;' };
// Module-level functions only: under tsx a function expression is re-wrapped (keepNames) each time it is evaluated.
function textEscape(c: string): string {
  return TEXT_ESCAPES[c];
}
function attrEscape(c: string): string {
  return ATTR_ESCAPES[c];
}
function escapeText(s: string): string {
  return /[&<>\u00a0]/.test(s) ? s.replace(/[&<>\u00a0]/g, textEscape) : s;
}
function escapeAttr(s: string): string {
  return /[&"\u00a0]/.test(s) ? s.replace(/[&"\u00a0]/g, attrEscape) : s;
}

function openTag(el: Element): string {
  let s = `<${el.name}`;
  const attribs = el.attribs;
  for (const name in attribs) s += ` ${name}="${escapeAttr(attribs[name] ?? '')}"`;
  return `${s}>`;
}

function leafHtml(node: AnyNode): string {
  switch (node.type) {
    case 'text': {
      const parent = node.parent;
      return parent && isElement(parent) && RAW_TEXT.has(parent.name) ? node.data : escapeText(node.data);
    }
    case 'comment':
      return `<!--${node.data}-->`;
    case 'directive': {
      const m = /^!doctype(?:\s+(\S*))?/i.exec(node.data);
      if (m) return `<!DOCTYPE ${(m[1] ?? '').toLowerCase()}>`;
      return `<!--${node.data.startsWith('!') ? node.data.slice(1) : node.data}-->`;
    }
    default:
      return '';
  }
}

/** HTML of the given nodes (and their subtrees), in order. */
function serialize(nodes: readonly AnyNode[]): string {
  const parts: string[] = [];
  let pending = 0; // characters not yet charged to the budget
  // A stack of [nodes, index, element whose end tag follows].
  const lists: (readonly AnyNode[])[] = [nodes];
  const index: number[] = [0];
  const closers: (Element | null)[] = [null];
  while (lists.length > 0) {
    const top = lists.length - 1;
    const list = lists[top];
    let piece: string;
    if (index[top] >= list.length) {
      const el = closers[top];
      lists.pop();
      index.pop();
      closers.pop();
      if (!el) continue;
      piece = `</${el.name}>`;
    } else {
      const node = list[index[top]++];
      tick();
      if (isElement(node)) {
        piece = openTag(node);
        if (!VOID.has(node.name)) {
          lists.push(node.children);
          index.push(0);
          closers.push(node);
        }
      } else if (node.type === 'cdata') {
        lists.push(node.children);
        index.push(0);
        closers.push(null);
        continue;
      } else {
        piece = leafHtml(node);
      }
    }
    parts.push(piece);
    pending += piece.length;
    if (pending > 65536) {
      spend(pending);
      pending = 0;
    }
  }
  spend(pending);
  return parts.join('');
}

export function innerHTML(node: AnyNode): string {
  if (isElement(node) && VOID.has(node.name)) return '';
  return hasChildren(node) ? serialize(node.children as AnyNode[]) : '';
}

export function outerHTML(node: AnyNode): string {
  return node.type === 'root' ? serialize(node.children) : serialize([node]);
}

/** Names read as DOM properties rather than attributes: the reference engine's list, so `@id` with `id=""`
 *  reads "" while an empty ordinary attribute reads null. */
const DOM_PROPERTY_NAMES: ReadonlySet<string> = new Set([
  'textContent',
  'innerText',
  'innerHTML',
  'outerHTML',
  'value',
  'checked',
  'selected',
  'disabled',
  'readOnly',
  'type',
  'tagName',
  'nodeName',
  'nodeType',
  'nodeValue',
  'childElementCount',
  'id',
  'className',
  'classList',
  'baseURI',
  'offsetWidth',
  'offsetHeight',
  'clientWidth',
  'clientHeight',
  'scrollWidth',
  'scrollHeight',
  'dataset',
  'currentSrc',
  'duration',
  'paused',
  'title',
  'documentURI',
  'contentType',
]);

/** Attributes whose presence is their value (read through `@name` they answer their own name). */
const BOOLEAN_ATTRIBUTE =
  /^(?:autofocus|autoplay|async|checked|controls|defer|disabled|hidden|loop|multiple|open|readonly|required|scoped|selected)$/i;

/** Attribute read with the reference's HTML conveniences: a present boolean attribute answers its name, an
 *  option without a value attribute answers its text, a checkbox or radio without one answers "on". */
function attributeLike(el: Element, name: string): string | undefined {
  if (Object.hasOwn(el.attribs, name)) return BOOLEAN_ATTRIBUTE.test(name) ? name : el.attribs[name];
  if (name === 'value') {
    if (el.name === 'option') return textContent(el);
    const type = el.attribs.type;
    if (el.name === 'input' && (type === 'radio' || type === 'checkbox')) return 'on';
  }
  return undefined;
}

function property(node: AnyNode, name: string): string | null {
  switch (name) {
    case 'innerHTML':
      return innerHTML(node);
    case 'outerHTML':
      return outerHTML(node);
    case 'textContent':
    case 'innerText':
      return textContent(node);
  }
  if (!isElement(node)) return null;
  switch (name) {
    case 'className':
      return attribute(node, 'class') ?? null;
    case 'tagName':
    case 'nodeName':
      return node.name.toUpperCase();
    case 'nodeType':
      return '1';
    // Kiln reads the DOM's readOnly and type, where the reference answers "false" and the parser's node kind.
    case 'readOnly':
      return String(Object.hasOwn(node.attribs, 'readonly'));
    case 'type':
      return attribute(node, 'type') ?? null;
    case 'checked':
    case 'selected':
    case 'disabled':
      return String(Object.hasOwn(node.attribs, name));
  }
  return attributeLike(node, name) ?? null;
}

/** Properties whose producer (textContent, the serializer) has already charged its output. */
const SPENT_BY_PRODUCER = new Set(['innerHTML', 'outerHTML', 'textContent', 'innerText']);

/** What `@name` answers on `node`: a DOM property for the names in DOM_PROPERTY_NAMES (null when the node has
 *  none), otherwise the attribute, with an empty or missing attribute answering null. */
export function readNamed(node: AnyNode, name: string): string | null {
  if (DOM_PROPERTY_NAMES.has(name)) {
    const v = property(node, name);
    if (v !== null && !SPENT_BY_PRODUCER.has(name)) spend(v.length);
    return v;
  }
  if (!isElement(node) || name === '') return null;
  const v = attributeLike(node, name);
  if (!v) return null;
  spend(v.length);
  return v;
}
