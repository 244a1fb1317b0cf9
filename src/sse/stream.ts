// One open server-sent event stream on a raw Node response. Frames are Buffers built once per event
// and written to every stream as the same object; a stream that cannot keep up (more than
// `maxBuffered` bytes waiting in its socket) is closed, and its client reconnects with Last-Event-ID.
//
// Once the headers are out, frames go straight to the socket, each already framed as one HTTP chunk
// (framed once per frame, for every stream): one buffer and one system call per stream and event,
// without the response's per-write chunk framing and its cork until the next tick, so the first
// streams have an event while the last are still being written to.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The answer headers of every Kiln event stream (the spec's list). */
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

const CONNECTED = Buffer.from(': connected\n\n');
const PING_COMMENT = Buffer.from(': ping\n\n');

/** Bytes a stream may have waiting in its socket before it counts as a slow consumer and is closed. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export class SseStream {
  /** The id of the last event written (or the Last-Event-ID it resumed from): nothing at or below it
   *  is written again. */
  cursor = 0;
  closed = false;
  /** Frames that arrived while the stream was still replaying; written, in order, by `release`. */
  private held: Array<{ id: number; frame: Buffer }> | null = [];
  /** The socket written to directly once the headers went out, and whether the answer is chunked. */
  private direct: Socket | null = null;
  private chunked = false;
  private closeListeners: Array<() => void> = [];

  private readonly res: ServerResponse;
  private readonly maxBuffered: number;
  readonly ping: Buffer;
  constructor(
    res: ServerResponse,
    /** What this stream gets on each keep-alive tick. */
    ping: Buffer = PING_COMMENT,
    maxBuffered = MAX_BUFFERED_BYTES,
  ) {
    this.ping = ping;
    this.res = res;
    this.maxBuffered = maxBuffered;
    const socket = res.socket;
    socket?.setNoDelay(true);
    socket?.setKeepAlive(true);
    socket?.setTimeout(0);
    res.on('close', () => this.closed || this.finish());
  }

  /** Sends the headers and `: connected`. */
  open(extraHeaders: Record<string, string> = {}) {
    if (this.closed) return;
    this.res.writeHead(200, { ...SSE_HEADERS, ...extraHeaders });
    this.write(CONNECTED);
  }

  /** An event frame with its id: held while replaying, skipped when not newer than the cursor. */
  send(id: number, frame: Buffer) {
    if (this.closed) return;
    if (this.held) {
      this.held.push({ id, frame });
      return;
    }
    this.sendNow(id, frame);
  }

  /** Writes now (replay): only ids above the cursor. */
  sendNow(id: number, frame: Buffer) {
    if (this.closed || id <= this.cursor) return;
    this.cursor = id;
    this.write(frame);
  }

  /** Ends the replay: frames held meanwhile are written in order, then frames go straight out. */
  release() {
    const held = this.held ?? [];
    this.held = null;
    for (const { id, frame } of held) this.sendNow(id, frame);
  }

  /** Writes bytes as they are (comments, frames without an id). */
  write(chunk: Buffer): boolean {
    if (this.closed) return false;
    const socket = this.direct;
    if ((socket ? socket.writableLength : this.res.writableLength) + chunk.length > this.maxBuffered) {
      // A slow consumer: drop it (and what waits for it) rather than buffer without bound.
      this.res.destroy();
      this.finish();
      return false;
    }
    if (socket) socket.write(this.chunked ? chunkOf(chunk) : chunk);
    else {
      this.res.write(chunk);
      // The headers and this first write are in the socket's queue now: later writes may go after them.
      // Only when the response says how it frames its body (`chunkedEncoding`, not in Node's typings): a
      // Node without it keeps writing through the response.
      const chunked = (this.res as ServerResponse & { chunkedEncoding?: unknown }).chunkedEncoding;
      if (this.res.socket && !this.res.socket.destroyed && typeof chunked === 'boolean') {
        this.direct = this.res.socket;
        this.chunked = chunked;
      }
    }
    return true;
  }

  onClose(fn: () => void) {
    if (this.closed) fn();
    else this.closeListeners.push(fn);
  }

  close() {
    if (this.closed) return;
    if (this.res.headersSent) this.res.end();
    else this.res.destroy();
    this.finish();
  }

  private finish() {
    this.closed = true;
    this.held = null;
    const fns = this.closeListeners;
    this.closeListeners = [];
    for (const fn of fns) fn();
  }
}

/** Frames as HTTP chunks (`<hex length>\r\n<frame>\r\n`), made once per frame. */
const chunks = new WeakMap<Buffer, Buffer>();
function chunkOf(frame: Buffer): Buffer {
  let c = chunks.get(frame);
  if (!c) {
    c = Buffer.concat([Buffer.from(`${frame.length.toString(16)}\r\n`), frame, CRLF]);
    chunks.set(frame, c);
  }
  return c;
}
const CRLF = Buffer.from('\r\n');

/** `id: <id>` + one `data:` line. JSON never contains a raw line break, so one line is enough. */
export function eventFrame(id: number | null, data: unknown): Buffer {
  const json = JSON.stringify(data);
  return Buffer.from(id === null ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`);
}

/** A named event (`event: <name>`), for clients that listen with addEventListener(name). */
export function namedEventFrame(name: string, id: number, data: unknown): Buffer {
  return Buffer.from(`event: ${name}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
}
