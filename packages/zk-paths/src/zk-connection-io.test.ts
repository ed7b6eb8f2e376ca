import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer, connect, type Socket } from 'node:net';
import { installZkConnectionIo } from './zk-connection-io.js';

const require = createRequire(import.meta.url);

interface TestConnectionManager {
  state: unknown;
  socket: { destroyed: boolean; destroy(): void } | undefined;
  watcherManager: { registerDataWatcher(path: string, watcher: (e: { getPath(): string }) => void): void };
  onSocketData(chunk: Buffer): void;
}

/** The library's ConnectionManager, connected (as after the session handshake) to a stand-in socket. */
function connected(): TestConnectionManager {
  installZkConnectionIo();
  const ConnectionManager = require('node-zookeeper-client/lib/ConnectionManager.js') as {
    new (servers: string, options: object, onState: () => void): TestConnectionManager;
    STATES: { CONNECTED: unknown };
  };
  const cm = new ConnectionManager('127.0.0.1:2181', { sessionTimeout: 30_000, spinDelay: 1000, retries: 0 }, () => undefined);
  cm.state = ConnectionManager.STATES.CONNECTED;
  cm.socket = socket();
  return cm;
}

function socket(): { destroyed: boolean; destroy(): void } {
  return {
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  };
}

/**
 * ZooKeeper's watch notification as it is on the wire: length, ReplyHeader (xid -1, zxid, err 0),
 * WatcherEvent (type 3 NodeDataChanged, state 3 SyncConnected, path).
 */
function notification(path: string): Buffer {
  const p = Buffer.from(path, 'utf8');
  const b = Buffer.alloc(4 + 16 + 8 + 4 + p.length);
  let at = b.writeInt32BE(b.length - 4, 0);
  at = b.writeInt32BE(-1, at);
  at = b.writeBigInt64BE(42n, at);
  at = b.writeInt32BE(0, at);
  at = b.writeInt32BE(3, at);
  at = b.writeInt32BE(3, at);
  at = b.writeInt32BE(p.length, at);
  p.copy(b, at);
  return b;
}

/** Data watchers on `paths`; the paths whose watcher fired, in order. */
function watch(cm: TestConnectionManager, paths: string[]): string[] {
  const fired: string[] = [];
  for (const path of paths) cm.watcherManager.registerDataWatcher(path, (e) => fired.push(e.getPath()));
  return fired;
}

const paths = Array.from({ length: 500 }, (_, i) => `/brokers/topics/scale/partitions/${i}/state`);

describe('zk connection io', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('zk connection io – 500 notifications in one chunk are handled in order without copying the chunk', () => {
    const cm = connected();
    const fired = watch(cm, paths);
    const stream = Buffer.concat(paths.map(notification));
    const concat = vi.spyOn(Buffer, 'concat');
    cm.onSocketData(stream);
    expect(fired).toEqual(paths);
    expect(concat).not.toHaveBeenCalled();
  });

  it('zk connection io – packets split across chunks at any byte are put together', () => {
    const cm = connected();
    const fired = watch(cm, paths);
    const stream = Buffer.concat(paths.map(notification));
    for (let at = 0; at < stream.length; at += 7) cm.onSocketData(stream.subarray(at, Math.min(stream.length, at + 7)));
    expect(fired).toEqual(paths);
  });

  it('zk connection io – an incomplete packet from a previous connection is dropped, not glued to the next one', () => {
    const cm = connected();
    const fired = watch(cm, ['/a', '/b']);
    const a = notification('/a');
    cm.onSocketData(a.subarray(0, 10));
    cm.socket = socket(); // reconnected
    cm.onSocketData(notification('/b'));
    expect(fired).toEqual(['/b']);
  });

  it('zk connection io – a negative length drops the connection and reads no further', () => {
    const cm = connected();
    const fired = watch(cm, ['/a']);
    const s = cm.socket!;
    const bad = Buffer.alloc(4);
    bad.writeInt32BE(-5, 0);
    cm.onSocketData(Buffer.concat([bad, notification('/a')]));
    expect(s.destroyed).toBe(true);
    expect(fired).toEqual([]);
  });

  it('zk connection io – installing twice keeps one reader and writer', () => {
    const first = installZkConnectionIo();
    expect(installZkConnectionIo()).toBe(first);
  });

  it('zk connection io – requests queued in one turn of the event loop leave in a few socket writes, in order', async () => {
    const received: Buffer[] = [];
    const server = createServer((s) => s.on('data', (d) => received.push(d)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const client = await new Promise<Socket>((r) => {
      const s = connect({ port, host: '127.0.0.1' }, () => r(s));
    });
    try {
      const cm = connected() as TestConnectionManager & { socket: Socket; queue(request: unknown, cb?: () => void): void };
      cm.socket = client;
      const jute = require('node-zookeeper-client/lib/jute/index.js') as {
        OP_CODES: { GET_DATA: number };
        Request: new (header: unknown, payload: unknown) => unknown;
        protocol: { RequestHeader: new () => { type: number }; GetDataRequest: new () => { path: string; watch: boolean } };
      };
      const syscalls = { write: 0, writev: 0 };
      const sock = client as unknown as { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
      const write = sock._write.bind(client);
      const writev = sock._writev.bind(client);
      sock._write = (...a) => (syscalls.write++, write(...a));
      sock._writev = (...a) => (syscalls.writev++, writev(...a));
      const n = 1000;
      let expected = 0;
      for (let i = 0; i < n; i++) {
        const header = new jute.protocol.RequestHeader();
        header.type = jute.OP_CODES.GET_DATA;
        const payload = new jute.protocol.GetDataRequest();
        payload.path = `/brokers/topics/t/partitions/${i}/state`;
        payload.watch = false;
        expected += 4 + 8 + 4 + payload.path.length + 1;
        cm.queue(new jute.Request(header, payload));
      }
      const total = () => received.reduce((a, b) => a + b.length, 0);
      while (total() < expected) await new Promise((r) => setTimeout(r, 5));
      // a handful of writes (the socket's buffer limit splits them), not one per request
      expect(syscalls.write + syscalls.writev).toBeLessThan(n / 10);
      // every request once, in order, with consecutive xids
      const all = Buffer.concat(received);
      const paths: string[] = [];
      for (let at = 0; at < all.length;) {
        const size = all.readInt32BE(at);
        const xid = all.readInt32BE(at + 4);
        expect(xid).toBe(paths.length);
        const len = all.readInt32BE(at + 12);
        paths.push(all.toString('utf8', at + 16, at + 16 + len));
        at += 4 + size;
      }
      expect(paths).toEqual(Array.from({ length: n }, (_, i) => `/brokers/topics/t/partitions/${i}/state`));
    } finally {
      client.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
