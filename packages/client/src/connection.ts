import net from 'node:net';
import tls from 'node:tls';
import {
  API_KEYS,
  ErrorCode,
  KafkaError,
  ProtocolDecodeError,
  decodeResponse,
  encodeRequest,
  encodeRequestChunks,
  errorName,
  getApi,
  type ApiKey,
  type ApiRequestMap,
  type ApiResponseMap,
  type ApiVersionsResponse,
  type ResponseHeader,
} from '@samsa/protocol';
import { formatAddress } from './address.js';
import { ConnectionError, RequestTimeoutError, UnsupportedApiError } from './errors.js';
import { FrameSplitter } from './framing.js';
import { silentLogger, type Logger } from './logger.js';
import { authenticate, type SaslOptions } from './sasl/index.js';

export const CLIENT_SOFTWARE_NAME = 'samsa-client';
export const CLIENT_SOFTWARE_VERSION = '0.1.0';

export interface VersionRange {
  minVersion: number;
  maxVersion: number;
}

export interface ConnectionOptions {
  host: string;
  port: number;
  /** Broker id, when known (logs and error messages). */
  nodeId?: number;
  /** client.id in every request header. Default `samsa-client`. */
  clientId?: string | null;
  clientSoftwareName?: string;
  clientSoftwareVersion?: string;
  /** ApiVersions version tried first (KIP-511 fallback goes down from there). Default 3. */
  apiVersionsVersion?: number;
  /** TCP connect timeout. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Default per-request timeout. Default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Largest response frame accepted. Default 100 MiB. */
  maxFrameBytes?: number;
  /** SASL authentication after ApiVersions (SASL_PLAINTEXT listeners). */
  sasl?: SaslOptions;
  /**
   * Connect with TLS (listeners of security protocol SSL / SASL_SSL): Node's TLS options, e.g.
   * `{ ca: [caPem] }`, plus `key`/`cert` for mutual TLS. The broker's host name is checked against
   * its certificate unless `checkServerIdentity` says otherwise.
   */
  tls?: tls.ConnectionOptions;
  logger?: Logger;
}

export interface RequestOptions {
  /** Exact version to use (must be supported by both sides). Default: the highest common version. */
  version?: number;
  /** Lowest acceptable version (e.g. the first one carrying a needed field). */
  minVersion?: number;
  /** Highest acceptable version. */
  maxVersion?: number;
  /** Per-request timeout; on expiry the request fails and the connection is closed. */
  timeoutMs?: number;
  /**
   * Buffers of the body (Produce records) to write by reference instead of copying them into the
   * frame; they must stay unchanged until the request is answered.
   */
  byReference?: readonly Buffer[];
}

export interface Response<K extends ApiKey> {
  version: number;
  header: ResponseHeader;
  body: ApiResponseMap[K];
}

/** A request body, or a function building it for the version negotiated (bodies differ by version). */
export type RequestBody<K extends ApiKey> = ApiRequestMap[K] | ((version: number) => ApiRequestMap[K]);

interface Pending {
  correlationId: number;
  apiName: string;
  version: number;
  timeoutMs: number;
  /** Date.now() after which the request times out. */
  deadline: number;
  decode: (frame: Buffer) => unknown;
  /** Settles the request: (null, value) or (error). */
  settle: RequestCallback<unknown>;
}

/** Called once with (null, result) or (error, undefined). */
export type RequestCallback<T> = (err: unknown, value: T | undefined) => void;

const API_VERSIONS = API_KEYS.ApiVersions;

/**
 * One TCP connection to a broker: size-prefixed frames, correlation ids, any number of requests in
 * flight. Kafka answers the requests of a connection in order, so each response must carry the
 * correlation id of the oldest request in flight; anything else is a protocol violation and closes
 * the connection. A request that times out closes the connection too (the Java client does the
 * same: a broker that stopped answering one request will not answer the next).
 *
 * `Connection.connect` negotiates versions with ApiVersions (KIP-511 fallback included); every
 * request then uses the highest version both this client and the broker support, unless narrowed.
 * When the connection closes, every pending request is rejected with a ConnectionError.
 */
export class Connection {
  readonly host: string;
  readonly port: number;
  readonly nodeId: number | undefined;
  /** `host:port`. */
  readonly address: string;
  private readonly clientId: string | null;
  private readonly requestTimeoutMs: number;
  private readonly log: Logger;
  private readonly splitter: FrameSplitter;
  private readonly pending = new Map<number, Pending>();
  private readonly closeListeners = new Set<(err: ConnectionError) => void>();
  private readonly brokerVersions = new Map<number, VersionRange>();
  private readonly socketClosed: Promise<void>;
  private nextCorrelationId = 0;
  /**
   * One timer for the request timeouts of the connection (not one per request): due at the
   * earliest deadline of a pending request when it was set; when it fires it times out what is
   * overdue and is set again for the rest.
   */
  private timeoutTimer: NodeJS.Timeout | undefined;
  private timeoutTimerAt = Infinity;
  private closedError: ConnectionError | undefined;
  private socketError: Error | undefined;
  private apiVersionsVersionUsed = -1;

  private constructor(
    private readonly opts: ConnectionOptions,
    private readonly socket: net.Socket,
  ) {
    this.host = opts.host;
    this.port = opts.port;
    this.nodeId = opts.nodeId;
    this.address = formatAddress(opts);
    this.clientId = opts.clientId === undefined ? CLIENT_SOFTWARE_NAME : opts.clientId;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.log = (opts.logger ?? silentLogger).child({ broker: this.address, nodeId: opts.nodeId });
    this.splitter = new FrameSplitter(opts.maxFrameBytes);
    this.socketClosed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => {
      this.socketError ??= err;
    });
    socket.on('close', () => {
      const e = this.socketError;
      this.destroy(
        new ConnectionError(
          this.address,
          e ? `Connection to ${this.describe()} failed: ${e.message}` : `Connection to ${this.describe()} was closed by the broker`,
          {
            cause: e,
          },
        ),
      );
    });
  }

  /** Opens the TCP connection and negotiates API versions. */
  static async connect(opts: ConnectionOptions): Promise<Connection> {
    const socket = await openSocket(opts);
    const conn = new Connection(opts, socket);
    try {
      await conn.negotiateApiVersions();
    } catch (err) {
      conn.destroy(new ConnectionError(conn.address, `ApiVersions negotiation with ${conn.describe()} failed`, { cause: err }));
      throw err;
    }
    if (opts.sasl) {
      try {
        const lifetime = await authenticate((apiKey, body, o) => conn.request(apiKey, body, o), opts.sasl);
        conn.log.debug({ mechanism: opts.sasl.mechanism, user: opts.sasl.username, sessionLifetimeMs: lifetime }, 'SASL authenticated');
      } catch (err) {
        conn.destroy(new ConnectionError(conn.address, `SASL authentication with ${conn.describe()} failed`, { cause: err }));
        throw err;
      }
    }
    conn.log.debug({ apiVersionsVersion: conn.apiVersionsVersionUsed, apis: conn.brokerVersions.size }, 'connected');
    return conn;
  }

  /** `host:port (node N)`. */
  describe(): string {
    return this.nodeId === undefined ? this.address : `${this.address} (node ${this.nodeId})`;
  }

  get isOpen(): boolean {
    return this.closedError === undefined;
  }

  /** Requests sent and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** The ApiVersions version the negotiation ended with. */
  get apiVersionsVersion(): number {
    return this.apiVersionsVersionUsed;
  }

  /** Version ranges the broker advertised, by api key. */
  brokerApiVersions(): ReadonlyMap<number, VersionRange> {
    return this.brokerVersions;
  }

  /** Whether the broker advertises `apiKey` with a version this client also knows. */
  supports(apiKey: number, opts: Pick<RequestOptions, 'minVersion' | 'maxVersion'> = {}): boolean {
    try {
      this.negotiatedVersion(apiKey, opts);
      return true;
    } catch (err) {
      if (err instanceof UnsupportedApiError) return false;
      throw err;
    }
  }

  /**
   * The version a request of `apiKey` would use: the highest both sides support, narrowed by
   * `opts`. Throws UnsupportedApiError, naming the API, when there is none.
   */
  negotiatedVersion(apiKey: number, opts: RequestOptions = {}): number {
    const ours = getApi(apiKey);
    if (ours === undefined) throw new UnsupportedApiError(apiKey, `api key ${apiKey}`, `API key ${apiKey} is not known to this client`);
    const theirs = this.brokerVersions.get(apiKey);
    if (theirs === undefined) {
      throw new UnsupportedApiError(
        apiKey,
        ours.name,
        `Broker ${this.describe()} does not support ${ours.name} (api key ${apiKey}): it is not advertised in its ApiVersions response`,
      );
    }
    const lo = Math.max(ours.minVersion, theirs.minVersion);
    const hi = Math.min(ours.maxVersion, theirs.maxVersion);
    // the messages are built only when they are thrown (this runs for every request)
    const range = () => `the broker supports ${ours.name} v${theirs.minVersion}-${theirs.maxVersion}, this client v${ours.minVersion}-${ours.maxVersion}`;
    if (opts.version !== undefined) {
      if (opts.version < lo || opts.version > hi) {
        throw new UnsupportedApiError(apiKey, ours.name, `${ours.name} v${opts.version} cannot be used with ${this.describe()}: ${range()}`);
      }
      return opts.version;
    }
    const min = Math.max(lo, opts.minVersion ?? lo);
    const max = Math.min(hi, opts.maxVersion ?? hi);
    if (min > max) {
      const want = `${opts.minVersion !== undefined ? ` >= ${opts.minVersion}` : ''}${opts.maxVersion !== undefined ? ` <= ${opts.maxVersion}` : ''}`;
      throw new UnsupportedApiError(apiKey, ours.name, `No usable ${ours.name} version${want} with ${this.describe()}: ${range()}`);
    }
    return max;
  }

  /** Sends a request and resolves with the response body. */
  async send<K extends ApiKey>(apiKey: K, body: RequestBody<K>, opts: RequestOptions = {}): Promise<ApiResponseMap[K]> {
    return (await this.request(apiKey, body, opts)).body;
  }

  /** Sends a request and resolves with the response, its header and the version used. */
  request<K extends ApiKey>(apiKey: K, body: RequestBody<K>, opts: RequestOptions = {}): Promise<Response<K>> {
    let version: number;
    let b: ApiRequestMap[K];
    try {
      version = this.usableVersion(apiKey, opts);
      b = typeof body === 'function' ? (body as (v: number) => ApiRequestMap[K])(version) : body;
    } catch (err) {
      return Promise.reject(err);
    }
    return this.enqueue(apiKey, version, b, opts.timeoutMs, opts.byReference, (frame) => {
      const r = decodeResponse(apiKey, version, frame);
      return { version, header: r.header, body: r.body };
    });
  }

  /**
   * send() for callers that keep many requests in flight (the producer's sender): the callback
   * gets (null, body) or (error), and no promise is made for the request. It may be called
   * synchronously when the request cannot be sent (closed connection, no usable version).
   */
  sendWithCallback<K extends ApiKey>(apiKey: K, body: ApiRequestMap[K], opts: RequestOptions, callback: RequestCallback<ApiResponseMap[K]>): void {
    let version: number;
    try {
      version = this.usableVersion(apiKey, opts);
    } catch (err) {
      callback(err, undefined);
      return;
    }
    this.write(
      apiKey,
      version,
      body,
      opts.timeoutMs,
      opts.byReference,
      (frame) => decodeResponse(apiKey, version, frame).body,
      callback as RequestCallback<unknown>,
    );
  }

  /**
   * Writes a request the broker does not answer (Produce with acks=0): no correlation is kept.
   * Rejects only when the request cannot be encoded or the connection is closed.
   */
  sendOneWay<K extends ApiKey>(apiKey: K, body: RequestBody<K>, opts: RequestOptions = {}): Promise<void> {
    try {
      const version = this.usableVersion(apiKey, opts);
      const b = typeof body === 'function' ? (body as (v: number) => ApiRequestMap[K])(version) : body;
      const frame = encodeRequest(apiKey, version, this.nextCorrelationId, this.clientId, b as never);
      this.nextCorrelationId = (this.nextCorrelationId + 1) & 0x7fffffff;
      this.socket.write(frame);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Registers a listener for the connection closing (once); returns a function removing it. */
  onClose(listener: (err: ConnectionError) => void): () => void {
    if (this.closedError) {
      const err = this.closedError;
      queueMicrotask(() => listener(err));
      return () => undefined;
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Closes the connection; pending requests are rejected. Resolves once the socket is closed. */
  async close(): Promise<void> {
    this.destroy(new ConnectionError(this.address, `Connection to ${this.describe()} was closed by the client`));
    await this.socketClosed;
  }

  // ---- internals ----------------------------------------------------------------------

  /** The version a request will use; throws when the connection is closed or no version fits. */
  private usableVersion(apiKey: number, opts: RequestOptions): number {
    if (this.closedError) throw this.closedFor(getApi(apiKey)?.name ?? `api key ${apiKey}`);
    return this.negotiatedVersion(apiKey, opts);
  }

  private closedFor(apiName: string): ConnectionError {
    const cause = this.closedError;
    return new ConnectionError(this.address, `Cannot send ${apiName}: ${cause?.message ?? `connection to ${this.describe()} is closed`}`, { cause });
  }

  private enqueue<T>(
    apiKey: number,
    version: number,
    body: unknown,
    timeoutMs: number | undefined,
    byReference: readonly Buffer[] | undefined,
    decode: (frame: Buffer) => T,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.write(apiKey, version, body, timeoutMs, byReference, decode, (err, value) => (err === null ? resolve(value as T) : reject(err))),
    );
  }

  /** Encodes and writes a request; `settle` gets the decoded response or the failure. */
  private write(
    apiKey: number,
    version: number,
    body: unknown,
    timeoutMs: number | undefined,
    byReference: readonly Buffer[] | undefined,
    decode: (frame: Buffer) => unknown,
    settle: RequestCallback<unknown>,
  ): void {
    const apiName = getApi(apiKey)?.name ?? `api key ${apiKey}`;
    if (this.closedError) return settle(this.closedFor(apiName), undefined);
    const correlationId = this.nextCorrelationId;
    let frame: Buffer | Buffer[];
    try {
      frame =
        byReference && byReference.length > 0
          ? encodeRequestChunks(apiKey as ApiKey, version, correlationId, this.clientId, body as never, byReference)
          : encodeRequest(apiKey as ApiKey, version, correlationId, this.clientId, body as never);
    } catch (err) {
      return settle(err, undefined);
    }
    this.nextCorrelationId = (this.nextCorrelationId + 1) & 0x7fffffff;
    const ms = timeoutMs ?? this.requestTimeoutMs;
    const deadline = Date.now() + ms;
    this.pending.set(correlationId, { correlationId, apiName, version, timeoutMs: ms, deadline, decode, settle });
    if (deadline < this.timeoutTimerAt) this.armTimeout(deadline);
    this.log.trace({ api: apiName, version, correlationId }, 'request');
    if (Array.isArray(frame)) {
      // one vectored write for header and records
      this.socket.cork();
      for (const c of frame) this.socket.write(c);
      this.socket.uncork();
    } else {
      this.socket.write(frame);
    }
  }

  /**
   * Holds this connection's writes until uncork() (calls nest): requests written in between leave
   * in one vectored write. The producer's sender corks while one drain writes its requests.
   */
  cork(): void {
    this.socket.cork();
  }

  uncork(): void {
    this.socket.uncork();
  }

  private armTimeout(at: number): void {
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    this.timeoutTimerAt = at;
    this.timeoutTimer = setTimeout(() => this.checkTimeouts(), Math.max(0, at - Date.now()));
    // the socket keeps the process alive while requests are pending; this timer alone should not
    this.timeoutTimer.unref();
  }

  /** The timeout timer fired: time out the first overdue request, or wait for the next deadline. */
  private checkTimeouts(): void {
    this.timeoutTimer = undefined;
    this.timeoutTimerAt = Infinity;
    if (this.closedError) return;
    const now = Date.now();
    let next = Infinity;
    for (const p of this.pending.values()) {
      if (p.deadline <= now) return this.onTimeout(p.correlationId);
      if (p.deadline < next) next = p.deadline;
    }
    if (next < Infinity) this.armTimeout(next);
  }

  private onData(chunk: Buffer): void {
    if (this.closedError) return;
    let frames: Buffer[];
    try {
      frames = this.splitter.push(chunk);
    } catch (err) {
      this.destroy(new ConnectionError(this.address, `Malformed response stream from ${this.describe()}: ${(err as Error).message}`, { cause: err }));
      return;
    }
    for (const frame of frames) {
      this.onFrame(frame);
      if (this.closedError) return;
    }
  }

  private onFrame(frame: Buffer): void {
    if (frame.length < 4) {
      this.destroy(new ConnectionError(this.address, `Malformed response from ${this.describe()}: a ${frame.length}-byte frame has no correlation id`));
      return;
    }
    const correlationId = frame.readInt32BE(0);
    const oldest = this.pending.values().next();
    if (oldest.done) {
      this.destroy(
        new ConnectionError(this.address, `Received a response (correlation id ${correlationId}) from ${this.describe()} with no request in flight`),
      );
      return;
    }
    const p = oldest.value;
    if (p.correlationId !== correlationId) {
      this.destroy(
        new ConnectionError(
          this.address,
          `Correlation id for response (${correlationId}) does not match request (${p.correlationId}, ${p.apiName} v${p.version}) from ${this.describe()}; Kafka answers in order`,
        ),
      );
      return;
    }
    this.pending.delete(correlationId);
    let result: unknown;
    try {
      result = p.decode(frame);
    } catch (err) {
      this.log.warn({ err, api: p.apiName, version: p.version, correlationId }, 'undecodable response');
      p.settle(err, undefined);
      return;
    }
    p.settle(null, result);
  }

  private onTimeout(correlationId: number): void {
    const p = this.pending.get(correlationId);
    if (!p) return;
    this.pending.delete(correlationId);
    const err = new RequestTimeoutError(
      this.address,
      p.timeoutMs,
      `${p.apiName} v${p.version} request (correlation id ${correlationId}) to ${this.describe()} timed out after ${p.timeoutMs} ms`,
    );
    this.log.warn({ api: p.apiName, correlationId, timeoutMs: p.timeoutMs }, 'request timed out; disconnecting');
    p.settle(err, undefined);
    this.destroy(new ConnectionError(this.address, `Disconnected from ${this.describe()} after a ${p.apiName} request timed out`, { cause: err }));
  }

  /** Marks the connection closed, rejects everything pending and tears the socket down. */
  private destroy(err: ConnectionError): void {
    if (this.closedError) return;
    this.closedError = err;
    const pending = [...this.pending.values()];
    this.pending.clear();
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    this.timeoutTimer = undefined;
    for (const p of pending) {
      p.settle(new ConnectionError(this.address, `${p.apiName} request (correlation id ${p.correlationId}) failed: ${err.message}`, { cause: err }), undefined);
    }
    this.socket.destroy();
    if (pending.length > 0 || this.closeListeners.size > 0) this.log.debug({ reason: err.message, pending: pending.length }, 'connection closed');
    const listeners = [...this.closeListeners];
    this.closeListeners.clear();
    for (const l of listeners) l(err);
  }

  /**
   * ApiVersions with KIP-511: a broker that does not know our ApiVersions version answers with a v0
   * body, error UNSUPPORTED_VERSION and its own ApiVersions range; retry with the highest version
   * it lists (or v0 when it lists none).
   */
  private async negotiateApiVersions(): Promise<void> {
    const ours = getApi(API_VERSIONS)!;
    let version = Math.max(ours.minVersion, Math.min(this.opts.apiVersionsVersion ?? 3, ours.maxVersion));
    const body = {
      clientSoftwareName: this.opts.clientSoftwareName ?? CLIENT_SOFTWARE_NAME,
      clientSoftwareVersion: this.opts.clientSoftwareVersion ?? CLIENT_SOFTWARE_VERSION,
    };
    for (;;) {
      const v = version;
      const res = await this.enqueue(API_VERSIONS, v, body, undefined, undefined, (frame) => decodeApiVersionsFrame(frame, v));
      if (res.errorCode === ErrorCode.NONE) {
        for (const k of res.apiKeys) this.brokerVersions.set(k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion });
        this.apiVersionsVersionUsed = v;
        return;
      }
      if (res.errorCode === ErrorCode.UNSUPPORTED_VERSION && v > ours.minVersion) {
        const advertised = res.apiKeys.find((k) => k.apiKey === API_VERSIONS);
        version = Math.max(ours.minVersion, Math.min(advertised ? advertised.maxVersion : 0, v - 1));
        this.log.debug({ rejected: v, retryWith: version }, 'ApiVersions version not supported by the broker; falling back (KIP-511)');
        continue;
      }
      throw new KafkaError(res.errorCode, `ApiVersions v${v} to ${this.describe()} failed: ${errorName(res.errorCode)}`);
    }
  }
}

/**
 * Decodes an ApiVersions response frame. The header is always v0; an UNSUPPORTED_VERSION answer is
 * always a v0 body (KIP-511), and so is any answer that does not decode at the version sent.
 */
export function decodeApiVersionsFrame(frame: Buffer, version: number): ApiVersionsResponse {
  const errorCode = frame.length >= 6 ? frame.readInt16BE(4) : 0;
  if (errorCode === ErrorCode.UNSUPPORTED_VERSION && version > 0) return decodeResponse(API_VERSIONS, 0, frame).body;
  try {
    return decodeResponse(API_VERSIONS, version, frame).body;
  } catch (err) {
    if (version > 0 && err instanceof ProtocolDecodeError) return decodeResponse(API_VERSIONS, 0, frame).body;
    throw err;
  }
}

function openSocket(opts: ConnectionOptions): Promise<net.Socket> {
  const address = formatAddress(opts);
  const timeoutMs = opts.connectTimeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const secure = opts.tls;
    const socket = secure ? tls.connect({ ...secure, host: opts.host, port: opts.port }) : net.connect({ host: opts.host, port: opts.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ConnectionError(address, `Connection to ${address} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 30_000);
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new ConnectionError(address, `Connection to ${address} failed: ${err.message}`, { cause: err }));
    });
  });
}
