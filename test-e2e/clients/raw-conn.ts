import { connect, type Socket } from 'node:net';

/**
 * A raw Kafka connection for tests: writes bytes as given (valid, mangled or garbage), reads
 * size-prefixed response frames in order, and reports the broker closing the connection.
 */
export class RawConn {
  private buf: Buffer = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private waiter: (() => void) | undefined;
  closed = false;

  private constructor(readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      while (this.buf.length >= 4) {
        const size = this.buf.readInt32BE(0);
        if (this.buf.length < 4 + size) break;
        this.frames.push(this.buf.subarray(4, 4 + size));
        this.buf = this.buf.subarray(4 + size);
      }
      this.wake();
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConn> {
    return new Promise((resolve, reject) => {
      const s = connect({ host, port, noDelay: true });
      s.once('connect', () => resolve(new RawConn(s)));
      s.once('error', reject);
    });
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  write(b: Buffer): void {
    if (!this.closed) this.sock.write(b);
  }

  /** Waits for the next response frame, the connection closing, or the timeout. */
  async next(timeoutMs: number): Promise<{ outcome: 'frame'; frame: Buffer } | { outcome: 'closed' | 'timeout' }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.shift();
      if (f) return { outcome: 'frame', frame: f };
      if (this.closed) return { outcome: 'closed' };
      const left = deadline - Date.now();
      if (left <= 0) return { outcome: 'timeout' };
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiter = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  }

  /** Next frame or throw. */
  async response(timeoutMs = 10_000): Promise<Buffer> {
    const r = await this.next(timeoutMs);
    if (r.outcome !== 'frame') throw new Error(`expected a response, connection ${r.outcome}`);
    return r.frame;
  }

  /** Writes a request and waits for its response; throws on close or timeout. */
  async request(frame: Buffer, timeoutMs = 15_000): Promise<Buffer> {
    this.write(frame);
    return this.response(timeoutMs);
  }

  /** Waits until the broker closes the connection (responses before that are skipped). */
  async waitClosed(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.next(deadline - Date.now());
      if (r.outcome === 'closed') return true;
      if (r.outcome === 'timeout') return false;
    }
  }

  destroy(): void {
    this.sock.destroy();
  }
}
