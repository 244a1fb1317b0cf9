// TCP connections, before any request. Node bounds a connection's headers (HEADERS_TIMEOUT_MS, counted from
// the connection's start, checked every few seconds) but not how many connections one client holds open,
// and answers 408 to one that never sent anything. Two more bounds, on every connection the HTTP server
// gets (listened for, or handed over by the primary of `kiln serve --workers`):
//
// - Open connections per socket address (not `req.ip`: no request has been read yet, and behind a proxy
//   every connection is the proxy's; there the cap is off unless MAX_CONNECTIONS_PER_ADDRESS is set):
//   at most MAX_CONNECTIONS_PER_ADDRESS in one process. The next is answered 429 `rate-limited` with
//   Retry-After and closed, before the HTTP server sees it.
// - A first byte within FIRST_BYTE_TIMEOUT_MS: a connection that has sent nothing by then is closed without
//   an answer (a browser's unused pre-opened connection just goes, as nginx closes one; a 408 written on it
//   could be read as the answer to the request it is about to send).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { answerOnSocket } from './socket-answer.ts';

/** Seconds a client refused for too many open connections is told to wait. */
const RETRY_AFTER_SECONDS = 5;

/** Open connections per socket address in this process, up to `cap` (null: counted, never refused). */
export class OpenConnections {
  private readonly byAddress = new Map<string, number>();
  readonly cap: number | null;
  constructor(cap: number | null) {
    this.cap = cap;
  }

  /** Counts `socket` until it closes; false (not counted) when its address already holds `cap`. */
  take(socket: Socket): boolean {
    const address = socket.remoteAddress ?? '';
    const n = this.byAddress.get(address) ?? 0;
    if (this.cap !== null && n >= this.cap) return false;
    this.byAddress.set(address, n + 1);
    socket.once('close', () => {
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    });
    return true;
  }

  /** Open connections from `address`. */
  count(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }
}

/** Puts both bounds in front of the HTTP server's own handling of new connections (call it right after
 *  creating the server, while Node's is the only 'connection' listener). */
export function guardConnections(server: Server, open: OpenConnections, firstByteMs: number): void {
  const handlers = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // Gone before it got here (reset while queued): nothing to count or serve.
    if (socket.destroyed || socket.remoteAddress === undefined) {
      socket.destroy();
      return;
    }
    if (!open.take(socket)) {
      // Read and drop what the client sends, so that its close ends ours at once.
      socket.resume();
      answerOnSocket(
        socket,
        429,
        `Too many connections from your address at once: at most ${open.cap}. Try again in ${RETRY_AFTER_SECONDS} seconds.`,
        { code: 'rate-limited', headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } },
      );
      return;
    }
    // bytesRead counts what the socket received, whoever reads it (Node's parser reads it natively). Looked
    // at once more after the loop's next read of the network: after a stall, what arrived in time is read.
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0)
        setImmediate(() => {
          if (socket.bytesRead === 0) socket.destroy();
        });
    }, firstByteMs).unref();
    socket.once('close', () => clearTimeout(timer));
    for (const handle of handlers) handle.call(server, socket);
  });
}
