import { API_KEYS, KafkaError, ZERO_UUID, type MetadataRequest } from '@samsa/protocol';
import { formatAddress, parseBootstrapServers, type BrokerAddress } from './address.js';
import { Connection, type ConnectionOptions, type RequestOptions, type Response } from './connection.js';
import { ConnectionError, OperationTimeoutError, isRetriableError } from './errors.js';
import { silentLogger, type Logger } from './logger.js';
import type { SaslOptions } from './sasl/index.js';

export interface ClusterOptions {
  /** bootstrap.servers: `host:port` entries (a comma-separated string or a list). */
  bootstrapServers: string | readonly string[];
  /** client.id sent in request headers. Default `samsa-client`. */
  clientId?: string;
  /** TCP connect timeout per broker. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Per-request timeout (request.timeout.ms). Default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Deadline of an operation, retries included (default.api.timeout.ms). Default 60 000 ms. */
  defaultApiTimeoutMs?: number;
  /** First retry backoff (retry.backoff.ms); doubles up to retryBackoffMaxMs. Default 100 ms. */
  retryBackoffMs?: number;
  /** Default 1 000 ms. */
  retryBackoffMaxMs?: number;
  /** Cached metadata older than this is refreshed before choosing the controller. Default 300 000 ms. */
  metadataMaxAgeMs?: number;
  /** ApiVersions version tried first. Default 3. */
  apiVersionsVersion?: number;
  /** SASL credentials for every connection (SASL_PLAINTEXT listeners). */
  sasl?: SaslOptions;
  /** Connect with TLS (security.protocol SSL / SASL_SSL): Node's TLS options (ConnectionOptions.tls). */
  tls?: ConnectionOptions['tls'];
  logger?: Logger;
}

/** A broker as Metadata / DescribeCluster describe it. */
export interface BrokerNode {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

/** What the client knows about the cluster from its last Metadata response. */
export interface ClusterMetadata {
  clusterId: string | null;
  /** -1 when unknown (Metadata v0, or no controller elected). */
  controllerId: number;
  /** Sorted by node id. */
  brokers: BrokerNode[];
  /** Date.now() of the response. */
  updatedAt: number;
}

/** The Metadata request body for `topics` (null: every topic) at `version`. */
export function metadataRequestBody(topics: readonly string[] | null, version: number): MetadataRequest {
  return {
    // v0 has no null: an empty list means "all topics" there
    topics: topics === null ? (version === 0 ? [] : null) : topics.map((name) => ({ name, topicId: ZERO_UUID })),
    // before v4 the broker always auto-creates; the field must keep its default
    allowAutoTopicCreation: version < 4,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Connections to a Kafka cluster: bootstraps from any of bootstrap.servers, keeps cluster metadata
 * (brokers, controller, cluster id), one connection per broker id, and runs operations with retries
 * (`retry`): retriable failures — lost connections, request timeouts, NOT_CONTROLLER and other
 * retriable error codes — are retried with exponential backoff until the operation's deadline.
 */
export class Cluster {
  readonly defaultApiTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** SASL credentials of this cluster's connections (connections made elsewhere reuse them). */
  readonly sasl: SaslOptions | undefined;
  private readonly bootstrap: BrokerAddress[];
  private readonly log: Logger;
  private readonly connOpts: Omit<ConnectionOptions, 'host' | 'port' | 'nodeId'>;
  private readonly retryBackoffMs: number;
  private readonly retryBackoffMaxMs: number;
  private readonly metadataMaxAgeMs: number;
  private readonly nodeConns = new Map<number, Promise<Connection>>();
  /** The same connections once open (readyConnection: no promise to wait on). */
  private readonly readyConns = new Map<number, Connection>();
  private readonly live = new Set<Connection>();
  private bootstrapConn: Promise<Connection> | undefined;
  private meta: ClusterMetadata | undefined;
  private metadataStale = true;
  private inflightRefresh: Promise<ClusterMetadata> | undefined;
  private closed = false;

  constructor(opts: ClusterOptions) {
    this.bootstrap = parseBootstrapServers(opts.bootstrapServers);
    this.log = (opts.logger ?? silentLogger).child({ component: 'samsa-client' });
    this.defaultApiTimeoutMs = opts.defaultApiTimeoutMs ?? 60_000;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.retryBackoffMs = opts.retryBackoffMs ?? 100;
    this.retryBackoffMaxMs = opts.retryBackoffMaxMs ?? 1_000;
    this.metadataMaxAgeMs = opts.metadataMaxAgeMs ?? 300_000;
    this.connOpts = {
      clientId: opts.clientId ?? 'samsa-client',
      connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
      requestTimeoutMs: this.requestTimeoutMs,
      apiVersionsVersion: opts.apiVersionsVersion,
      ...(opts.sasl ? { sasl: opts.sasl } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
      logger: this.log,
    };
    this.sasl = opts.sasl;
  }

  /** The TLS options connections use, when the cluster is reached over TLS. */
  get tls(): ConnectionOptions['tls'] {
    return this.connOpts.tls;
  }

  /** The bootstrap servers, parsed. */
  get bootstrapServers(): readonly BrokerAddress[] {
    return this.bootstrap;
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The last metadata fetched, if any. */
  get metadata(): ClusterMetadata | undefined {
    return this.meta;
  }

  /** Bootstraps: fetches cluster metadata (with retries, within the default API timeout). */
  async connect(opts: { timeoutMs?: number } = {}): Promise<ClusterMetadata> {
    return this.retry('bootstrap', () => this.refreshMetadata(), opts);
  }

  /** Fetches cluster metadata (brokers, controller, cluster id) from any broker. One attempt. */
  refreshMetadata(): Promise<ClusterMetadata> {
    this.inflightRefresh ??= this.fetchMetadata([])
      .then(() => this.meta!)
      .finally(() => (this.inflightRefresh = undefined));
    return this.inflightRefresh;
  }

  /**
   * One Metadata request for `topics` (null: all topics) to the least busy broker; updates the
   * cached cluster metadata from the answer. One attempt: wrap in `retry` for retries.
   */
  async fetchMetadata(topics: readonly string[] | null, opts: RequestOptions = {}): Promise<Response<3>> {
    const conn = await this.anyConnection();
    const res = await conn.request(API_KEYS.Metadata, (v) => metadataRequestBody(topics, v), opts);
    this.updateMetadata(res.body.brokers, res.body.controllerId, res.body.clusterId);
    return res;
  }

  /** Marks the controller unknown: the next controllerConnection() refreshes metadata first. */
  invalidateController(): void {
    this.metadataStale = true;
  }

  /** A connection to the controller (from metadata, refreshed when stale). */
  async controllerConnection(): Promise<Connection> {
    if (!this.meta || this.meta.controllerId < 0 || this.metadataStale || Date.now() - this.meta.updatedAt > this.metadataMaxAgeMs) {
      await this.refreshMetadata();
    }
    const id = this.meta!.controllerId;
    if (id < 0) throw new KafkaError('NOT_CONTROLLER', 'No active controller is known: the cluster metadata has no controller id (-1)');
    if (!this.meta!.brokers.some((b) => b.nodeId === id)) {
      // a controller change in progress: retriable, unlike an unknown broker id
      throw new KafkaError('NOT_CONTROLLER', `The controller (broker ${id}) is not among the brokers in the cluster metadata`);
    }
    return this.connectionTo(id);
  }

  /**
   * The connection to broker `nodeId`, opened if needed. A broker missing from the metadata even
   * after a refresh is BROKER_NOT_AVAILABLE (not retried).
   */
  async connectionTo(nodeId: number): Promise<Connection> {
    this.assertOpen();
    const existing = this.nodeConns.get(nodeId);
    if (existing) {
      try {
        const c = await existing;
        if (c.isOpen) return c;
      } catch {
        // failed connect: dropped below, then retried
      }
      if (this.nodeConns.get(nodeId) === existing) this.nodeConns.delete(nodeId);
    }
    let node = this.meta?.brokers.find((b) => b.nodeId === nodeId);
    if (!node) {
      // maybe it just joined: look again with fresh metadata
      await this.refreshMetadata();
      node = this.meta?.brokers.find((b) => b.nodeId === nodeId);
      if (!node)
        throw new KafkaError(
          'BROKER_NOT_AVAILABLE',
          `Broker ${nodeId} is not in the cluster metadata (brokers: ${this.meta!.brokers.map((b) => b.nodeId).join(',')})`,
        );
    }
    const p = this.open({ host: node.host, port: node.port, nodeId });
    this.nodeConns.set(nodeId, p);
    const drop = () => {
      if (this.nodeConns.get(nodeId) === p) this.nodeConns.delete(nodeId);
    };
    p.then((c) => {
      this.readyConns.set(nodeId, c);
      c.onClose(() => {
        if (this.readyConns.get(nodeId) === c) this.readyConns.delete(nodeId);
        drop();
      });
    }, drop);
    return p;
  }

  /**
   * The open connection to broker `nodeId` when there is one, without waiting: a request sent on it
   * is written at once (the producer's sender writes its next requests before it runs the callbacks
   * of the batches just acknowledged).
   */
  readyConnection(nodeId: number): Connection | undefined {
    const c = this.readyConns.get(nodeId);
    return c?.isOpen && this.nodeConns.has(nodeId) ? c : undefined;
  }

  /**
   * Any usable connection: the least busy open one, else a new one to a known broker, else to the
   * bootstrap servers in order.
   */
  async anyConnection(): Promise<Connection> {
    this.assertOpen();
    let best: Connection | undefined;
    for (const c of this.live) if (c.isOpen && (!best || c.inFlight < best.inFlight)) best = c;
    if (best) return best;
    let lastError: unknown;
    const known = [...(this.meta?.brokers ?? [])];
    const start = known.length > 0 ? Math.floor(Math.random() * known.length) : 0;
    for (let i = 0; i < known.length; i++) {
      const node = known[(start + i) % known.length]!;
      try {
        return await this.connectionTo(node.nodeId);
      } catch (err) {
        lastError = err;
      }
    }
    for (const addr of this.bootstrap) {
      try {
        this.bootstrapConn = this.open(addr);
        return await this.bootstrapConn;
      } catch (err) {
        lastError = err;
      }
    }
    const list = this.bootstrap.map(formatAddress).join(',');
    throw new ConnectionError(
      list,
      `Could not connect to any broker (bootstrap.servers ${list})${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
      {
        cause: lastError,
      },
    );
  }

  /**
   * Runs `fn` until it succeeds, a non-retriable error occurs, or the deadline (`timeoutMs`,
   * default defaultApiTimeoutMs) passes — then OperationTimeoutError with the last error as cause.
   * NOT_CONTROLLER and connection failures also mark the metadata stale so the next attempt
   * looks the controller up again.
   */
  async retry<T>(operation: string, fn: (attempt: number) => Promise<T>, opts: { timeoutMs?: number } = {}): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? this.defaultApiTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    for (let attempt = 1; ; attempt++) {
      this.assertOpen();
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new OperationTimeoutError(operation, timeoutMs, attempt - 1, lastError);
      try {
        return await withDeadline(fn(attempt), remaining, () => new OperationTimeoutError(operation, timeoutMs, attempt, lastError));
      } catch (err) {
        if (!isRetriableError(err)) throw err;
        lastError = err;
        this.metadataStale = true;
        const backoff = this.backoff(attempt);
        this.log.debug({ operation, attempt, backoff, err: (err as Error).message }, 'retriable error; retrying');
        if (Date.now() + backoff >= deadline) throw new OperationTimeoutError(operation, timeoutMs, attempt, err);
        await sleep(backoff);
      }
    }
  }

  /** Closes every connection. The cluster cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const conns = [...this.nodeConns.values(), ...(this.bootstrapConn ? [this.bootstrapConn] : [])];
    this.nodeConns.clear();
    this.readyConns.clear();
    this.bootstrapConn = undefined;
    await Promise.all(conns.map((p) => p.then((c) => c.close()).catch(() => undefined)));
    await Promise.all([...this.live].map((c) => c.close()));
    this.live.clear();
  }

  // ---- internals ------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new Error('The client is closed');
  }

  private backoff(attempt: number): number {
    const base = Math.min(this.retryBackoffMaxMs, this.retryBackoffMs * 2 ** (attempt - 1));
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private open(addr: { host: string; port: number; nodeId?: number }): Promise<Connection> {
    return Connection.connect({ ...this.connOpts, ...addr }).then((c) => {
      if (this.closed) {
        void c.close();
        throw new Error('The client is closed');
      }
      this.live.add(c);
      c.onClose(() => this.live.delete(c));
      return c;
    });
  }

  private updateMetadata(
    brokers: ReadonlyArray<{ nodeId: number; host: string; port: number; rack: string | null }>,
    controllerId: number,
    clusterId: string | null,
  ): void {
    const nodes = brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })).sort((a, b) => a.nodeId - b.nodeId);
    this.meta = { clusterId, controllerId, brokers: nodes, updatedAt: Date.now() };
    this.metadataStale = false;
    // a broker that moved: drop the connection to its old address
    for (const [id, p] of this.nodeConns) {
      const node = nodes.find((n) => n.nodeId === id);
      p.then(
        (c) => {
          if (node && (c.host !== node.host || c.port !== node.port)) void c.close();
        },
        () => undefined,
      );
    }
  }
}

/** `p`, or `onTimeout()` thrown when it does not settle within `ms`. */
function withDeadline<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
