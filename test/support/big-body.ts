// A request that announces a large body, sends only its first bytes, and reports whether (and how)
// the server answered before the rest was sent: proves credentials are checked before bodies are read.
import http from 'node:http';

export interface EarlyAnswer {
  /** The status, or null when no answer came while the body was held back. */
  status: number | null;
  body: string;
  /** Bytes of the body sent when the answer came. */
  sent: number;
}

export function answerBeforeBody(o: {
  port: number;
  host: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  size: number;
  waitMs?: number;
}): Promise<EarlyAnswer> {
  return new Promise((resolve, reject) => {
    const first = Buffer.alloc(1024, 0x20);
    let sent = 0;
    let done = false;
    const req = http.request({
      host: '127.0.0.1',
      port: o.port,
      method: o.method,
      path: o.path,
      headers: { host: o.host, 'content-type': 'application/json', 'content-length': String(o.size), ...o.headers },
    });
    const finish = (a: EarlyAnswer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(a);
    };
    const timer = setTimeout(() => finish({ status: null, body: '', sent }), o.waitMs ?? 3000);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => finish({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), sent }));
      res.on('error', () => finish({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), sent }));
    });
    req.on('error', (err) => (done ? undefined : reject(err)));
    req.write(`{"content":"${first.toString()}`);
    sent = first.length + 12;
  });
}
