import { Socket, connect } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CloseConnection, SocketServer, type FrameResponse } from './socket-server.js';

const logger = pino({ level: 'silent' });

function frame(payload: Buffer): Buffer {
  const f = Buffer.allocUnsafe(4 + payload.length);
  f.writeInt32BE(payload.length, 0);
  payload.copy(f, 4);
  return f;
}

/** Reads length-prefixed frames from a socket. */
function reader(s: Socket) {
  let buf = Buffer.alloc(0);
  const frames: Buffer[] = [];
  let closed = false;
  s.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const n = buf.readInt32BE(0);
      frames.push(buf.subarray(4, 4 + n));
      buf = buf.subarray(4 + n);
    }
  });
  s.on('close', () => (closed = true));
  return {
    frames,
    get closed() {
      return closed;
    },
    async waitFor(n: number) {
      for (let i = 0; i < 400 && frames.length < n && !closed; i++) await new Promise((r) => setTimeout(r, 5));
      return frames;
    },
    async waitClosed() {
      for (let i = 0; i < 400 && !closed; i++) await new Promise((r) => setTimeout(r, 5));
      return closed;
    },
  };
}

describe('socket server', () => {
  const servers: SocketServer[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const s of servers.splice(0)) await s.stop();
  });
  async function start(
    handle: (f: Buffer, conn: unknown, release: () => void) => Promise<FrameResponse>,
    maxRequestSize = 1024 * 1024,
    mayOverlap?: (f: Buffer) => boolean,
  ) {
    const srv = new SocketServer({
      listener: 'PLAINTEXT',
      host: '127.0.0.1',
      port: 0,
      maxRequestSize,
      idleTimeoutMs: 60_000,
      logger,
      handle: (f, conn, _timing, release) => handle(f, conn, release),
      ...(mayOverlap ? { mayOverlap } : {}),
    });
    servers.push(srv);
    const port = await srv.start();
    const s = connect({ host: '127.0.0.1', port });
    sockets.push(s);
    await new Promise((r) => s.once('connect', r));
    return s;
  }

  it('socket server – pipelined requests are processed one at a time and answered in order', async () => {
    let active = 0;
    let maxActive = 0;
    const s = await start(async (f) => {
      active++;
      maxActive = Math.max(maxActive, active);
      // later requests finish faster: order must still hold
      await new Promise((r) => setTimeout(r, 20 - f.readInt32BE(0)));
      active--;
      return frame(f);
    });
    const r = reader(s);
    const all = Buffer.concat(Array.from({ length: 10 }, (_, i) => frame(Buffer.from([0, 0, 0, i]))));
    // split the pipelined frames at awkward boundaries
    for (let i = 0; i < all.length; i += 7) s.write(all.subarray(i, i + 7));
    const got = await r.waitFor(10);
    expect(got.map((f) => f.readInt32BE(0))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(maxActive).toBe(1);
  });

  it('socket server – a frame over socket.request.max.bytes or with a negative size closes the connection', async () => {
    const s = await start(async (f) => frame(f), 100);
    const r = reader(s);
    const big = Buffer.alloc(4);
    big.writeInt32BE(101, 0);
    s.write(big);
    expect(await r.waitClosed()).toBe(true);
    const s2 = await start(async (f) => frame(f), 100);
    const r2 = reader(s2);
    const neg = Buffer.alloc(4);
    neg.writeInt32BE(-5, 0);
    s2.write(neg);
    expect(await r2.waitClosed()).toBe(true);
  });

  it('socket server – a handler asking to close closes only that connection; null sends nothing', async () => {
    const s = await start(async (f) => {
      if (f[0] === 1) throw new CloseConnection('bad');
      if (f[0] === 2) return null;
      return [frame(Buffer.from('a')), frame(Buffer.from('b'))];
    });
    const r = reader(s);
    s.write(frame(Buffer.from([2])));
    s.write(frame(Buffer.from([0])));
    expect((await r.waitFor(2)).map((f) => f.toString())).toEqual(['a', 'b']);
    s.write(frame(Buffer.from([1])));
    expect(await r.waitClosed()).toBe(true);
  });

  it('socket server – a client that does not read stops being read (backpressure) and nothing is lost', async () => {
    let handled = 0;
    const big = Buffer.alloc(512 * 1024, 7);
    const s = await start(async () => {
      handled++;
      return frame(big);
    });
    s.pause(); // the client does not read its responses
    const n = 64;
    for (let i = 0; i < n; i++) s.write(frame(Buffer.from([i])));
    // the server stops processing once its writes back up (kernel buffers are a few MiB at most)
    for (let i = 0; i < 100; i++) await new Promise((r) => setTimeout(r, 10));
    const stalledAt = handled;
    expect(stalledAt).toBeLessThan(n);
    const r = reader(s);
    s.resume();
    const got = await r.waitFor(n);
    expect(got).toHaveLength(n);
    expect(handled).toBe(n);
  });

  it('socket server – a released request lets overlappable ones start; answers stay in request order', async () => {
    // payload: [kind, index]; kind 1 overlaps (and releases), kind 2 does not
    const started: number[] = [];
    const finish = new Map<number, () => void>();
    let active = 0;
    let maxActive = 0;
    const s = await start(
      async (f, _conn, release) => {
        const i = f[1]!;
        started.push(i);
        active++;
        maxActive = Math.max(maxActive, active);
        if (f[0] === 1) {
          release();
          await new Promise<void>((r) => finish.set(i, r));
        }
        active--;
        return frame(Buffer.from([i]));
      },
      1024,
      (f) => f[0] === 1,
    );
    const r = reader(s);
    const all = Buffer.concat([0, 1, 2, 3].map((i) => frame(Buffer.from([1, i]))).concat(frame(Buffer.from([2, 4]))));
    for (let i = 0; i < all.length; i += 3) s.write(all.subarray(i, i + 3));
    for (let i = 0; i < 400 && started.length < 4; i++) await new Promise((res) => setTimeout(res, 5));
    // all four overlappable requests run at once; the fifth waits for their answers
    expect(started).toEqual([0, 1, 2, 3]);
    expect(maxActive).toBe(4);
    // finishing out of order: nothing is written before request 0 is answered
    finish.get(3)!();
    finish.get(1)!();
    await new Promise((res) => setTimeout(res, 30));
    expect(r.frames).toHaveLength(0);
    expect(started).toEqual([0, 1, 2, 3]);
    finish.get(0)!();
    finish.get(2)!();
    const got = await r.waitFor(5);
    expect(got.map((f) => f[0])).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });

  it('socket server – without release or mayOverlap, requests still run one at a time', async () => {
    let active = 0;
    let maxActive = 0;
    const s = await start(
      async (f, _conn, release) => {
        active++;
        maxActive = Math.max(maxActive, active);
        if (f[0] === 1) release(); // released, but the next request is not allowed to overlap
        await new Promise((res) => setTimeout(res, 10));
        active--;
        return frame(Buffer.from([f[1]!]));
      },
      1024,
      (f) => f[0] === 3,
    );
    const r = reader(s);
    s.write(Buffer.concat([0, 1, 2].map((i) => frame(Buffer.from([1, i]))).concat(frame(Buffer.from([2, 3])))));
    const got = await r.waitFor(4);
    expect(got.map((f) => f[0])).toEqual([0, 1, 2, 3]);
    expect(maxActive).toBe(1);
  });

  it('socket server – answers to requests that arrived together leave in one vectored write', async () => {
    const s = await start(async (f) => {
      await Promise.resolve();
      return frame(f);
    });
    const r = reader(s);
    const writev = vi.spyOn(Socket.prototype as unknown as { _writev: (chunks: unknown[], cb: () => void) => void }, '_writev');
    try {
      s.write(Buffer.concat([0, 1, 2, 3].map((i) => frame(Buffer.from([i])))));
      const got = await r.waitFor(4);
      expect(got.map((f) => f[0])).toEqual([0, 1, 2, 3]);
      // the client's single write is no writev; the server's four answers are one
      const batches = writev.mock.calls.map((c) => c[0].length);
      expect(batches).toEqual([4]);
    } finally {
      writev.mockRestore();
    }
  });

  it('socket server – an answer is not held back while a later request of the same arrival waits', async () => {
    let releaseB!: () => void;
    const bWaits = new Promise<void>((res) => (releaseB = res));
    const s = await start(async (f) => {
      if (f[0] === 1) await bWaits;
      return frame(f);
    });
    const r = reader(s);
    s.write(Buffer.concat([0, 1, 2].map((i) => frame(Buffer.from([i])))));
    // A's answer arrives while B is still waiting (C queues behind B: answers go in order)
    const first = await r.waitFor(1);
    expect(first.map((f) => f[0])).toEqual([0]);
    releaseB();
    const all = await r.waitFor(3);
    expect(all.map((f) => f[0])).toEqual([0, 1, 2]);
  });

  it('socket server – a size prefix split over reads is put together; a negative one split so still closes', async () => {
    const s = await start(async (f) => frame(f));
    const r = reader(s);
    const payload = Buffer.from('x'.repeat(300));
    const whole = frame(payload);
    // the pauses shape the input (each piece its own read on the server), they wait for no result
    for (const part of [whole.subarray(0, 1), whole.subarray(1, 3), whole.subarray(3)]) {
      s.write(part);
      await new Promise((res) => setTimeout(res, 20));
    }
    expect((await r.waitFor(1)).map((f) => f.length)).toEqual([300]);
    const negative = Buffer.alloc(4);
    negative.writeInt32BE(-5, 0);
    s.write(negative.subarray(0, 2));
    await new Promise((res) => setTimeout(res, 20));
    s.write(negative.subarray(2));
    expect(await r.waitClosed()).toBe(true);
  });
});
