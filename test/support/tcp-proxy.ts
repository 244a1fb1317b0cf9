// A TCP proxy on loopback that a test controls, to put between Kiln and a server it depends on:
// `cut()` drops every open connection and refuses new ones (a crash or a lost network), `restore()`
// lets connections through again. `deafen()` keeps connections open and requests flowing but drops
// every answer (a request that ran and whose answer was lost); `hear()` lets answers through again.
// `slow(ms, only?)` holds every answer (or those `only` picks) that long before passing it on (a slow
// link; the order of the answers held is kept).
import net from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
  deafen(): void;
  hear(): void;
  slow(ms: number, only?: (chunk: Buffer) => boolean): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let open = true;
  let deaf = false;
  let delayMs = 0;
  let delayed: (chunk: Buffer) => boolean = () => true;
  const sockets = new Set<net.Socket>();
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
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (deaf) return;
      // Equal delays keep the order (timers of one duration run in the order they were set).
      if (delayMs > 0 && delayed(chunk)) setTimeout(() => client.destroyed || client.write(chunk), delayMs);
      else client.write(chunk);
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
    slow(ms: number, only: (chunk: Buffer) => boolean = () => true) {
      delayMs = ms;
      delayed = only;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
