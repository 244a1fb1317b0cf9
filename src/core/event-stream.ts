// Reading a server-sent event stream as a client: each event's data, as the body arrives (the model APIs an AI
// edit engine streams from, and the bus an owner's agent listens to).

/** Each event's data (its `data:` lines joined by line breaks) from a server-sent event stream's body; past
 *  `maxBytes` of body it throws `tooLong`. */
export async function* eventData(
  body: AsyncIterable<Uint8Array | string>,
  o: { maxBytes?: number; tooLong?: string } = {},
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (o.maxBytes !== undefined && bytes > o.maxBytes) throw new Error(o.tooLong ?? 'the event stream is too long');
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let cut = pending.search(/\r?\n\r?\n/);
    while (cut !== -1) {
      const frame = pending.slice(0, cut);
      pending = pending.slice(cut).replace(/^\r?\n\r?\n/, '');
      const data = frame
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield data;
      cut = pending.search(/\r?\n\r?\n/);
    }
  }
}
