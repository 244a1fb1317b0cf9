// The HTTP side of `kiln sync`: the sync protocol as the desktop engine speaks it (docs/notes/
// hyperclay-local-sync.md): X-API-Key on every request; protocol 2 (X-Sync-Protocol: 2 and
// X-Sync-Account-ID) once GET /_/sync/accounts has named the account, on the personal base `/_/sync` or
// a team's `/_/team/<team>/sync`; JSON bodies, uploads as base64, If-Match quoted; errors as
// {msg, code}. Transient failures (no connection, 5xx, 423, 429, 409 storage-changing) are retried
// with backoff until `giveUpAt`; every other refusal is a SyncRefusal for the caller to judge.
import { setTimeout as sleep } from 'node:timers/promises';
import { limits } from '../limits.ts';

export interface WireNode {
  id: number;
  type: 'site' | 'folder' | 'upload';
  name: string;
  parentId: number;
  path: string;
  size: number;
  modifiedAt: string;
  checksum: string | null;
  etag?: string | null;
  structureVersion?: string;
}

/** A refusal the server explained: its status, code and message. */
export class SyncRefusal extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly body: Record<string, unknown> | undefined;
  constructor(status: number, code: string | undefined, msg: string, body?: Record<string, unknown>) {
    super(msg);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** The server stayed out of reach until the run's deadline. */
export class Unreachable extends Error {}

/** The run was asked to stop while waiting to retry. */
export class Stopped extends Error {}

export interface ApiOptions {
  url: string;
  key: string;
  /** Called before each wait: what failed and how long the wait is. */
  onRetry?: (why: string, waitMs: number) => void;
  /** Called when a request succeeds after failures. */
  onBack?: () => void;
  /** Give up (Unreachable) when one request has kept failing this long; Infinity: never. */
  giveUpAfterMs: number;
  signal?: AbortSignal;
}

const TRANSIENT = new Set([408, 423, 425, 429, 500, 502, 503, 504]);

export class SyncApi {
  readonly origin: string;
  readonly key: string;
  /** `/_/sync` or `/_/team/<team>/sync`. */
  base = '/_/sync';
  protocol: 1 | 2 = 1;
  accountId: number | null = null;
  username = '';
  requests = 0;
  private readonly opts: ApiOptions;
  private failing = false;

  constructor(opts: ApiOptions) {
    this.opts = opts;
    this.origin = opts.url.replace(/\/+$/, '');
    this.key = opts.key;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { 'x-api-key': this.key, accept: 'application/json', ...extra };
    if (this.protocol === 2) {
      h['x-sync-protocol'] = '2';
      if (this.accountId !== null) h['x-sync-account-id'] = String(this.accountId);
    }
    return h;
  }

  /** One request, retried while the failure is transient. `path` is under the sync base unless it
   *  starts with `/_/`. */
  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string>; retry?: boolean } = {},
  ): Promise<T> {
    const url = `${this.origin}${path.startsWith('/_/') ? path : `${this.base}${path}`}`;
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    let wait: number = limits.syncClient.backoffMs;
    let failingSince = 0;
    for (;;) {
      if (this.opts.signal?.aborted) throw new Stopped('stopped');
      let why: string;
      let retryAfterMs: number | null = null;
      try {
        this.requests++;
        const res = await fetch(url, {
          method,
          headers: this.headers({ ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers }),
          body,
          signal: AbortSignal.timeout(limits.syncClient.requestMs),
        });
        const text = await res.text();
        let json: Record<string, unknown> | undefined;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        const code = typeof json?.code === 'string' ? json.code : undefined;
        if (res.ok) {
          if (this.failing) {
            this.failing = false;
            this.opts.onBack?.();
          }
          return (json ?? {}) as T;
        }
        const transient = TRANSIENT.has(res.status) || (res.status === 409 && code === 'storage-changing');
        if (!transient || opts.retry === false) {
          const msg = typeof json?.msg === 'string' ? json.msg : text.slice(0, 300) || `HTTP ${res.status}`;
          throw new SyncRefusal(res.status, code, msg, json);
        }
        why = `the server answered ${res.status}${code ? ` (${code})` : ''}`;
        const ra = Number(res.headers.get('retry-after'));
        if (Number.isFinite(ra) && ra > 0) retryAfterMs = Math.min(ra * 1000, limits.syncClient.backoffMaxMs * 4);
      } catch (err) {
        if (err instanceof SyncRefusal) throw err;
        if (opts.retry === false) throw err;
        why = `cannot reach ${this.origin} (${describe(err)})`;
      }
      failingSince ||= Date.now();
      if (Date.now() - failingSince + wait > this.opts.giveUpAfterMs) throw new Unreachable(why);
      const delay = retryAfterMs ?? wait;
      this.failing = true;
      this.opts.onRetry?.(why, delay);
      try {
        await sleep(delay, undefined, { signal: this.opts.signal });
      } catch {
        throw new Stopped('stopped');
      }
      wait = Math.min(wait * 2, limits.syncClient.backoffMaxMs);
    }
  }

  /** Finds the account: the key's own (`team` undefined) or the team named. Protocol 2 when the host
   *  offers discovery; protocol 1 on the personal base otherwise. */
  async bind(team: string | undefined): Promise<void> {
    let discovery: { accounts?: Array<Record<string, unknown>>; actor?: { username?: string } } | null = null;
    try {
      discovery = await this.call('GET', '/_/sync/accounts', { headers: { 'x-sync-protocol': '2' } });
    } catch (err) {
      if (!(err instanceof SyncRefusal) || err.status !== 404) throw err;
    }
    const accounts = discovery?.accounts ?? [];
    if (team !== undefined) {
      const found = accounts.find((a) => a.kind === 'team' && String(a.username).toLowerCase() === team.toLowerCase());
      if (!found)
        throw new SyncRefusal(404, 'not-found', `No team "${team}" among the accounts this key can sync.`, undefined);
      this.use(found);
      return;
    }
    const personal = accounts.find((a) => a.kind === 'personal');
    if (personal) this.use(personal);
    else {
      const status = await this.call<{ username?: string }>('GET', '/_/sync/status');
      this.username = status.username ?? '';
    }
  }

  private use(account: Record<string, unknown>) {
    const sync = account.sync as { enabled?: boolean; reason?: string | null } | undefined;
    if (sync && sync.enabled === false)
      throw new SyncRefusal(
        402,
        sync.reason ?? 'payment-required',
        `Syncing is paused for "${account.username}" (${sync.reason ?? 'not enabled'}).`,
      );
    const base = String(account.syncBase ?? '/_/sync');
    if (!/^\/_\/[a-z0-9/_-]*sync$/i.test(base)) throw new Error(`The host named an unusable sync base: ${base}`);
    this.protocol = 2;
    this.accountId = Number(account.id);
    this.base = base;
    this.username = String(account.username ?? '');
  }

  async list(): Promise<WireNode[]> {
    const r = await this.call<{ nodes?: WireNode[]; complete?: boolean }>('GET', '/nodes');
    // Only a complete inventory may decide deletes.
    if (this.protocol === 2 && r.complete !== true)
      throw new SyncRefusal(503, 'incomplete', 'The listing was incomplete.');
    return r.nodes ?? [];
  }

  async content(id: number): Promise<{ bytes: Buffer; sum: string; type: string }> {
    const r = await this.call<{ content: string; nodeType: string; checksum: string; etag?: string }>(
      'GET',
      `/nodes/${id}/content`,
    );
    const bytes = r.nodeType === 'upload' ? Buffer.from(r.content, 'base64') : Buffer.from(r.content, 'utf8');
    return { bytes, sum: r.etag ?? r.checksum, type: r.nodeType };
  }

  async create(type: 'site' | 'upload' | 'folder', name: string, parentId: number, bytes?: Buffer): Promise<WireNode> {
    const body: Record<string, unknown> = { type, name, parentId };
    if (bytes) body.content = type === 'upload' ? bytes.toString('base64') : bytes.toString('utf8');
    if (type !== 'folder') body.modifiedAt = new Date().toISOString();
    const r = await this.call<{ node: WireNode }>('POST', '/nodes', { body });
    return r.node;
  }

  async write(id: number, type: 'site' | 'upload', bytes: Buffer, ifMatch: string): Promise<{ etag: string }> {
    const r = await this.call<{ etag?: string; checksum?: string }>('PUT', `/nodes/${id}/content`, {
      body: {
        content: type === 'upload' ? bytes.toString('base64') : bytes.toString('utf8'),
        modifiedAt: new Date().toISOString(),
      },
      headers: { 'if-match': `"${ifMatch}"` },
    });
    return { etag: String(r.etag ?? r.checksum) };
  }

  async move(id: number, targetParentId: number, newName: string, expectedVersion: string) {
    return this.call('PATCH', `/nodes/${id}/move`, { body: { targetParentId, newName, expectedVersion } });
  }

  async rename(id: number, newName: string, expectedVersion: string) {
    return this.call('PATCH', `/nodes/${id}/rename`, { body: { newName, expectedVersion } });
  }

  async remove(id: number, expectedVersion: string, cascade = false) {
    const q = `${cascade ? 'cascade=true&' : ''}expectedVersion=${encodeURIComponent(expectedVersion)}`;
    return this.call('DELETE', `/nodes/${id}?${q}`);
  }
}

function describe(err: unknown): string {
  const e = err as { cause?: { code?: string; message?: string }; name?: string; message?: string };
  if (e?.name === 'TimeoutError') return 'no answer in time';
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}
