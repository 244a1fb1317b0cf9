// The AI edits a page's bus stream has seen start and not end (`ai-edit/request`, until its `done`, `error` or
// `cancel`). When Kiln stops, the stream tells the page each of them ended — an `ai-edit/error` "Kiln is
// restarting" — before it closes: the process running an edit (this one or another worker) sends its own error
// too, but it may reach a stream that is already closed, and the page would wait for its 90 s watchdog.
import type { KilnEvent } from '../events/bus.ts';
import { CHANNEL, RESTARTING } from './handler.ts';

/** Requests remembered per stream (a page runs one at a time; the oldest is forgotten first). */
const MAX_REMEMBERED = 16;
const ENDS = new Set(['ai-edit/done', 'ai-edit/error', 'ai-edit/cancel']);

export class EditsInFlight {
  private readonly open = new Set<string>();
  private lastSeq = 0;

  /** Every bus event the stream is given (before its view). */
  see(event: KilnEvent, id: number): void {
    if (event.type !== 'bus' || event.channel !== CHANNEL) return;
    this.lastSeq = Math.max(this.lastSeq, id);
    const request = (event.envelope.payload as { id?: unknown } | null)?.id;
    if (typeof request !== 'string') return;
    if (event.envelope.type === 'ai-edit/request') {
      this.open.add(request);
      if (this.open.size > MAX_REMEMBERED) this.open.delete(this.open.values().next().value!);
    } else if (ENDS.has(event.envelope.type)) this.open.delete(request);
  }

  /** The page's last frames: an error for each edit still open, in the bus's wire (`sender`: Kiln's handler). */
  lastWords(sender: string): Buffer[] {
    return [...this.open].map((id, i) =>
      Buffer.from(
        `data: ${JSON.stringify({
          channel: CHANNEL,
          type: 'ai-edit/error',
          v: 1,
          payload: { id, message: RESTARTING },
          sender,
          origin: 'kiln',
          seq: this.lastSeq + 1 + i,
        })}\n\n`,
      ),
    );
  }
}
