import { connect, createServer } from 'node:net';

/** Asks the kernel for a free loopback port (bind to 0, read, close). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === 'object') resolve(addr.port);
        else reject(new Error('could not allocate a port'));
      });
    });
  });
}

/** `n` distinct free ports. */
export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const out = new Set<number>();
  while (out.size < n) out.add(await freePort(host));
  return [...out];
}

/** Whether something accepts TCP connections on host:port (within `timeoutMs`). */
export function portOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((res) => {
    const s = connect({ host, port });
    s.setTimeout(timeoutMs, () => {
      s.destroy();
      res(false);
    });
    s.once('connect', () => {
      s.destroy();
      res(true);
    });
    s.once('error', () => res(false));
  });
}
