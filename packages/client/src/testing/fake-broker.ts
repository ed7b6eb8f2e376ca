import net from 'node:net';
import {
  API_KEYS,
  buildApiVersionsResponse,
  decodeRequest,
  encodeResponse,
  encodeUnsupportedApiVersionsResponse,
  getApi,
  supportedApiVersions,
  type ApiKey,
  type ApiRequestMap,
  type ApiResponseMap,
  type ApiVersionsResponseApiKey,
} from '@samsa/protocol';
import { FrameSplitter } from '../framing.js';

/** Handler result: leave this request unanswered (later answers still go out). */
export const NO_RESPONSE: unique symbol = Symbol('no response');
/** Handler result: close the client's connection instead of answering. */
export const CLOSE_CONNECTION: unique symbol = Symbol('close connection');

/** Handler result: these exact bytes (size prefix included) as the answer. */
export class RawResponse {
  constructor(readonly frame: Buffer) {}
}

export type FakeHandlerResult<K extends ApiKey> = ApiResponseMap[K] | RawResponse | typeof NO_RESPONSE | typeof CLOSE_CONNECTION;

export interface FakeRequestContext {
  apiKey: ApiKey;
  version: number;
  correlationId: number;
  clientId: string | null;
  broker: FakeBroker;
  /** Id of the client connection (1, 2, ... in accept order). */
  connectionId: number;
}

export type FakeHandler<K extends ApiKey> = (body: ApiRequestMap[K], ctx: FakeRequestContext) => FakeHandlerResult<K> | Promise<FakeHandlerResult<K>>;
export type FakeHandlers = { [K in ApiKey]?: FakeHandler<K> };

export interface ReceivedRequest {
  apiKey: number;
  apiName: string;
  version: number;
  correlationId: number;
  clientId: string | null;
  body: unknown;
  connectionId: number;
}

export interface FakeBrokerOptions {
  nodeId?: number;
  host?: string;
  /** 0 (default): a free port. */
  port?: number;
  /** The API list advertised by ApiVersions. Default: every API @samsa/protocol knows. */
  apiVersions?: ApiVersionsResponseApiKey[];
  /**
   * Highest ApiVersions version answered normally; a higher one gets the KIP-511 answer (v0 body,
   * UNSUPPORTED_VERSION, the advertised list with ApiVersions capped to this). Default: all.
   */
  maxApiVersionsVersion?: number;
  handlers?: FakeHandlers;
  /** Answer in request order, as Kafka does (default), or each as soon as its handler settles. */
  ordered?: boolean;
}

/**
 * An in-process broker for tests: a net.Server that decodes requests with @samsa/protocol's codecs
 * and answers with handlers. ApiVersions is answered by default (see `apiVersions`,
 * `maxApiVersionsVersion`); an API without a handler gets its connection closed.
 */
export class FakeBroker {
  readonly nodeId: number;
  readonly host: string;
  readonly requests: ReceivedRequest[] = [];
  handlers: FakeHandlers;
  apiVersions: ApiVersionsResponseApiKey[];
  maxApiVersionsVersion: number;
  ordered: boolean;
  private readonly sockets = new Set<net.Socket>();
  private connectionSeq = 0;
  private _port = 0;

  private constructor(
    private readonly server: net.Server,
    opts: FakeBrokerOptions,
  ) {
    this.nodeId = opts.nodeId ?? 0;
    this.host = opts.host ?? '127.0.0.1';
    this.handlers = { ...opts.handlers };
    this.apiVersions = opts.apiVersions ?? supportedApiVersions();
    this.maxApiVersionsVersion = opts.maxApiVersionsVersion ?? getApi(API_KEYS.ApiVersions)!.maxVersion;
    this.ordered = opts.ordered ?? true;
  }

  static async start(opts: FakeBrokerOptions = {}): Promise<FakeBroker> {
    const server = net.createServer();
    const broker = new FakeBroker(server, opts);
    server.on('connection', (s) => broker.accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, broker.host, () => resolve());
    });
    broker._port = (server.address() as net.AddressInfo).port;
    return broker;
  }

  get port(): number {
    return this._port;
  }

  /** `host:port`. */
  get address(): string {
    return `${this.host}:${this._port}`;
  }

  /** Open client connections. */
  get connectionCount(): number {
    return this.sockets.size;
  }

  /** Sets the handler of one API. */
  on<K extends ApiKey>(apiKey: K, handler: FakeHandler<K>): this {
    (this.handlers as Record<number, unknown>)[apiKey] = handler;
    return this;
  }

  /** Requests received for `apiKey` (ApiVersions included when asked for). */
  requestsFor(apiKey: number): ReceivedRequest[] {
    return this.requests.filter((r) => r.apiKey === apiKey);
  }

  /** Destroys every client connection (a broker crash, from the client's point of view). */
  dropConnections(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    const connectionId = ++this.connectionSeq;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const splitter = new FrameSplitter();
    let chain: Promise<void> = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = splitter.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const frame of frames) {
        const answer = this.handle(frame, connectionId).catch((): typeof CLOSE_CONNECTION => CLOSE_CONNECTION);
        const write = (res: Buffer | typeof NO_RESPONSE | typeof CLOSE_CONNECTION) => {
          if (res === CLOSE_CONNECTION) socket.destroy();
          else if (res !== NO_RESPONSE && !socket.destroyed) socket.write(res);
        };
        if (this.ordered) chain = chain.then(() => answer.then(write));
        else void answer.then(write);
      }
    });
  }

  private async handle(frame: Buffer, connectionId: number): Promise<Buffer | typeof NO_RESPONSE | typeof CLOSE_CONNECTION> {
    const req = decodeRequest(frame);
    if (!req.ok) {
      if (req.error === 'UNSUPPORTED_VERSION' && req.response) {
        this.requests.push({
          apiKey: req.header.apiKey,
          apiName: req.api.name,
          version: req.header.apiVersion,
          correlationId: req.header.correlationId,
          clientId: req.header.clientId,
          body: undefined,
          connectionId,
        });
        return this.kip511(req.header.correlationId);
      }
      return CLOSE_CONNECTION;
    }
    const { apiKey, apiVersion: version, header } = req;
    this.requests.push({
      apiKey,
      apiName: req.api.name,
      version,
      correlationId: header.correlationId,
      clientId: header.clientId,
      body: req.body,
      connectionId,
    });
    const handler = this.handlers[apiKey] as FakeHandler<typeof apiKey> | undefined;
    if (!handler) {
      if (apiKey === API_KEYS.ApiVersions) {
        if (version > this.maxApiVersionsVersion) return this.kip511(header.correlationId);
        return encodeResponse(API_KEYS.ApiVersions, version, header.correlationId, buildApiVersionsResponse({ apiKeys: this.apiVersions }));
      }
      return CLOSE_CONNECTION;
    }
    const ctx: FakeRequestContext = { apiKey, version, correlationId: header.correlationId, clientId: header.clientId, broker: this, connectionId };
    const result = await (handler as (b: unknown, c: FakeRequestContext) => FakeHandlerResult<ApiKey> | Promise<FakeHandlerResult<ApiKey>>)(req.body, ctx);
    if (result === NO_RESPONSE || result === CLOSE_CONNECTION) return result;
    if (result instanceof RawResponse) return result.frame;
    return encodeResponse(apiKey, version, header.correlationId, result as ApiResponseMap[typeof apiKey]);
  }

  private kip511(correlationId: number): Buffer {
    const apiKeys = this.apiVersions.map((k) =>
      k.apiKey === API_KEYS.ApiVersions ? { ...k, maxVersion: Math.min(k.maxVersion, this.maxApiVersionsVersion) } : k,
    );
    return encodeUnsupportedApiVersionsResponse(correlationId, apiKeys);
  }
}
