// htmlparser2 builds the tree as written; browsers (and the reference engine's parse5) build it by the HTML tree
// construction rules. The two disagree most visibly where selectors notice: a document without <html>, <head> or
// <body> tags gets them implied, and a <tr> written straight inside <table> gets an implied <tbody>. These
// fix-ups bring the htmlparser2 tree in line for those cases (so `body > h1` and `table > tbody > tr` match as
// in a browser). Other recoveries (misnested formatting tags, foreign-content attribute case) are not emulated.
import { Element, type AnyNode, type Document } from 'domhandler';
import { isElement, type ParentLike } from './dom.ts';

const HEAD_CONTENT = new Set([
  'base',
  'basefont',
  'bgsound',
  'link',
  'meta',
  'title',
  'noscript',
  'noframes',
  'style',
  'script',
  'template',
]);

const isBlank = (n: AnyNode) => n.type === 'text' && /^[\t\n\f\r ]*$/.test(n.data);
const isNamed = (n: AnyNode, name: string): n is Element => isElement(n) && n.name === name;

/** Makes `children` the children of `parent` (fixing every parent/prev/next link). */
function setChildren(parent: ParentLike, children: AnyNode[]): void {
  parent.children = children as typeof parent.children;
  for (let i = 0; i < children.length; i++) {
    const c = children[i];
    c.parent = parent;
    c.prev = i > 0 ? children[i - 1] : null;
    c.next = i + 1 < children.length ? children[i + 1] : null;
  }
}

function element(name: string, children: AnyNode[]): Element {
  const el = new Element(name, {}, []);
  setChildren(el, children);
  return el;
}

function ensureHtml(doc: Document): Element {
  const existing = doc.children.find((n) => isNamed(n, 'html'));
  if (existing) return existing as Element;
  // Before the first element or text, the doctype and comments stay on the document and blank text is dropped.
  const kept: AnyNode[] = [];
  let i = 0;
  for (; i < doc.children.length; i++) {
    const n = doc.children[i];
    if (n.type === 'directive' || n.type === 'comment') kept.push(n);
    else if (!isBlank(n)) break;
  }
  const html = element('html', doc.children.slice(i));
  setChildren(doc, [...kept, html]);
  return html;
}

function ensureHeadAndBody(html: Element): void {
  const kids = html.children;
  const headAt = kids.findIndex((n) => isNamed(n, 'head'));
  const bodyAt = kids.findIndex((n) => isNamed(n, 'body') || isNamed(n, 'frameset'));
  if (headAt !== -1 && bodyAt !== -1) return;
  if (headAt === -1 && bodyAt === -1) {
    // Head content (and blank text and comments among it) up to the first other node; the rest is the body.
    let split = 0;
    while (
      split < kids.length &&
      (isBlank(kids[split]) ||
        kids[split].type === 'comment' ||
        (isElement(kids[split]) && HEAD_CONTENT.has((kids[split] as Element).name)))
    )
      split++;
    let first = 0;
    while (first < split && isBlank(kids[first])) first++; // blank text before the head content is dropped
    let end = split;
    while (end > first && isBlank(kids[end - 1])) end--; // blank text after it opens the body
    let bodyStart = end;
    while (bodyStart < kids.length && isBlank(kids[bodyStart])) bodyStart++;
    setChildren(html, [element('head', kids.slice(first, end)), element('body', kids.slice(bodyStart))]);
    return;
  }
  if (headAt !== -1) {
    // After </head>, blank text and comments stay in <html>; from the first other node on it is the body.
    let start = headAt + 1;
    while (start < kids.length && (isBlank(kids[start]) || kids[start].type === 'comment')) start++;
    setChildren(html, [...kids.slice(0, start), element('body', kids.slice(start))]);
    return;
  }
  // A body but no head: an empty head goes first, taking any head content written before the body.
  const before = kids.slice(0, bodyAt);
  const headKids = before.filter((n) => isElement(n) && HEAD_CONTENT.has(n.name));
  setChildren(html, [element('head', headKids), ...before.filter((n) => !headKids.includes(n)), ...kids.slice(bodyAt)]);
}

/** Wraps each run of <tr> written directly inside a <table> in an implied <tbody>. */
function impliedTbodies(doc: Document): void {
  const stack: AnyNode[] = [...doc.children];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    if (node.name === 'table' && node.children.some((c) => isNamed(c, 'tr'))) {
      const out: AnyNode[] = [];
      let run: AnyNode[] | null = null;
      for (const c of node.children) {
        if (isNamed(c, 'tr')) (run ??= []).push(c);
        else if (run && !isElement(c)) run.push(c);
        else {
          if (run) out.push(element('tbody', run));
          run = null;
          out.push(c);
        }
      }
      if (run) out.push(element('tbody', run));
      setChildren(node, out);
    }
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
}

export function normalizeTree(doc: Document): Document {
  ensureHeadAndBody(ensureHtml(doc));
  impliedTbodies(doc);
  return doc;
}
