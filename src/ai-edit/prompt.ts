// What an AI edit request is, and what an engine is asked: pure.
//
// hyperclayjs 1.38 (communication/ai-edit.js) sends `ai-edit/request` with {id, editId, tag, elementHTML,
// comment, contextRefs, quote?, pageHTML?}: the element to rewrite (the whole body in document mode), the
// owner's words, `@path` references (tokens with a dot or slash), the selected text, and with `@page` the
// whole page. A leading `@word` (no dot or slash) names the engine.
import { z } from 'zod';
import { limits } from '../limits.ts';

const ID = z.string().min(1).max(128);

export const EDIT_REQUEST = z.object({
  id: ID,
  editId: z.string().max(512).optional(),
  tag: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,63}$/i)
    .transform((t) => t.toLowerCase()),
  elementHTML: z.string(),
  comment: z.string().min(1).max(20_000),
  contextRefs: z.array(z.string().max(1024)).max(64).optional(),
  quote: z.string().max(20_000).optional(),
  pageHTML: z.string().optional(),
});
export type EditRequest = z.infer<typeof EDIT_REQUEST>;

/** `ai-edit/cancel` and the payloads that name a request. */
export const REQUEST_ID = z.object({ id: ID });

/** The engine a comment names with a leading `@word` (`@page` is not one, nor a reference such as
 *  `@notes.md`), and the comment without it. */
export function engineOf(comment: string): { engine: string | null; text: string } {
  const m = /^\s*@([A-Za-z0-9_-]+)(?=\s|$)/.exec(comment);
  if (!m || m[1].toLowerCase() === 'page') return { engine: null, text: comment.trim() };
  return { engine: m[1].toLowerCase(), text: comment.slice(m[0].length).trim() };
}

/** The `@path` references of a request: its own list, else the comment's tokens with a dot or slash
 *  (what hyperclayjs sends), without `page`, each once, at most `limits.aiEdit.refs`. */
export function referencesOf(req: EditRequest): string[] {
  const listed = req.contextRefs ?? [...req.comment.matchAll(/@([\w.-]*[/.][\w./-]*)/g)].map((m) => m[1]);
  return [...new Set(listed.map((r) => r.replace(/^\/+/, '')).filter((r) => r && r !== 'page'))];
}

export interface Reference {
  path: string;
  text: string;
  truncated: boolean;
}

export interface Prompt {
  system: string;
  user: string;
}

/** The system prompt: one complete element back, its tag and `data-edit-id` kept, nothing around it. */
export function systemPrompt(tag: string): string {
  return [
    'You edit one element of an HTML page that its owner is editing in the browser.',
    `Reply with exactly one complete <${tag}> element: the same tag, keeping its data-edit-id attribute if it has one,`,
    'changed as the owner asks and otherwise left as it is. Keep the page’s classes, ids and attributes unless asked',
    'to change them. No explanation, no Markdown, no code fences: only the HTML of the element.',
  ].join('\n');
}

/** The prompt for a request, or the reason it is too large to send. */
export function buildPrompt(req: EditRequest, refs: Reference[]): Prompt | { problem: string } {
  const { text } = engineOf(req.comment);
  const parts = [
    `The owner asks: ${text || req.comment}`,
    ...(req.quote ? [`They selected this text: “${req.quote}”`] : []),
    `The <${req.tag}> element to rewrite${req.editId ? ` (${req.editId})` : ''}:\n${req.elementHTML}`,
    ...(req.pageHTML ? [`The whole page, for context (do not reply with it):\n${req.pageHTML}`] : []),
    ...refs.map((r) => `The file ${r.path}${r.truncated ? ' (its beginning)' : ''}:\n${r.text}`),
  ];
  const prompt = { system: systemPrompt(req.tag), user: parts.join('\n\n') };
  const bytes = Buffer.byteLength(prompt.system) + Buffer.byteLength(prompt.user);
  if (bytes > limits.aiEdit.promptBytes)
    return {
      problem: `This request is too large for AI editing (${Math.ceil(bytes / 1024)} KB; at most ${limits.aiEdit.promptBytes / 1024} KB): edit a smaller part of the page${req.pageHTML ? ', or leave out @page' : ''}.`,
    };
  return prompt;
}

/** A command engine reads one text: the system prompt, then the request. */
export function asText(p: Prompt): string {
  return `${p.system}\n\n${p.user}\n`;
}

/** The reply as the page takes it: outside whitespace and Markdown code fences removed. */
export function cleanReply(reply: string): string {
  const t = reply.trim();
  const fenced = /^```[A-Za-z0-9_-]*[^\S\n]*\n([\s\S]*?)\n?```\s*$/.exec(t);
  return (fenced ? fenced[1] : t).trim();
}
