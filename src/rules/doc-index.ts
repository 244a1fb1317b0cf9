// A parsed document flattened for querying: every element in document order (a subtree is a contiguous range),
// with its parent, the end of its subtree, whether it may be matched, and lookup lists by tag, class and id.
// Built once per document (parseDocument does it) and kept with it: the tree is never modified after parsing.
import type { Document, Element, AnyNode } from 'domhandler';
import { ticks } from './budget.ts';
import { isElement } from './dom.ts';

/** Set on an element that is a `[cms-template]` or inside one: never a match, never searched for rules tags. */
export const IN_CMS_TEMPLATE = 1;
/** Set on a rules tag (`script[data-rules-name]`): never a match. */
const RULES_TAG = 2;

export type DocIndex = {
  readonly doc: Document;
  /** Elements in document order, `<template>` content left out (as browsers do for selectors). */
  readonly els: Element[];
  /** Index of each element's parent element, -1 for a child of the document. */
  readonly parent: Int32Array;
  /** One past the last descendant of each element: its subtree is [i, end[i]). */
  readonly end: Int32Array;
  readonly flags: Uint8Array;
  /** Ascending element indexes by tag name. */
  readonly byTag: Map<string, number[]>;
  /** By class and by id: built on first use. */
  byClass: Map<string, number[]> | null;
  byId: Map<string, number[]> | null;
};

const indexes = new WeakMap<Document, DocIndex>();

function push(map: Map<string, number[]>, key: string, i: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [i]);
  else if (list[list.length - 1] !== i) list.push(i);
}

function build(doc: Document): DocIndex {
  const els: Element[] = [];
  let parent = new Int32Array(1024);
  let end = new Int32Array(1024);
  let flags = new Uint8Array(1024);
  const byTag = new Map<string, number[]>();
  // Frames: the children being walked, the next child, and the element (index) that owns them.
  const lists: AnyNode[][] = [doc.children];
  const next: number[] = [0];
  const owner: number[] = [-1];
  while (lists.length > 0) {
    const top = lists.length - 1;
    const list = lists[top];
    if (next[top] >= list.length) {
      const o = owner[top];
      if (o >= 0) end[o] = els.length;
      lists.pop();
      next.pop();
      owner.pop();
      continue;
    }
    const node = list[next[top]++];
    if (!isElement(node)) continue;
    const i = els.length;
    if (i === parent.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      parent = grow(parent);
      end = grow(end);
      const f = new Uint8Array(flags.length * 2);
      f.set(flags);
      flags = f;
    }
    const p = owner[top];
    const attribs = node.attribs; // fixed names below are never Object.prototype keys
    els.push(node);
    parent[i] = p;
    end[i] = i + 1;
    let f = p >= 0 ? flags[p] & IN_CMS_TEMPLATE : 0;
    if (attribs['cms-template'] !== undefined) f |= IN_CMS_TEMPLATE;
    if (node.name === 'script' && attribs['data-rules-name'] !== undefined) f |= RULES_TAG;
    flags[i] = f;
    const tagList = byTag.get(node.name);
    if (tagList === undefined) byTag.set(node.name, [i]);
    else tagList.push(i);
    if (node.name !== 'template' && node.children.length > 0) {
      lists.push(node.children);
      next.push(0);
      owner.push(i);
    }
  }
  const n = els.length;
  return {
    doc,
    els,
    parent: parent.slice(0, n),
    end: end.slice(0, n),
    flags: flags.slice(0, n),
    byTag,
    byClass: null,
    byId: null,
  };
}

const WHITESPACE = /\s+/;

/** Elements by class (split on whitespace, as css-select's class test does) and by id. */
export function lookup(ix: DocIndex, map: 'byTag' | 'byClass' | 'byId', key: string): number[] | undefined {
  if (map === 'byTag') return ix.byTag.get(key);
  if (map === 'byClass') {
    if (!ix.byClass) {
      const byClass = new Map<string, number[]>();
      for (let i = 0; i < ix.els.length; i++) {
        const cls = ix.els[i].attribs.class;
        if (!cls) continue;
        if (!/\s/.test(cls)) push(byClass, cls, i);
        else for (const c of cls.split(WHITESPACE)) if (c) push(byClass, c, i);
      }
      ix.byClass = byClass;
      ticks(ix.els.length);
    }
    return ix.byClass.get(key);
  }
  if (!ix.byId) {
    const byId = new Map<string, number[]>();
    for (let i = 0; i < ix.els.length; i++) {
      const id = ix.els[i].attribs.id;
      if (id !== undefined) push(byId, id, i);
    }
    ix.byId = byId;
    ticks(ix.els.length);
  }
  return ix.byId.get(key);
}

export function indexOf(doc: Document): DocIndex {
  let ix = indexes.get(doc);
  if (!ix) {
    ix = build(doc);
    indexes.set(doc, ix);
  }
  return ix;
}

/** First position in the ascending `list` whose value is >= `value`. */
export function lowerBound(list: number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
