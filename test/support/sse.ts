// A server-sent events client for tests: a real HTTP request that stays open, parsed like EventSource
// does (comments, `id:`, `event:`, `data:` lines, blank line ends a frame), with the raw text kept so
// tests can check exact bytes.
import http from 'node:http';

export interface Frame {
  /** `id:` of the frame, if any. */
  id?: string;
  /** `event:` name, if any (Kiln never sends one). */
  event?: string;
  /** The joined `data:` lines. */
  data: string;
  /** `data` parsed as JSON (undefined when it is not JSON). */
  json: any;
}

export interface SseOpen {
  port: number;
  host: string;
  path: string;
  headers?: Record<string, string>;
}

export class SseClient {
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** Everything received, as text. */
  raw = '';
  /** The body, when the answer was not an event stream (a refusal). */
  body = '';
  frames: Frame[] = [];
  comments: string[] = [];
  ended = false;
  private buffer = '';
  private read = 0;
  private readComments = 0;
  private waiters: Array<() => void> = [];
  private req!: http.ClientRequest;
  private res?: http.IncomingMessage;

  /** Opens the stream; resolves once the answer's headers arrived (any status). */
  static open(opts: SseOpen): Promise<SseClient> {
    const c = new SseClient();
    return new Promise((resolve, reject) => {
      c.req = http.request(
        {
          host: '127.0.0.1',
          port: opts.port,
          path: opts.path,
          method: 'GET',
          headers: { host: opts.host, accept: 'text/event-stream', ...opts.headers },
          agent: false,
        },
        (res) => {
          c.res = res;
          c.status = res.statusCode!;
          c.headers = res.headers;
          res.setEncoding('utf8');
          const isStream = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
          res.on('data', (chunk: string) => {
            c.raw += chunk;
            if (isStream) c.parse(chunk);
            else c.body += chunk;
            c.wake();
          });
          res.on('end', () => {
            c.ended = true;
            c.wake();
            if (!isStream) resolve(c);
          });
          res.on('error', () => {});
          // A connection cut without a proper end (the server's process killed) ends the stream too.
          res.on('close', () => {
            if (c.ended) return;
            c.ended = true;
            c.wake();
          });
          if (isStream) resolve(c);
        },
      );
      c.req.on('error', (err) => {
        if (c.status) {
          c.ended = true;
          c.wake();
        } else reject(err);
      });
      c.req.end();
    });
  }

  /** A JSON body (refusals). */
  get json(): any {
    try {
      return JSON.parse(this.body);
    } catch {
      return undefined;
    }
  }

  private parse(chunk: string) {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const frame: Partial<Frame> & { dataLines: string[] } = { dataLines: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') frame.dataLines.push(value);
        else if (field === 'id') frame.id = value;
        else if (field === 'event') frame.event = value;
      }
      if (frame.dataLines.length === 0) continue;
      const data = frame.dataLines.join('\n');
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        json = undefined;
      }
      this.frames.push({ id: frame.id, event: frame.event, data, json });
    }
  }

  private wake() {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  private async until(test: () => boolean, what: string, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    while (!test()) {
      if (this.ended) throw new Error(`stream ended while waiting for ${what}; received:\n${this.raw}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms; received:\n${this.raw.slice(-2000)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The next data frame not read yet (skipping frames whose JSON `type` is in `skipTypes`). */
  async next(opts: { skipTypes?: string[]; timeoutMs?: number } = {}): Promise<Frame> {
    const skip = new Set(opts.skipTypes ?? []);
    const unread = () => {
      while (this.read < this.frames.length && skip.has(this.frames[this.read].json?.type)) this.read++;
      return this.read < this.frames.length;
    };
    await this.until(unread, 'frame', opts.timeoutMs ?? 10_000);
    return this.frames[this.read++];
  }

  /** Data frames received and not read yet. */
  unread(): Frame[] {
    return this.frames.slice(this.read);
  }

  /** Waits for a comment line (`: connected`, `: ping`) not seen yet. */
  async comment(text: string, timeoutMs = 10_000): Promise<void> {
    await this.until(
      () => {
        const i = this.comments.indexOf(text, this.readComments);
        if (i === -1) return false;
        this.readComments = i + 1;
        return true;
      },
      `comment ": ${text}"`,
      timeoutMs,
    );
  }

  /** Resolves when the server ends the stream. */
  async end(timeoutMs = 10_000): Promise<void> {
    await this.until(() => this.ended, 'end of stream', timeoutMs);
  }

  close() {
    this.req.destroy();
    this.res?.destroy();
  }
}
