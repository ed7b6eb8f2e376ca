import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { latencyTrace } from '../trace/latency-trace.js';
import type { SecurityProtocol } from '../config/definitions.js';
import type { KafkaPrincipal } from '../security/kafka-principal.js';
import type { ServerTls } from '../security/ssl-factory.js';
import { tlsPeerPrincipal } from '../security/tls-principal.js';

export interface ConnectionInfo {
  id: number;
  remote: string;
  listener: string;
  /** The listener's security protocol; absent means PLAINTEXT. */
  securityProtocol?: SecurityProtocol;
  /**
   * Who the connection is (set by TLS client authentication or SASL); absent means
   * User:ANONYMOUS. The authorizer and quotas read it.
   */
  principal?: KafkaPrincipal;
  /** Quota throttling (KIP-219): the connection is not read until this time (epoch ms). */
  mutedUntilMs?: number;
}

/** Thrown by a frame handler to close the connection (Kafka closes on some protocol errors). */
export class CloseConnection extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CloseConnection';
  }
}

/**
 * What the handler returns: one frame (size prefix included), several buffers written in order
 * (so record data can go to the socket without being copied into one frame), or null for no
 * response (acks=0 produce).
 */
export type FrameResponse = Buffer | Buffer[] | null;

/**
 * One request's timestamps (performance.now() ms), filled as it moves through the socket server
 * and the request handler: what Kafka's RequestMetrics time (queue, local, remote, response queue,
 * send). Handlers add the time they waited in a purgatory to `remoteMs`.
 */
export interface RequestTiming {
  /** The request's last byte arrived. */
  receivedAt: number;
  /** The handler took it (requests of a connection are handled one at a time, in order). */
  startedAt: number;
  /** The handler returned the response. */
  handledAt: number;
  /** The response was handed to the socket. */
  sendStartedAt: number;
  /** Time spent waiting in a purgatory (DelayedProduce, DelayedFetch, group joins). */
  remoteMs: number;
  throttleMs: number;
  /** The request's API key, -1 until decoded. */
  apiKey: number;
}

export interface SocketServerOptions {
  listener: string;
  /** The listener's security protocol (ConnectionInfo.securityProtocol). Default PLAINTEXT. */
  securityProtocol?: SecurityProtocol;
  /** Serve TLS (SSL and SASL_SSL listeners): the listener's server context (security/ssl-factory.ts). */
  tls?: ServerTls;
  /** A TLS handshake not done within this time closes the connection. Default 10 000 ms. */
  tlsHandshakeTimeoutMs?: number;
  host: string;
  port: number;
  /** socket.request.max.bytes: larger frames close the connection. */
  maxRequestSize: number;
  /** connections.max.idle.ms: idle connections are closed. */
  idleTimeoutMs: number;
  /** Stop reading from a connection when this many request bytes are waiting. */
  maxBufferedBytes?: number;
  logger: Logger;
  /**
   * Handles one request. Until it settles or calls `release`, the connection's next request waits;
   * after `release` (the handler only waits now, e.g. a Produce for acks=all) a next request that
   * `mayOverlap` allows starts at once. Responses are written in request order either way.
   */
  handle: (frame: Buffer, conn: ConnectionInfo, timing: RequestTiming, release: () => void) => Promise<FrameResponse>;
  /** Whether `frame` may start while earlier requests that released the connection are unanswered. */
  mayOverlap?: (frame: Buffer) => boolean;
  /** Called once a request's response is written out (or right away when there is none). */
  onRequestComplete?: (timing: RequestTiming, sentAt: number) => void;
  /**
   * Per connection, something that sees each frame before `handle` (SASL authentication, Kafka's
   * SaslServerAuthenticator); `close` closes the connection.
   */
  interceptor?: (conn: ConnectionInfo, close: () => void) => FrameInterceptor;
}

/** Sees a connection's frames before the request handler (see SocketServerOptions.interceptor). */
export interface FrameInterceptor {
  /** The largest frame accepted now (undefined: socket.request.max.bytes). */
  maxFrameSize(): number | undefined;
  /** The answer to a frame it takes itself, or undefined to hand the frame to `handle`. May throw CloseConnection. */
  intercept(frame: Buffer, timing: RequestTiming): Promise<FrameResponse> | undefined;
  /** The connection closed. */
  dispose?(): void;
}

/** Requests of one connection handled but not yet answered, at most (overlap beyond waits). */
const MAX_UNANSWERED = 16;

/**
 * Kafka's SocketServer for one listener: length-prefixed frames; requests of a connection are
 * processed one at a time and answered in order (Kafka mutes a channel while a request is in
 * flight), so clients can pipeline — except that a handler may release the connection once it only
 * waits (acks=all Produce after its append), letting the next Produce start (`mayOverlap`) while
 * its answer still goes out in order; a connection whose responses are not drained stops being read.
 */
export class SocketServer {
  private server: Server | undefined;
  private readonly connections = new Set<Connection>();
  private nextId = 1;
  boundPort = 0;

  constructor(private readonly o: SocketServerOptions) {}

  async start(): Promise<number> {
    const tls = this.o.tls;
    const server = tls
      ? createTlsServer({ ...tls.options, noDelay: true, handshakeTimeout: this.o.tlsHandshakeTimeoutMs ?? 10_000 }, (s) => this.acceptTls(s, tls))
      : createServer({ noDelay: true }, (s) => this.accept(s));
    if (tls) {
      // a failed handshake (a plaintext client, garbage, an untrusted certificate, a timeout) closes
      // only that connection; Node destroys the socket
      server.on('tlsClientError', (err, s) => {
        this.o.logger.info(
          { listener: this.o.listener, remote: `${s.remoteAddress}:${s.remotePort}`, err: err.message },
          'TLS handshake failed; connection closed',
        );
        // Node leaves the socket open after some failures (a handshake timeout)
        s.destroy();
      });
    }
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host || undefined, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    this.boundPort = addr && typeof addr === 'object' ? addr.port : this.o.port;
    this.o.logger.info({ listener: this.o.listener, host: this.o.host, port: this.boundPort }, 'listening');
    return this.boundPort;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  private accept(socket: Socket, principal?: KafkaPrincipal): void {
    const conn = new Connection(this.nextId++, socket, this.o, () => this.connections.delete(conn), principal);
    this.connections.add(conn);
  }

  /** A connection whose TLS handshake completed: its principal from the client certificate (SSL). */
  private acceptTls(socket: TLSSocket, tls: ServerTls): void {
    const peer = tlsPeerPrincipal(socket, tls);
    if ('error' in peer) {
      this.o.logger.info(
        { listener: this.o.listener, remote: `${socket.remoteAddress}:${socket.remotePort}`, reason: peer.error },
        'TLS client authentication failed; connection closed',
      );
      socket.destroy();
      return;
    }
    this.accept(socket, this.o.securityProtocol === 'SSL' ? peer.principal : undefined);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const c of this.connections) c.close();
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}

const API_NAMES: Record<number, string> = { 0: 'produce', 1: 'fetch' };
const apiName = (key: number) => API_NAMES[key] ?? `api${key}`;

class Connection {
  private readonly chunks: Buffer[] = [];
  /** Arrival time of each chunk (parallel to `chunks`): a frame was received when its last chunk was. */
  private readonly chunkTimes: number[] = [];
  /** Arrival time of the frame `nextFrame` returned last. */
  private frameReceivedAt = 0;
  private buffered = 0;
  /** Reused for frames that arrive over several chunks (one request in flight per connection). */
  private scratch: Buffer | undefined;
  private processing = false;
  /** Writes are held (socket.cork) while requests that arrived together are handled. */
  private corked = false;
  /** Requests handled or being handled whose responses are not written yet, oldest first. */
  private readonly unanswered: Array<Promise<void>> = [];
  /** Resolves once every response so far is written: each response is chained onto it. */
  private writeTail: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly info: ConnectionInfo;
  private readonly interceptor: FrameInterceptor | undefined;
  private readonly log: Logger;
  private readonly maxBuffered: number;
  /** Tracing only: bytes received and taken off so far, and [bytes received, arrival time] per chunk. */
  private received = 0;
  private consumed = 0;
  private readonly arrivals: Array<[number, number]> = [];

  constructor(
    id: number,
    private readonly socket: Socket,
    private readonly o: SocketServerOptions,
    private readonly onClose: () => void,
    principal?: KafkaPrincipal,
  ) {
    this.info = {
      id,
      remote: `${socket.remoteAddress}:${socket.remotePort}`,
      listener: o.listener,
      ...(o.securityProtocol ? { securityProtocol: o.securityProtocol } : {}),
      ...(principal ? { principal } : {}),
    };
    this.log = o.logger.child({ connection: id, remote: this.info.remote });
    this.interceptor = o.interceptor?.(this.info, () => this.close());
    // never below one maximal frame, so a paused connection always holds a complete request
    this.maxBuffered = Math.max(o.maxBufferedBytes ?? 4 * 1024 * 1024, o.maxRequestSize + 4);
    socket.setTimeout(o.idleTimeoutMs);
    socket.on('timeout', () => {
      this.log.debug('closing idle connection');
      this.close();
    });
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (err) => this.log.debug({ err }, 'connection error'));
    socket.on('close', () => {
      this.closed = true;
      this.interceptor?.dispose?.();
      this.onClose();
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    if (latencyTrace) {
      this.received += d.length;
      this.arrivals.push([this.received, latencyTrace.now()]);
    }
    this.chunks.push(d);
    this.chunkTimes.push(performance.now());
    this.buffered += d.length;
    if (this.buffered > this.maxBuffered) this.socket.pause();
    if (!this.processing) void this.drainFrames();
  }

  /** Takes the next complete frame off the buffer, or undefined. */
  private nextFrame(): Buffer | undefined {
    if (this.buffered < 4) return undefined;
    const size = this.peekSize();
    const max = this.interceptor?.maxFrameSize() ?? this.o.maxRequestSize;
    if (size < 0 || size > max) {
      this.log.warn(
        { size, max },
        'request size out of range (socket.request.max.bytes, or sasl.server.max.receive.size before authentication); closing connection',
      );
      this.close();
      return undefined;
    }
    if (this.buffered < 4 + size) return undefined;
    const head = this.chunks[0]!;
    if (head.length >= 4 + size) {
      // the whole frame sits in one chunk: a view, no copy
      const frame = head.subarray(4, 4 + size);
      this.frameReceivedAt = this.chunkTimes[0]!;
      if (head.length === 4 + size) this.shiftChunk();
      else this.chunks[0] = head.subarray(4 + size);
      this.buffered -= 4 + size;
      return frame;
    }
    // Spread over chunks: copied once into this connection's reusable buffer when no earlier
    // request is still unanswered (so none can hold the previous frame), else into a new one.
    let frame: Buffer;
    if (this.unanswered.length > 0) frame = Buffer.allocUnsafe(size);
    else {
      if (!this.scratch || this.scratch.length < size) this.scratch = Buffer.allocUnsafe(size);
      frame = this.scratch.subarray(0, size);
    }
    this.skip(4);
    let filled = 0;
    while (filled < size) {
      const c = this.chunks[0]!;
      const n = Math.min(c.length, size - filled);
      c.copy(frame, filled, 0, n);
      filled += n;
      this.frameReceivedAt = this.chunkTimes[0]!;
      if (n === c.length) this.shiftChunk();
      else this.chunks[0] = c.subarray(n);
    }
    this.buffered -= size;
    return frame;
  }

  private shiftChunk(): void {
    this.chunks.shift();
    this.chunkTimes.shift();
  }

  /** Drops `n` buffered bytes (the size prefix). */
  private skip(n: number): void {
    this.buffered -= n;
    while (n > 0) {
      const c = this.chunks[0]!;
      if (c.length <= n) {
        n -= c.length;
        this.shiftChunk();
      } else {
        this.chunks[0] = c.subarray(n);
        n = 0;
      }
    }
  }

  /** Whether a whole frame (size prefix included) is buffered. */
  private hasCompleteFrame(): boolean {
    if (this.buffered < 4) return false;
    const size = this.peekSize();
    return size < 0 || this.buffered >= 4 + size;
  }

  /**
   * Responses to requests that arrived together leave in one write: when a request starts while
   * another complete one is buffered behind it, the socket is corked until the promise jobs now
   * queued have run (a microtask, queued first, schedules the uncork on the next tick, which Node
   * runs once the microtask queue is empty), so the answers of handlers that complete without I/O
   * in the meantime (Produce appends, most requests) are written together. A response that waits
   * (a purgatory, a disk read) is written after that, uncorked: a cork never outlives the turn.
   * Under load this cuts the system calls and the client's wake-ups, and the client then answers
   * several responses with one write too; a lone request is answered as before.
   */
  private holdWrites(): void {
    if (this.corked || !this.hasCompleteFrame()) return;
    this.corked = true;
    this.socket.cork();
    queueMicrotask(() =>
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      }),
    );
  }

  private peekSize(): number {
    const head = this.chunks[0]!;
    if (head.length >= 4) return head.readInt32BE(0);
    // the prefix spans chunks: gather its four bytes only (not every buffered byte)
    let size = 0;
    let got = 0;
    for (const c of this.chunks) {
      for (let i = 0; i < c.length && got < 4; i++, got++) size = size * 256 + c[i]!;
      if (got === 4) break;
    }
    return size | 0;
  }

  /** Tracing only: when the last byte of the frame just taken arrived. */
  private frameArrival(size: number): number {
    this.consumed += 4 + size;
    const a = this.arrivals;
    while (a.length > 1 && a[0]![0] < this.consumed) a.shift();
    return a[0]?.[1] ?? 0;
  }

  private async drainFrames(): Promise<void> {
    this.processing = true;
    try {
      for (;;) {
        if (this.closed) return;
        const frame = this.nextFrame();
        if (!frame) break;
        const traced = latencyTrace
          ? { api: frame.length >= 2 ? apiName(frame.readInt16BE(0)) : 'short', arrived: this.frameArrival(frame.length), started: 0 }
          : undefined;
        if (this.buffered <= this.maxBuffered && this.socket.isPaused()) this.socket.resume();
        const receivedAt = this.frameReceivedAt;
        if (this.unanswered.length > 0) {
          // an earlier request let go of the connection (it only waits now): this one may start at
          // once if it is allowed to overlap, else after every earlier response is out
          if (!this.o.mayOverlap?.(frame)) await this.writeTail;
          while (this.unanswered.length >= MAX_UNANSWERED) await this.unanswered[0];
          if (this.closed) return;
        }
        if (traced && latencyTrace) traced.started = latencyTrace.now();
        const startedAt = performance.now();
        const timing: RequestTiming = { receivedAt, startedAt, handledAt: startedAt, sendStartedAt: startedAt, remoteMs: 0, throttleMs: 0, apiKey: -1 };
        // the next request waits until this one is answered or has released the connection: one
        // gate opened by whichever comes first (Promise.race would settle its result twice, which
        // V8 reports to Node as a multiple resolve each time)
        let openGate!: () => void;
        let gateOpen = false;
        const gate = new Promise<void>((r) => (openGate = r));
        const release = (): void => {
          if (gateOpen) return;
          gateOpen = true;
          openGate();
        };
        this.holdWrites();
        // settled at once: a rejection waiting behind earlier responses is not an unhandled one
        let handled: Promise<FrameResponse>;
        try {
          handled = this.interceptor?.intercept(frame, timing) ?? this.o.handle(frame, this.info, timing, release);
        } catch (err) {
          handled = Promise.reject(err as Error);
        }
        const result = handled.then(
          (response) => {
            timing.handledAt = performance.now();
            return { response, err: undefined };
          },
          (err: unknown) => ({ response: null, err: err ?? new Error('request handler failed') }),
        );
        const written = this.writeTail
          .then(() => this.answer(result, timing, traced))
          .catch((err: unknown) => {
            this.log.error({ err }, 'writing a response failed; closing connection');
            this.close();
          });
        this.writeTail = written;
        this.unanswered.push(written);
        void written.then(() => {
          this.unanswered.shift();
          release();
        });
        await gate;
        // a throttled client's channel stays muted for its throttle time (Kafka's KIP-219)
        const muted = (this.info.mutedUntilMs ?? 0) - Date.now();
        if (muted > 0 && !this.closed) await new Promise((r) => setTimeout(r, muted));
      }
    } finally {
      this.processing = false;
      if (!this.closed && this.socket.isPaused() && this.buffered <= this.maxBuffered) this.socket.resume();
    }
  }

  /** Writes one request's response (after every earlier one: called through `writeTail`). */
  private async answer(
    result: Promise<{ response: FrameResponse; err: unknown }>,
    timing: RequestTiming,
    traced: { api: string; arrived: number; started: number } | undefined,
  ): Promise<void> {
    const { response, err } = await result;
    if (err !== undefined) {
      if (err instanceof CloseConnection) this.log.warn({ reason: err.message }, 'closing connection');
      else this.log.error({ err }, 'request handler failed; closing connection');
      this.close();
      return;
    }
    const done = this.o.onRequestComplete;
    if (response === null || this.closed) {
      if (response === null && done) {
        timing.sendStartedAt = timing.handledAt;
        done(timing, timing.handledAt);
      }
      return;
    }
    timing.sendStartedAt = performance.now();
    const sent = done ? () => done(timing, performance.now()) : undefined;
    const ok = Array.isArray(response) ? this.writeAll(response, sent) : this.socket.write(response, sent);
    if (traced && latencyTrace) {
      // queued: behind earlier requests of this connection; handle: started → response written
      latencyTrace.record(`${traced.api}.queued`, traced.started - traced.arrived);
      latencyTrace.since(`${traced.api}.handle`, traced.started);
      latencyTrace.since(`${traced.api}.total`, traced.arrived);
    }
    // a client that does not read its responses stops being read until it does
    if (!ok) await this.drained();
  }

  /**
   * Resolves on 'drain' or 'close', removing both listeners either way: a listener left behind per
   * backpressure episode would pile up on a long-lived connection (a leak, and Node's
   * MaxListenersExceededWarning after ten).
   */
  private drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  private writeAll(parts: Buffer[], sent?: () => void): boolean {
    this.socket.cork();
    let ok = true;
    parts.forEach((p, i) => {
      ok = (i === parts.length - 1 && sent ? this.socket.write(p, sent) : this.socket.write(p)) && ok;
    });
    process.nextTick(() => this.socket.uncork());
    return ok;
  }
}
