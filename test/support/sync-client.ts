// A small desktop-like sync client, written for Kiln's tests from the wire the Hyperclay Local engine
// speaks (docs/notes/hyperclay-local-sync.md): `SyncApi` is the HTTP layer (X-API-Key, protocol-2
// headers, JSON bodies, base64 uploads, quoted If-Match), `SyncFolder` a local folder kept in sync with
// one account the way a desktop tool does it: a baseline per node (path, etag, structureVersion),
// pull (list + download), push (conditional upload), conflicts kept as local copies, and local
// renames, moves and deletes sent with their expected versions.
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { TestKiln } from './kiln.ts';
import { newPerson } from './people.ts';
import { createPerson, type NewPerson } from '../../src/accounts/people.ts';
import { createSyncKey } from '../../src/sync/keys.ts';
import { kilnRun } from './child.ts';

export interface WireNode {
  id: number;
  type: 'site' | 'folder' | 'upload';
  name: string;
  parentId: number;
  path: string;
  lastSyncedAt: string;
  size: number;
  modifiedAt: string;
  checksum: string | null;
  etag: string | null;
  structureVersion: string;
}

export interface ApiRes {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** The error a refused call throws: status, body code and etag, like the engine's apiFetch. */
export class SyncError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly body: any;
  constructor(status: number, code: string | undefined, body: any) {
    super(`${status} ${code ?? ''}: ${body?.msg ?? ''}`);
    this.status = status;
    this.code = code;
    this.body = body;
  }
  get etag(): string | undefined {
    return this.body?.etag;
  }
}

/** The engine's checksum: first 16 hex characters of SHA-256. */
export const checksum = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);

export interface Connection {
  port: number;
  /** Host header of the main app. */
  host: string;
  apiKey: string;
  protocol?: 1 | 2;
  /** Protocol 2: the account id the session is bound to (from /_/sync/accounts). */
  accountId?: number;
  syncBase?: string;
}

export class SyncApi {
  readonly conn: Connection;
  constructor(conn: Connection) {
    this.conn = conn;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { host: this.conn.host, 'x-api-key': this.conn.apiKey, ...extra };
    if (this.conn.protocol === 2) {
      h['x-sync-protocol'] = '2';
      if (this.conn.accountId != null) h['x-sync-account-id'] = String(this.conn.accountId);
    }
    return h;
  }

  /** A raw request to `<syncBase><suffix>` (or an absolute `/_/...` path). Never throws on status. */
  raw(
    method: string,
    suffix: string,
    opts: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiRes> {
    const url = suffix.startsWith('/_/') ? suffix : `${this.conn.syncBase ?? '/_/sync'}${suffix}`;
    const headers = this.headers(opts.headers);
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    if (body) headers['content-type'] ??= 'application/json';
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: this.conn.port, method, path: url, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  private async call(method: string, suffix: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
    const res = await this.raw(method, suffix, opts);
    if (res.status < 200 || res.status > 299)
      throw new SyncError(res.status, res.json?.code, res.json ?? { msg: res.text });
    return res.json;
  }

  status() {
    return this.call('GET', '/status');
  }
  /** The control lane, as the engine's postControlMessage sends an envelope (never throws on status). */
  control(envelope: unknown) {
    return this.raw('POST', '/_/sync/control', { body: envelope });
  }
  /** Discovery: always the personal base, protocol 2, no account id. */
  accounts() {
    return new SyncApi({ ...this.conn, protocol: undefined }).call('GET', '/_/sync/accounts', {
      headers: { 'x-sync-protocol': '2' },
    });
  }
  async list(): Promise<{ nodes: WireNode[]; complete: boolean; serverTime: string }> {
    return this.call('GET', '/nodes');
  }
  async create(body: {
    type: string;
    name: string;
    parentId: number | string;
    content?: string | Buffer;
    modifiedAt?: string;
  }): Promise<WireNode> {
    const wire = { ...body, content: Buffer.isBuffer(body.content) ? body.content.toString('base64') : body.content };
    return (await this.call('POST', '/nodes', { body: wire })).node;
  }
  /** Content decoded: a string for documents, a Buffer for uploads. */
  async download(id: number): Promise<{
    content: string | Buffer;
    nodeType: string;
    etag: string;
    structureVersion: string;
    modifiedAt: string;
    size: number;
  }> {
    const d = await this.call('GET', `/nodes/${id}/content`);
    return {
      ...d,
      content: d.nodeType === 'upload' ? Buffer.from(d.content, 'base64') : d.content,
      etag: d.etag ?? d.checksum,
    };
  }
  async upload(
    id: number,
    content: string | Buffer,
    opts: { ifMatch?: string; snapshotHtml?: string; senderId?: string } = {},
  ) {
    const body: Record<string, unknown> = {
      content: Buffer.isBuffer(content) ? content.toString('base64') : content,
      modifiedAt: new Date().toISOString(),
    };
    if (opts.snapshotHtml) body.snapshotHtml = opts.snapshotHtml;
    if (opts.senderId) body.senderId = opts.senderId;
    const headers: Record<string, string> = opts.ifMatch ? { 'if-match': `"${opts.ifMatch}"` } : {};
    return this.call('PUT', `/nodes/${id}/content`, { body, headers });
  }
  rename(id: number, newName: string, expectedVersion?: string) {
    return this.call('PATCH', `/nodes/${id}/rename`, {
      body: expectedVersion ? { newName, expectedVersion } : { newName },
    });
  }
  move(id: number, targetParentId: number, newName?: string | null, expectedVersion?: string) {
    const body: Record<string, unknown> = { targetParentId };
    if (newName) body.newName = newName;
    if (expectedVersion) body.expectedVersion = expectedVersion;
    return this.call('PATCH', `/nodes/${id}/move`, { body });
  }
  delete(id: number, opts: { cascade?: boolean; expectedVersion?: string } = {}) {
    const q = [
      opts.cascade ? 'cascade=true' : '',
      opts.expectedVersion ? `expectedVersion=${encodeURIComponent(opts.expectedVersion)}` : '',
    ].filter(Boolean);
    return this.call('DELETE', `/nodes/${id}${q.length ? `?${q.join('&')}` : ''}`);
  }
}

/** Where a node lives in the local folder: `path/name` (the listing's path is the parent's). */
export const relPathOf = (n: Pick<WireNode, 'path' | 'name'>) => (n.path ? `${n.path}/${n.name}` : n.name);

interface Baseline {
  id: number;
  type: WireNode['type'];
  rel: string;
  /** The server etag the local bytes were last known to match (files). */
  etag: string | null;
  structureVersion: string | null;
}

export interface PushResult {
  uploaded: string[];
  created: string[];
  /** Files the server refused with 412: the local edit is kept as `<name>.conflict-<etag>` and the
   *  server's bytes are downloaded in its place. */
  conflicts: string[];
}

/** A local folder bound to one account. */
export class SyncFolder {
  /** Baselines by node id. */
  readonly baseline = new Map<number, Baseline>();

  readonly api: SyncApi;
  readonly dir: string;
  constructor(api: SyncApi, dir: string) {
    this.api = api;
    this.dir = dir;
  }

  private abs(rel: string) {
    return path.join(this.dir, ...rel.split('/'));
  }

  byPath(rel: string): Baseline | undefined {
    for (const b of this.baseline.values()) if (b.rel === rel) return b;
    return undefined;
  }

  /** Lists the account and makes the folder equal to it: folders created, files downloaded when their
   *  etag differs from the baseline, local files of nodes gone from a COMPLETE listing removed. */
  async pull(): Promise<{ downloaded: string[]; removed: string[] }> {
    const listing = await this.api.list();
    if (this.api.conn.protocol === 2 && listing.complete !== true) throw new Error('inventory incomplete');
    const downloaded: string[] = [];
    const removed: string[] = [];
    const seen = new Set<number>();
    for (const n of listing.nodes) {
      seen.add(n.id);
      const rel = relPathOf(n);
      const before = this.baseline.get(n.id);
      if (before && before.rel !== rel) {
        await fs.mkdir(path.dirname(this.abs(rel)), { recursive: true });
        await fs.rename(this.abs(before.rel), this.abs(rel)).catch(() => {});
      }
      if (n.type === 'folder') {
        await fs.mkdir(this.abs(rel), { recursive: true });
        this.baseline.set(n.id, { id: n.id, type: n.type, rel, etag: null, structureVersion: n.structureVersion });
        continue;
      }
      const etag = n.etag ?? n.checksum;
      if (!before || before.etag !== etag) {
        const d = await this.api.download(n.id);
        await fs.mkdir(path.dirname(this.abs(rel)), { recursive: true });
        await fs.writeFile(this.abs(rel), d.content);
        downloaded.push(rel);
        this.baseline.set(n.id, { id: n.id, type: n.type, rel, etag: d.etag, structureVersion: d.structureVersion });
      } else {
        this.baseline.set(n.id, { ...before, rel, structureVersion: n.structureVersion });
      }
    }
    if (listing.complete === true) {
      for (const [id, b] of this.baseline) {
        if (seen.has(id)) continue;
        await fs.rm(this.abs(b.rel), { recursive: true, force: true });
        this.baseline.delete(id);
        removed.push(b.rel);
      }
    }
    return { downloaded, removed };
  }

  async read(rel: string): Promise<Buffer> {
    return fs.readFile(this.abs(rel));
  }
  async write(rel: string, content: string | Buffer) {
    await fs.mkdir(path.dirname(this.abs(rel)), { recursive: true });
    await fs.writeFile(this.abs(rel), content);
  }

  /** Uploads every local file whose bytes differ from its baseline (If-Match: the baseline etag), and
   *  creates nodes for files the server does not know (their folders first). */
  async push(): Promise<PushResult> {
    const out: PushResult = { uploaded: [], created: [], conflicts: [] };
    for (const rel of await this.walk('')) {
      const local = await this.read(rel);
      const sum = checksum(local);
      const b = this.byPath(rel);
      const type = /\.(html|htmlclay)$/i.test(rel) ? 'site' : 'upload';
      const content = type === 'site' ? local.toString('utf8') : local;
      if (b) {
        if (b.etag === sum) continue;
        try {
          const r = await this.api.upload(b.id, content, { ifMatch: b.etag ?? undefined });
          this.baseline.set(b.id, { ...b, etag: r.etag ?? r.checksum, structureVersion: r.structureVersion });
          out.uploaded.push(rel);
        } catch (err) {
          if (!(err instanceof SyncError) || err.status !== 412) throw err;
          // Keep the local edit next to the file, then take the server's version.
          await fs.writeFile(this.abs(`${rel}.conflict-${err.etag}`), local);
          const d = await this.api.download(b.id);
          await fs.writeFile(this.abs(rel), d.content);
          this.baseline.set(b.id, { ...b, etag: d.etag, structureVersion: d.structureVersion });
          out.conflicts.push(rel);
        }
        continue;
      }
      const parts = rel.split('/');
      const parentId = await this.ensureFolders(parts.slice(0, -1));
      const node = await this.api.create({ type, name: parts[parts.length - 1], parentId, content });
      this.baseline.set(node.id, {
        id: node.id,
        type: node.type,
        rel,
        etag: node.etag ?? node.checksum,
        structureVersion: node.structureVersion,
      });
      out.created.push(rel);
    }
    return out;
  }

  private async ensureFolders(parts: string[]): Promise<number> {
    let parentId = 0;
    for (let i = 0; i < parts.length; i++) {
      const rel = parts.slice(0, i + 1).join('/');
      const known = this.byPath(rel);
      if (known) {
        parentId = known.id;
        continue;
      }
      const node = await this.api.create({ type: 'folder', name: parts[i], parentId });
      this.baseline.set(node.id, {
        id: node.id,
        type: 'folder',
        rel,
        etag: null,
        structureVersion: node.structureVersion,
      });
      parentId = node.id;
    }
    return parentId;
  }

  /** Files under the folder (conflict copies are local only). */
  private async walk(rel: string): Promise<string[]> {
    const out: string[] = [];
    for (const e of await fs.readdir(this.abs(rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) out.push(...(await this.walk(child)));
      else if (!/\.conflict-[0-9a-f]*$/.test(e.name)) out.push(child);
    }
    return out.sort();
  }

  /** The expected version of a node for a structure change, as protocol 2 does: a file's baseline
   *  version; a folder's read fresh from the listing (it changes whenever anything under it does). */
  private async expectedVersion(b: Baseline): Promise<string | undefined> {
    if (this.api.conn.protocol !== 2) return undefined;
    if (b.type !== 'folder' && b.structureVersion) return b.structureVersion;
    const { nodes } = await this.api.list();
    return nodes.find((n) => n.id === b.id)?.structureVersion;
  }

  /** A local rename or move (`from` → `to`, both relative paths) sent to the server as one step. */
  async moveLocal(from: string, to: string) {
    const b = this.byPath(from);
    if (!b) throw new Error(`${from} is not synced`);
    await fs.mkdir(path.dirname(this.abs(to)), { recursive: true });
    await fs.rename(this.abs(from), this.abs(to));
    const fromParent = from.split('/').slice(0, -1).join('/');
    const toParts = to.split('/');
    const toParent = toParts.slice(0, -1).join('/');
    const newName = toParts[toParts.length - 1];
    const expected = await this.expectedVersion(b);
    if (fromParent === toParent) await this.api.rename(b.id, newName, expected);
    else await this.api.move(b.id, await this.ensureFolders(toParent ? toParent.split('/') : []), newName, expected);
    // Like the engine: the structure version is re-read from the next listing; paths below a folder follow it.
    for (const x of this.baseline.values()) {
      if (x.rel === from) Object.assign(x, { rel: to, structureVersion: null });
      else if (x.rel.startsWith(`${from}/`)) x.rel = to + x.rel.slice(from.length);
    }
  }

  /** A local delete sent to the server (folders with cascade). */
  async deleteLocal(rel: string) {
    const b = this.byPath(rel);
    if (!b) throw new Error(`${rel} is not synced`);
    await fs.rm(this.abs(rel), { recursive: true, force: true });
    await this.api.delete(b.id, { cascade: b.type === 'folder', expectedVersion: await this.expectedVersion(b) });
    for (const [id, x] of this.baseline) if (x.rel === rel || x.rel.startsWith(`${rel}/`)) this.baseline.delete(id);
  }
}

// ------------------------------------------------------------------ test set-up

/** A person (paid Personal plan unless overridden) with a sync key, and an API client for it. */
export async function keyHolder(kiln: TestKiln, over: Partial<NewPerson> = {}, conn: Partial<Connection> = {}) {
  const person = await createPerson(kiln.services, newPerson({ plan: 'personal', ...over }));
  const { key } = await createSyncKey(kiln.services, person.id);
  const port = Number(new URL(kiln.url).port);
  const api = new SyncApi({ port, host: kiln.config.rootDomain, apiKey: key, ...conn });
  return { person, key, api, port };
}

/** Runs `node bin/kiln.js ...args` on the storage of a running test Kiln; killed after 60 s. */
export function kilnCmd(kiln: TestKiln, args: string[], extraEnv: Record<string, string> = {}) {
  return kilnRun(
    {
      DATA_DIR: kiln.config.dataDir,
      ...(kiln.config.databaseUrl ? { DATABASE_URL: kiln.config.databaseUrl } : {}),
      ...extraEnv,
    },
    args,
  );
}
