// A TCP proxy on loopback that a test controls, to put between Kiln and a server it depends on:
// `cut()` drops every open connection and refuses new ones (a crash or a lost network), `restore()`
// lets connections through again. `deafen()` keeps connections open and requests flowing but drops
// every answer (a request that ran and whose answer was lost); `hear()` lets answers through again.
// `hold(only)` keeps back the answers `only` picks (others pass) until `release()` passes them on, in
// the order they came (a slow link, as slow as the test needs). `loseNextCommitAnswer()` lets the next
// COMMIT through and drops its connection when the answer comes (the save took; the client cannot know),
// with `thenCut` refusing every connection after it too.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
  deafen(): void;
  hear(): void;
  hold(only: (chunk: Buffer) => boolean): void;
  release(): void;
  /** The next PostgreSQL COMMIT to pass reaches the server, and its answer never comes back: that
   *  connection is dropped when the answer arrives (a link lost at the worst moment). */
  loseNextCommitAnswer(opts?: { thenCut?: boolean }): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let open = true;
  let deaf = false;
  let held: ((chunk: Buffer) => boolean) | null = null;
  const holding: Array<{ to: net.Socket; chunk: Buffer }> = [];
  const sockets = new Set<net.Socket>();
  let loseCommit = false;
  let cutAfterLoss = false;
  /** A simple-protocol Query message of `commit` (how Kysely's pg driver commits). */
  const COMMIT = Buffer.from('Q\0\0\0\x0bcommit\0', 'latin1');
  const ending = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (!open) return client.destroy();
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    let losing = false;
    client.on('data', (chunk: Buffer) => {
      if (loseCommit && chunk.includes(COMMIT)) {
        loseCommit = false;
        losing = true;
      }
    });
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (losing) {
        client.destroy();
        upstream.destroy();
        if (cutAfterLoss) {
          // And the database stays unreachable: nothing can be read back.
          open = false;
          for (const s of sockets) s.destroy();
        }
        return;
      }
      if (deaf) return;
      if (held?.(chunk)) holding.push({ to: client, chunk });
      else client.write(chunk);
    });
    // The server closing its end (a terminated backend) closes the client's, after what is held.
    upstream.on('end', () => {
      if (holding.some((h) => h.to === client)) ending.add(client);
      else client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
    deafen() {
      deaf = true;
    },
    hear() {
      deaf = false;
    },
    hold(only: (chunk: Buffer) => boolean) {
      held = only;
    },
    loseNextCommitAnswer(opts = {}) {
      loseCommit = true;
      cutAfterLoss = opts.thenCut ?? false;
    },
    release() {
      held = null;
      for (const { to, chunk } of holding.splice(0)) if (!to.destroyed) to.write(chunk);
      for (const to of ending) to.end();
      ending.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
