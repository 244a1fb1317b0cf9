// An error answer in Kiln's shape written straight to a socket, where there is no HTTP response to write
// it with (a request Node could not parse; a connection the primary of `kiln serve --workers` has no worker
// for): `Connection: close`, the socket ended once the answer is written (not destroyed with it unsent, so
// a keep-alive client reads the answer instead of a reset), and destroyed if the client never reads it.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '../errors.ts';

export function answerOnSocket(
  socket: Socket,
  status: number,
  msg: string,
  opts: { code?: ErrorCode; headers?: Record<string, string> } = {},
): void {
  // An error of a socket nobody else listens to would end the process.
  socket.on('error', () => {});
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ msg, msgType: 'error', ...(opts.code ? { code: opts.code } : {}) });
  const headers = Object.entries(opts.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n${headers.join('')}` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 5_000).unref();
}
