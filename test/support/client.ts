// An HTTP client for tests: real requests to 127.0.0.1 with any Host header, and a cookie jar
// that, like a browser, sends cookies set for a domain to that domain and its subdomains.
import http from 'node:http';
import { randomBytes } from 'node:crypto';

export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: any;
  /** Set-Cookie headers of this answer. */
  setCookies: string[];
}

interface StoredCookie {
  name: string;
  value: string;
  domain: string | null; // null: host-only
  host: string;
  expires: number | null;
}

export class CookieJar {
  cookies: StoredCookie[] = [];
  store(host: string, header: string) {
    const [pair, ...attrs] = header.split(';').map((s) => s.trim());
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    let domain: string | null = null;
    let expires: number | null = null;
    for (const a of attrs) {
      const [k, v = ''] = a.split('=');
      if (k.toLowerCase() === 'domain') domain = v.replace(/^\./, '').toLowerCase();
      if (k.toLowerCase() === 'max-age') expires = Date.now() + Number(v) * 1000;
      if (k.toLowerCase() === 'expires' && expires === null) expires = Date.parse(v);
    }
    const hostname = host.replace(/:\d+$/, '');
    this.cookies = this.cookies.filter(
      (c) => !(c.name === name && c.domain === domain && (domain !== null || c.host === hostname)),
    );
    if (expires !== null && expires <= Date.now()) return;
    this.cookies.push({ name, value, domain, host: hostname, expires });
  }
  header(host: string): string {
    const hostname = host.replace(/:\d+$/, '');
    return this.cookies
      .filter(
        (c) =>
          (c.expires === null || c.expires > Date.now()) &&
          (c.domain === null ? c.host === hostname : hostname === c.domain || hostname.endsWith(`.${c.domain}`)),
      )
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }
  get(name: string, host: string): string | undefined {
    const line = this.header(host)
      .split('; ')
      .find((p) => p.startsWith(`${name}=`));
    return line?.slice(name.length + 1);
  }
}

export interface ReqOpts {
  headers?: Record<string, string>;
  body?: string | Buffer | object;
  /** Form-encode an object body instead of JSON. */
  form?: boolean;
  host?: string;
}

/** A loopback address of its own for each client (all of 127.0.0.0/8 reaches the server), so that
 *  per-address rate limits see each test client as a different visitor, as browsers on different
 *  machines would be. */
function loopbackAddress(): string {
  const b = randomBytes(3);
  return `127.${b[0]}.${b[1]}.${Math.max(2, b[2] % 255)}`;
}

export class Client {
  jar = new CookieJar();
  /** The address this client connects from (`req.ip` on the server). */
  address = loopbackAddress();
  readonly port: number;
  host: string;
  constructor(port: number, host: string) {
    this.port = port;
    this.host = host;
  }

  /** A client for another host sharing this one's cookies and address (like one browser). */
  on(host: string): Client {
    const c = new Client(this.port, host);
    c.jar = this.jar;
    c.address = this.address;
    return c;
  }

  /** Carries this (main-app) client's session to a document host the way a browser follows the
   *  session handshake (`/_/session/start` → `/_/session?grant=…`); returns a client for that host
   *  sharing the cookie jar. Throws when the main app hands out no grant. */
  async enter(host: string, path = '/'): Promise<Client> {
    const start = await this.page(
      `/_/session/start?host=${encodeURIComponent(host.replace(/:\d+$/, ''))}&return=${encodeURIComponent(path)}`,
    );
    const to = start.headers.location;
    if (start.status !== 302 || !to || !to.includes('/_/session?grant='))
      throw new Error(`no session grant for ${host}: ${start.status} ${to ?? start.text}`);
    const doc = this.on(host);
    const u = new URL(to);
    await doc.page(u.pathname + u.search);
    return doc;
  }

  request(method: string, path: string, opts: ReqOpts = {}): Promise<Res> {
    const host = opts.host ?? this.host;
    const headers: Record<string, string> = { host, ...opts.headers };
    let body: Buffer | undefined;
    if (opts.body !== undefined) {
      if (Buffer.isBuffer(opts.body) || typeof opts.body === 'string') body = Buffer.from(opts.body);
      else if (opts.form) {
        body = Buffer.from(new URLSearchParams(opts.body as Record<string, string>).toString());
        headers['content-type'] ??= 'application/x-www-form-urlencoded';
      } else {
        body = Buffer.from(JSON.stringify(opts.body));
        headers['content-type'] ??= 'application/json';
      }
    }
    const cookie = this.jar.header(host);
    if (cookie && !headers.cookie) headers.cookie = cookie;
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', localAddress: this.address, port: this.port, method, path, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const buf = Buffer.concat(chunks);
            const setCookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
            for (const sc of setCookies) this.jar.store(host, sc);
            const text = buf.toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode!, headers: res.headers, body: buf, text, json, setCookies });
          });
        },
      );
      req.on('error', reject);
      if (body) req.end(body);
      else req.end();
    });
  }

  get(path: string, opts?: ReqOpts) {
    return this.request('GET', path, opts);
  }
  post(path: string, body?: ReqOpts['body'], opts: ReqOpts = {}) {
    return this.request('POST', path, { ...opts, body });
  }
  put(path: string, body?: ReqOpts['body'], opts: ReqOpts = {}) {
    return this.request('PUT', path, { ...opts, body });
  }
  delete(path: string, opts: ReqOpts = {}) {
    return this.request('DELETE', path, opts);
  }

  /** A browser-like GET: Accept text/html. */
  page(path: string, opts: ReqOpts = {}) {
    return this.request('GET', path, { ...opts, headers: { accept: 'text/html', ...opts.headers } });
  }
}
