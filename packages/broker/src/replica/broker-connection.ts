import { connect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { decodeResponse, encodeRequest, type ApiKey, type ApiRequestMap, type ApiResponseMap } from '@samsa/protocol';

/** Sends one request on a connection being set up (before other requests may use it). */
export type ConnectionSend = <K extends ApiKey>(apiKey: K, version: number, body: ApiRequestMap[K]) => Promise<ApiResponseMap[K]>;

/**
 * Runs on each new connection before its first request (inter-broker SASL: replica/inter-broker-sasl.ts);
 * resolves with how long the connection may be used (ms, 0: no limit), rejects to drop it.
 */
export type ConnectHook = (send: ConnectionSend) => Promise<{ sessionLifetimeMs: number }>;

/**
 * A minimal Kafka-protocol client connection between brokers (replica fetchers): one request in
 * flight at a time, correlation ids checked, a timeout per request, and connection loss failing the
 * pending request. Reconnects lazily on the next request.
 */
export class BrokerConnection {
  private socket: Socket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private correlationId = 0;
  private pending: { id: number; apiKey: number; resolve: (frame: Buffer) => void; reject: (e: Error) => void; sentAt: number } | undefined;
  /**
   * One timer for the connection's requests, re-armed per request (`refresh`) rather than a new
   * setTimeout and clearTimeout for each; when it fires after its request was answered, it re-arms
   * for the one pending by then, if any, and otherwise stays idle. Unref'd: the socket of a pending
   * request keeps the process alive, the timer alone does not.
   */
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The socket being set up by `onConnect`. */
  private connecting: Socket | undefined;
  /** When to replace the connection (its SASL session ends: KIP-368), epoch ms. */
  private renewAt = Infinity;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly clientId: string,
    private readonly timeoutMs: number,
    private readonly onConnect?: ConnectHook,
    /** Connect with TLS (the inter-broker listener is SSL or SASL_SSL): the client-side options. */
    private readonly tls?: ConnectionOptions,
  ) {}

  private async ensure(): Promise<Socket> {
    if (this.socket && !this.socket.destroyed) return this.socket;
    if (this.closed) throw new Error('connection closed');
    const tls = this.tls;
    const s = tls ? tlsConnect({ ...tls, host: this.host, port: this.port }).setNoDelay(true) : connect({ host: this.host, port: this.port, noDelay: true });
    this.buf = Buffer.alloc(0);
    this.chunks.length = 0;
    this.buffered = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`connect to ${this.host}:${this.port} timed out`));
      }, this.timeoutMs);
      s.once(tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        resolve();
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    s.on('data', (d: Buffer) => this.onData(d));
    s.on('error', () => undefined);
    s.on('close', () => {
      // a socket already replaced (dropped after a timeout) has no request left to fail: the one
      // pending now went out on its successor
      if (this.socket !== s && this.connecting !== s) return;
      if (this.socket === s) this.socket = undefined;
      this.failPending(new Error(`connection to ${this.host}:${this.port} closed`));
    });
    if (this.onConnect) {
      this.connecting = s;
      try {
        const { sessionLifetimeMs } = await this.onConnect((apiKey, version, body) => this.sendOn(s, apiKey, version, body));
        // renewed before the broker would close it (Kafka's clients re-authenticate at 85-95 %)
        this.renewAt = sessionLifetimeMs > 0 ? Date.now() + sessionLifetimeMs * 0.85 : Infinity;
      } catch (err) {
        s.destroy();
        throw err;
      } finally {
        this.connecting = undefined;
      }
      if (this.closed) {
        s.destroy();
        throw new Error('connection closed');
      }
    }
    this.socket = s;
    return s;
  }

  private onData(d: Buffer): void {
    // chunks are collected and joined once the frame is complete (joining on every chunk would copy
    // a multi-megabyte fetch response over and over)
    this.chunks.push(d);
    this.buffered += d.length;
    if (this.buf.length + this.buffered < 4) return;
    if (this.buf.length < 4) this.join();
    const need = 4 + this.buf.readInt32BE(0);
    if (this.buf.length + this.buffered < need) return;
    this.join();
    while (this.buf.length >= 4) {
      const size = this.buf.readInt32BE(0);
      if (this.buf.length < 4 + size) return;
      const frame = this.buf.subarray(4, 4 + size);
      this.buf = this.buf.subarray(4 + size);
      const p = this.pending;
      if (p && frame.readInt32BE(0) === p.id) {
        this.pending = undefined;
        p.resolve(frame);
      }
    }
  }

  private join(): void {
    if (this.chunks.length === 0) return;
    this.buf = this.buf.length === 0 && this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat([this.buf, ...this.chunks]);
    this.chunks.length = 0;
    this.buffered = 0;
  }

  private failPending(err: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    p.reject(err);
  }

  private onTimer(): void {
    const p = this.pending;
    if (!p) return;
    const left = p.sentAt + this.timeoutMs - Date.now();
    if (left > 0) {
      // the request pending now was sent after the one the timer was armed for
      this.timer = setTimeout(() => this.onTimer(), left).unref();
      return;
    }
    const s = this.socket;
    this.failPending(new Error(`request ${p.apiKey} to ${this.host}:${this.port} timed out after ${this.timeoutMs} ms`));
    s?.destroy();
  }

  async send<K extends ApiKey>(apiKey: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
    let live = this.socket;
    if (live && !this.pending && Date.now() >= this.renewAt) {
      this.socket = undefined;
      live.destroy();
      live = undefined;
    }
    const s = live && !live.destroyed ? live : await this.ensure();
    return this.sendOn(s, apiKey, version, body);
  }

  private async sendOn<K extends ApiKey>(s: Socket, apiKey: K, version: number, body: ApiRequestMap[K]): Promise<ApiResponseMap[K]> {
    if (this.pending) throw new Error('a request is already in flight');
    const id = (this.correlationId = (this.correlationId + 1) & 0x7fffffff);
    const frame = await new Promise<Buffer>((resolve, reject) => {
      this.pending = { id, apiKey, resolve, reject, sentAt: Date.now() };
      if (this.timer) this.timer.refresh();
      else this.timer = setTimeout(() => this.onTimer(), this.timeoutMs).unref();
      s.write(encodeRequest(apiKey, version, id, this.clientId, body));
    });
    return decodeResponse(apiKey, version, frame).body;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.failPending(new Error('connection closed'));
    this.socket?.destroy();
    this.socket = undefined;
    this.connecting?.destroy();
  }
}
