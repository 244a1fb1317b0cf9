// The MCP door beside the sync API, in one run (#47): reading a 10 KB document (MCP `read_document` vs the sync
// API's GET content) and changing it (`edit_document`, one exact-text replacement under the etag, vs the sync
// API's conditional PUT of the whole page): calls per second and Kiln's CPU time per call (the goal: MCP at most
// 1.5× the sync API's CPU per operation). MCP is measured at 2025-11-25 (stateless JSON-RPC, as most clients
// speak it today) and at 2026-07-28 (the SDK's own client, pinned).
//
// Kiln runs as a child process (`node bin/kiln.js serve`, SQLite, LOG_LEVEL=silent, MCP_CALLS_PER_MINUTE raised);
// BENCH_MCP_WORKERS (4) clients each work on their own document for BENCH_MCP_SECONDS (5) s per phase, over
// keep-alive connections (the measuring loop is bench/_measure.ts's, as bench/sync.ts's).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { loadConfig } from '../src/config.ts';
import { createServices, closeServices } from '../src/server.ts';
import { createPerson } from '../src/accounts/people.ts';
import { createSyncKey } from '../src/sync/keys.ts';
import { spawnKiln } from '../test/support/child.ts';
import { closeConnections, machineLine, phase as measure, refusals, request, type Phase } from './_measure.ts';

const WORKERS = Number(process.env.BENCH_MCP_WORKERS ?? 4);
const SECONDS = Number(process.env.BENCH_MCP_SECONDS ?? 5);
const GOAL = 1.5;
const page = (w: number, n: number) =>
  `<!doctype html><html><body><h1>Doc ${w}</h1><p id="p">edit ${n}</p>${'<p>lorem ipsum dolor sit amet</p>\n'.repeat(350)}</body></html>`;

const show = (label: string, p: Phase) =>
  console.log(
    `${label.padEnd(44)} ${p.perSecond.toFixed(0).padStart(6)} calls/s  ${p.cpuPerCall === null ? '   ?' : p.cpuPerCall.toFixed(2).padStart(6)} ms CPU/call  (${p.calls} calls${p.refused ? `; ${refusals(p)}` : ''})`,
  );

const ratio = (label: string, mcp: Phase, sync: Phase) => {
  if (mcp.cpuPerCall === null || sync.cpuPerCall === null) return;
  const r = mcp.cpuPerCall / sync.cpuPerCall;
  console.log(
    `${label}: ${r.toFixed(2)}× the sync API's CPU per operation (goal ≤ ${GOAL}×: ${r <= GOAL ? 'met' : 'NOT met'})`,
  );
};

async function run(env: Record<string, string>) {
  const s = await createServices(loadConfig(env));
  let key: string;
  try {
    const person = await createPerson(s, {
      email: 'bench-mcp@example.com',
      username: 'benchmcp',
      password: 'Bench-mcp-password-9x',
      plan: 'maker',
      emailConfirmed: true,
    });
    ({ key } = await createSyncKey(s, person.id));
  } finally {
    await closeServices(s);
  }
  // The calls a minute of one credential raised: the bench makes thousands with one key.
  const kiln = await spawnKiln({ ...env, LOG_LEVEL: 'silent', MCP_CALLS_PER_MINUTE: '10000000' });
  const pid = kiln.child.pid;
  try {
    // One document per worker, made through the sync API.
    const docs: Array<{ id: number; name: string; etag: string; n: number }> = [];
    for (let w = 0; w < WORKERS; w++) {
      const name = `bench-mcp-${w}.html`;
      const r = await request(kiln.port, 'POST', '/_/sync/nodes', key, { type: 'site', name, content: page(w, 0) });
      const node = JSON.parse(r.text).node;
      docs.push({ id: node.id, name, etag: node.etag, n: 0 });
    }
    let id = 0;
    /** A tool call at 2025-11-25 as plain JSON-RPC: its structured answer, or why it was refused. */
    const mcp = async (name: string, args: Record<string, unknown>) => {
      const r = await request(
        kiln.port,
        'POST',
        '/_/mcp',
        key,
        { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } },
        { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      );
      if (r.status !== 200) return { refused: r.status };
      const answer = JSON.parse(r.text).result;
      return answer?.isError ? { refused: answer.structuredContent?.error?.code ?? 'error' } : answer.structuredContent;
    };
    const phase = (step: (w: number, n: number) => Promise<true | string | number>) =>
      measure({ pid, workers: WORKERS, seconds: SECONDS }, step);
    for (const d of docs) {
      await request(kiln.port, 'GET', `/_/sync/nodes/${d.id}/content`, key);
      await mcp('read_document', { path: d.name });
    }

    const syncRead = await phase(async (w) => {
      const r = await request(kiln.port, 'GET', `/_/sync/nodes/${docs[w].id}/content`, key);
      return r.status === 200 || r.status;
    });
    const mcpRead = await phase(async (w) => {
      const out = await mcp('read_document', { path: docs[w].name });
      return !out.refused || out.refused;
    });
    const clients = await Promise.all(
      docs.map(async () => {
        const c = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
        const url = new URL(`http://127.0.0.1:${kiln.port}/_/mcp`);
        await c.connect(
          new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
        );
        await c.listTools();
        return c;
      }),
    );
    const modernRead = await phase(async (w) => {
      const r = await clients[w].callTool({ name: 'read_document', arguments: { path: docs[w].name } });
      return !r.isError || 'error';
    });
    await Promise.all(clients.map((c) => c.close()));

    const syncWrite = await phase(async (w) => {
      const d = docs[w];
      const r = await request(
        kiln.port,
        'PUT',
        `/_/sync/nodes/${d.id}/content`,
        key,
        { content: page(w, d.n + 1) },
        { 'if-match': `"${d.etag}"` },
      );
      if (r.status !== 200) return r.status;
      d.etag = JSON.parse(r.text).etag;
      d.n++;
      return true;
    });
    const mcpEdit = await phase(async (w) => {
      const d = docs[w];
      const out = await mcp('edit_document', {
        path: d.name,
        etag: d.etag,
        edits: [{ op: 'replaceText', find: `edit ${d.n}<`, replace: `edit ${d.n + 1}<` }],
      });
      if (out.refused) return out.refused;
      d.etag = out.etag;
      d.n++;
      return true;
    });

    console.log(
      `A ${(page(0, 0).length / 1024).toFixed(0)} KB document, ${WORKERS} clients, ${SECONDS} s each, SQLite:`,
    );
    show('sync API GET content', syncRead);
    show('MCP read_document (2025-11-25, JSON-RPC)', mcpRead);
    show('MCP read_document (2026-07-28, SDK client)', modernRead);
    show('sync API PUT content (If-Match)', syncWrite);
    show('MCP edit_document (one replacement, etag)', mcpEdit);
    ratio('read_document (2025-11-25)', mcpRead, syncRead);
    ratio('read_document (2026-07-28)', modernRead, syncRead);
    ratio('edit_document', mcpEdit, syncWrite);
  } finally {
    await kiln.kill();
  }
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-mcp-'));
console.log(machineLine());
try {
  await run({ DATA_DIR: dataDir });
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  closeConnections();
}
