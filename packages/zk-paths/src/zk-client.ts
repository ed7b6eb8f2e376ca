import { EventEmitter } from 'node:events';
import zookeeper from 'node-zookeeper-client';
import type { Logger } from 'pino';
import { ZkCode, ZkError, ZkMultiError, isZkError } from './zk-errors.js';
import { type ZkAcl, type ZkAuthInfo, defaultAcls } from './zk-security.js';
import { installZkConnectionIo } from './zk-connection-io.js';

// the library copies the unread bytes once per packet read and makes a system call per request written
installZkConnectionIo();

/** Znode creation modes, as ZooKeeper numbers them. */
export const CreateMode = {
  Persistent: 0,
  Ephemeral: 1,
  PersistentSequential: 2,
  EphemeralSequential: 3,
} as const;
export type CreateMode = (typeof CreateMode)[keyof typeof CreateMode];

export interface ZkStat {
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ctime: number;
  mtime: number;
  version: number;
  cversion: number;
  aversion: number;
  ephemeralOwner: bigint;
  dataLength: number;
  numChildren: number;
}

export type ZkOp =
  | { type: 'create'; path: string; data?: Buffer | null; mode?: CreateMode }
  | { type: 'set'; path: string; data: Buffer; version?: number }
  | { type: 'delete'; path: string; version?: number }
  | { type: 'check'; path: string; version: number };

export interface ZkOpResult {
  type: ZkOp['type'];
  /** Created path (create ops; sequential nodes get their suffix). */
  path?: string;
  /** New stat (set ops). */
  stat?: ZkStat;
}

/** Session events, emitted as `'state'` with this value. */
export const ZkSessionEvent = {
  /** (Re)connected to a server; the session is the same one. */
  Connected: 'connected',
  /** Lost the TCP connection; the client is trying other servers, the session may survive. */
  Disconnected: 'disconnected',
  /** The session is gone (server-reported expiry, or silence past the liveness threshold). Ephemerals and watches are lost. */
  Expired: 'expired',
  /** A new session was established after an expiry: re-register ephemerals; armed watches re-arm themselves. */
  NewSession: 'newSession',
} as const;
export type ZkSessionEvent = (typeof ZkSessionEvent)[keyof typeof ZkSessionEvent];

export interface ZkClientOptions {
  /** `host:port,host:port[/chroot]`. A chroot is created when absent. */
  connectString: string;
  /** Requested session timeout (zookeeper.session.timeout.ms). Default 18000. */
  sessionTimeoutMs?: number;
  /** How long to wait for a connection (zookeeper.connection.timeout.ms). Default: the session timeout. */
  connectionTimeoutMs?: number;
  /** Credentials presented on every connection, before any request (e.g. `digest` `user:password`). */
  authInfo?: readonly ZkAuthInfo[];
  /**
   * Create every znode (parents and the chroot included) with Kafka's secure ACLs (zookeeper.set.acl):
   * the creator ALL and, outside the sensitive paths, world READ. Default false: open ACLs.
   */
  secureAcls?: boolean;
  logger?: Logger;
}

export type Unwatch = () => void;

export type ZkSessionStateName = 'CONNECTING' | 'CONNECTED' | 'DISCONNECTED' | 'EXPIRED' | 'CLOSED';

type RawStat = zookeeper.Stat;

function readLong(b: Buffer | undefined): bigint {
  return b && b.length >= 8 ? b.readBigInt64BE(0) : 0n;
}

export function toZkStat(s: RawStat): ZkStat {
  return {
    czxid: readLong(s.czxid),
    mzxid: readLong(s.mzxid),
    pzxid: readLong(s.pzxid),
    ctime: Number(readLong(s.ctime)),
    mtime: Number(readLong(s.mtime)),
    version: s.version,
    cversion: s.cversion,
    aversion: s.aversion,
    ephemeralOwner: readLong(s.ephemeralOwner),
    dataLength: s.dataLength,
    numChildren: s.numChildren,
  };
}

function toLibAcls(acls: readonly ZkAcl[]): zookeeper.ACL[] {
  return acls.map((a) => new zookeeper.ACL(a.perms, new zookeeper.Id(a.scheme, a.id)));
}

/**
 * node-zookeeper-client queues a connection's auth packets behind the requests already waiting (those
 * sent while it was disconnected), so after a reconnect a write could reach the new server before the
 * credentials: NOAUTH. This moves them to the front (nothing is sent before the connect response),
 * and drops those of earlier failed attempts, which the library leaves in the queue.
 */
function authFirstOnReconnect(inner: zookeeper.Client): void {
  type Packet = { request: { header: { type: number } | null } };
  const AUTH_OP = 100; // ZooKeeper's OpCode.auth
  const cm = (inner as unknown as { connectionManager?: Record<string, unknown> }).connectionManager;
  const original = cm?.['onSocketConnected'] as ((this: unknown) => void) | undefined;
  const queueOf = () => (cm?.['packetQueue'] as { queue?: Packet[] } | undefined)?.queue;
  if (!cm || !original || !Array.isArray(queueOf())) return;
  const isAuth = (p: Packet) => p.request.header?.type === AUTH_OP;
  cm['onSocketConnected'] = function (this: unknown) {
    const before = queueOf()!;
    before.splice(0, before.length, ...before.filter((p) => !isAuth(p)));
    original.call(this);
    const q = queueOf()!;
    q.splice(0, q.length, ...q.filter(isAuth), ...q.filter((p) => !isAuth(p)));
  };
}

function toZkError(err: unknown, path: string | undefined): ZkError {
  if (err instanceof ZkError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number') return new ZkError(code, path, undefined, { cause: err });
  return new ZkError(ZkCode.SYSTEM_ERROR, path, `ZooKeeper call failed${path ? ` at ${path}` : ''}: ${String(err)}`, {
    cause: err,
  });
}

/** Splits `h:p,h:p/chroot` into hosts and chroot ('' when none). */
export function parseConnectString(s: string): { hosts: string; chroot: string } {
  const i = s.indexOf('/');
  if (i < 0) return { hosts: s, chroot: '' };
  const chroot = s.slice(i).replace(/\/+$/, '');
  return { hosts: s.slice(0, i), chroot };
}

interface ArmedWatch {
  active: boolean;
  arm: () => void;
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Promise API over node-zookeeper-client: every ZooKeeper call in Samsa goes through one of these.
 *
 * node-zookeeper-client never times out a read: a server that stops answering (SIGSTOP, a dead
 * network path) leaves it "connected" forever. This client runs its own liveness timer: it pings
 * every sessionTimeout/6 and, after 2/3 of the negotiated session timeout without any answer,
 * declares the session lost (`expired`), abandons the connection, fails in-flight calls, and builds
 * a new session (`newSession`). Armed watches re-arm themselves on the new session.
 */
export class ZkClient extends EventEmitter<{ state: [ZkSessionEvent] }> {
  private inner: zookeeper.Client | undefined;
  private generation = 0;
  private closed = false;
  private ready: Deferred = deferred();
  private isReady = false;
  private readonly pending = new Set<(e: Error) => void>();
  private lastHeard = 0;
  private pingInFlight = false;
  private livenessTimer: NodeJS.Timeout | undefined;
  private readonly watches = new Set<ArmedWatch>();
  private readonly log: Logger | undefined;
  /** Kafka's SessionState: CONNECTING, CONNECTED, DISCONNECTED, EXPIRED (re-establishing) or CLOSED. */
  sessionState: ZkSessionStateName = 'CONNECTING';
  /** Called with each request's round trip in ms (Kafka's ZooKeeperRequestLatencyMs). */
  requestLatencyListener: ((ms: number) => void) | undefined;
  readonly sessionTimeoutMs: number;
  readonly connectionTimeoutMs: number;
  readonly hosts: string;
  readonly chroot: string;
  /** zookeeper.set.acl: znodes are created with Kafka's secure ACLs. */
  readonly secureAcls: boolean;

  private constructor(private readonly opts: ZkClientOptions) {
    super();
    const { hosts, chroot } = parseConnectString(opts.connectString);
    this.hosts = hosts;
    this.chroot = chroot;
    this.sessionTimeoutMs = opts.sessionTimeoutMs ?? 18_000;
    this.connectionTimeoutMs = opts.connectionTimeoutMs ?? this.sessionTimeoutMs;
    this.secureAcls = opts.secureAcls ?? false;
    this.log = opts.logger?.child({ component: 'zk-client' });
  }

  /** Connects (creating the chroot if needed) and resolves once a session is established. */
  static async connect(opts: ZkClientOptions): Promise<ZkClient> {
    const c = new ZkClient(opts);
    if (c.chroot) await c.ensureChroot();
    await c.startSession();
    return c;
  }

  /** Negotiated session timeout of the current session (ms). */
  get negotiatedSessionTimeoutMs(): number {
    return this.inner?.getSessionTimeout() ?? this.sessionTimeoutMs;
  }

  /** Current session id as hex, or undefined while there is none. */
  get sessionId(): string | undefined {
    if (!this.isReady || !this.inner) return undefined;
    return this.inner.getSessionId().toString('hex');
  }

  /** `host:port` of the server this client is connected to (undefined while disconnected). */
  get connectedServer(): string | undefined {
    const sock = (this.inner as unknown as { connectionManager?: { socket?: { remoteAddress?: string; remotePort?: number } } })?.connectionManager?.socket;
    if (!this.isReady || !sock?.remotePort) return undefined;
    return `${sock.remoteAddress}:${sock.remotePort}`;
  }

  private async ensureChroot(): Promise<void> {
    const root = new ZkClient({ ...this.opts, connectString: this.hosts });
    await root.startSession();
    try {
      await root.mkdirp(this.chroot);
    } finally {
      await root.close();
    }
  }

  /** Opens a new underlying client and waits for its session. Throws CONNECTION_LOSS on timeout. */
  private startSession(): Promise<void> {
    const gen = ++this.generation;
    const connect = this.chroot ? `${this.hosts}${this.chroot}` : this.hosts;
    const inner = zookeeper.createClient(connect, { sessionTimeout: this.sessionTimeoutMs, spinDelay: 200, retries: 0 });
    for (const a of this.opts.authInfo ?? []) inner.addAuthInfo(a.scheme, Buffer.from(a.auth));
    if (this.opts.authInfo?.length) authFirstOnReconnect(inner);
    this.inner = inner;
    let established = false;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (established || gen !== this.generation) return;
        this.abandon(inner);
        reject(new ZkError(ZkCode.CONNECTION_LOSS, undefined, `could not connect to ZooKeeper at ${this.hosts} within ${this.connectionTimeoutMs} ms`));
      }, this.connectionTimeoutMs);
      inner.on('state', (state: zookeeper.State) => {
        if (gen !== this.generation || this.closed) return;
        if (state === zookeeper.State.SYNC_CONNECTED || state === zookeeper.State.CONNECTED_READ_ONLY) {
          this.lastHeard = Date.now();
          if (!established) {
            established = true;
            clearTimeout(timer);
            this.isReady = true;
            this.sessionState = 'CONNECTED';
            this.ready.resolve();
            this.startLiveness();
            this.log?.info({ sessionId: inner.getSessionId().toString('hex'), timeoutMs: inner.getSessionTimeout() }, 'zookeeper session established');
            resolve();
          } else {
            this.log?.info('zookeeper reconnected');
            this.sessionState = 'CONNECTED';
            this.emit('state', ZkSessionEvent.Connected);
          }
        } else if (state === zookeeper.State.DISCONNECTED) {
          if (established) {
            this.log?.warn('zookeeper disconnected');
            this.sessionState = 'DISCONNECTED';
            this.emit('state', ZkSessionEvent.Disconnected);
          }
        } else if (state === zookeeper.State.EXPIRED) {
          if (established) this.sessionLost('expired by the server');
        } else if (state === zookeeper.State.AUTH_FAILED) {
          this.sessionLost('authentication failed');
        }
      });
      inner.connect();
    });
  }

  private abandon(inner: zookeeper.Client): void {
    inner.removeAllListeners('state');
    try {
      inner.close();
    } catch {
      /* ignore */
    }
    const cm = (inner as unknown as { connectionManager?: { socket?: { destroy(): void } } }).connectionManager;
    cm?.socket?.destroy();
  }

  private startLiveness(): void {
    clearInterval(this.livenessTimer);
    const gen = this.generation;
    const timeout = this.inner?.getSessionTimeout() || this.sessionTimeoutMs;
    const limit = Math.floor((timeout * 2) / 3);
    const every = Math.max(20, Math.floor(timeout / 6));
    this.pingInFlight = false;
    let lastTick = Date.now();
    this.livenessTimer = setInterval(() => {
      if (gen !== this.generation || this.closed) return;
      const now = Date.now();
      // Our own event loop was blocked (a long synchronous task, a GC pause): answers may be
      // waiting unread in the socket. Silence only counts while we were able to listen.
      if (now - lastTick > 2 * every) this.lastHeard = Math.max(this.lastHeard, now - every);
      lastTick = now;
      const silence = now - this.lastHeard;
      if (silence > limit) {
        this.sessionLost(`no answer from ZooKeeper for ${silence} ms (limit ${limit} ms of a ${timeout} ms session)`);
        return;
      }
      if (!this.pingInFlight && this.inner) {
        this.pingInFlight = true;
        this.inner.exists('/', (err) => {
          if (gen !== this.generation) return;
          this.pingInFlight = false;
          if (!err || (err as { code?: number }).code !== ZkCode.CONNECTION_LOSS) this.lastHeard = Date.now();
        });
      }
    }, every);
    this.livenessTimer.unref();
  }

  private sessionLost(reason: string): void {
    if (this.closed) return;
    const old = this.inner;
    this.generation++;
    this.isReady = false;
    this.sessionState = 'EXPIRED';
    this.ready = deferred();
    clearInterval(this.livenessTimer);
    if (old) this.abandon(old);
    this.inner = undefined;
    const err = new ZkError(ZkCode.SESSION_LOST, undefined, `ZooKeeper session lost: ${reason}`);
    for (const reject of this.pending) reject(err);
    this.pending.clear();
    this.log?.error({ reason }, 'zookeeper session lost');
    this.emit('state', ZkSessionEvent.Expired);
    void this.reestablish();
  }

  private async reestablish(): Promise<void> {
    let delay = 100;
    while (!this.closed) {
      try {
        await this.startSession();
        this.emit('state', ZkSessionEvent.NewSession);
        for (const w of this.watches) w.arm();
        return;
      } catch (err) {
        this.log?.warn({ err }, 'zookeeper reconnect failed; retrying');
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 2000);
      }
    }
  }

  private async client(): Promise<zookeeper.Client> {
    if (this.closed) throw new ZkError(ZkCode.CLIENT_CLOSED, undefined, 'ZkClient is closed');
    if (!this.isReady) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ZkError(ZkCode.CONNECTION_LOSS, undefined, `no ZooKeeper session after ${this.connectionTimeoutMs} ms`)),
          this.connectionTimeoutMs,
        );
      });
      try {
        await Promise.race([this.ready.promise, timeout]);
      } finally {
        clearTimeout(timer);
      }
      if (this.closed) throw new ZkError(ZkCode.CLIENT_CLOSED, undefined, 'ZkClient is closed');
    }
    return this.inner!;
  }

  /**
   * Runs one node-zookeeper-client call. Idempotent calls (reads) are retried after a connection
   * loss once the client has reconnected; writes surface CONNECTION_LOSS to the caller.
   */
  private async call<T>(
    path: string | undefined,
    idempotent: boolean,
    fn: (c: zookeeper.Client, cb: (err: unknown, ...res: unknown[]) => void) => void,
    map: (res: unknown[]) => T,
  ): Promise<T> {
    for (;;) {
      const inner = await this.client();
      const started = performance.now();
      try {
        return await new Promise<T>((resolve, reject) => {
          const rej = (e: Error) => reject(e);
          this.pending.add(rej);
          fn(inner, (err, ...res) => {
            if (!this.pending.delete(rej)) return; // the session was lost meanwhile: already rejected
            this.requestLatencyListener?.(performance.now() - started);
            const code = (err as { code?: number } | null)?.code;
            if (code !== ZkCode.CONNECTION_LOSS) this.lastHeard = Date.now();
            if (err) reject(toZkError(err, path));
            else {
              try {
                resolve(map(res));
              } catch (e) {
                reject(e as Error);
              }
            }
          });
        });
      } catch (err) {
        if (idempotent && isZkError(err, ZkCode.CONNECTION_LOSS) && !this.closed) continue;
        throw err;
      }
    }
  }

  // ---- operations -------------------------------------------------------------------------

  /** Creates a znode. With `mkdirp`, missing parents are created (empty, persistent). */
  async create(path: string, data: Buffer | null = null, opts: { mode?: CreateMode; mkdirp?: boolean } = {}): Promise<string> {
    const mode = opts.mode ?? CreateMode.Persistent;
    if (opts.mkdirp) {
      const parent = path.slice(0, path.lastIndexOf('/'));
      if (parent) await this.mkdirp(parent);
    }
    return this.call(
      path,
      false,
      (c, cb) => c.create(path, data ?? Buffer.alloc(0), this.aclsFor(path), mode, cb),
      (r) => r[0] as string,
    );
  }

  /** Creates every missing node on the way to `path` (persistent, empty). */
  async mkdirp(path: string): Promise<void> {
    const parts = path.split('/').filter(Boolean);
    let cur = '';
    for (const p of parts) {
      cur += `/${p}`;
      try {
        await this.create(cur);
      } catch (err) {
        if (!isZkError(err, ZkCode.NODE_EXISTS)) throw err;
      }
    }
  }

  /** The ACLs a znode created at `path` gets (Kafka's ZkData.defaultAcls; the path is below the chroot). */
  private aclsFor(path: string): zookeeper.ACL[] {
    return toLibAcls(defaultAcls(this.secureAcls, path));
  }

  /** A znode's ACLs (getACL). */
  async getAcl(path: string): Promise<ZkAcl[]> {
    return this.call(
      path,
      true,
      (c, cb) => c.getACL(path, cb),
      // the library's ACL objects carry `permission` (its typings say `perms`)
      (r) => (r[0] as zookeeper.ACL[]).map((a) => ({ perms: (a as unknown as { permission: number }).permission, scheme: a.id.scheme, id: a.id.id })),
    );
  }

  async get(path: string): Promise<{ data: Buffer; stat: ZkStat }> {
    return this.call(
      path,
      true,
      (c, cb) => c.getData(path, cb),
      (r) => ({ data: (r[0] as Buffer | null) ?? Buffer.alloc(0), stat: toZkStat(r[1] as RawStat) }),
    );
  }

  /** Like get, but null when the node does not exist. */
  async getOrNull(path: string): Promise<{ data: Buffer; stat: ZkStat } | null> {
    try {
      return await this.get(path);
    } catch (err) {
      if (isZkError(err, ZkCode.NO_NODE)) return null;
      throw err;
    }
  }

  /** Sets data; `version` -1 means unconditional. BAD_VERSION on a mismatch. */
  async set(path: string, data: Buffer, version = -1): Promise<ZkStat> {
    return this.call(
      path,
      false,
      (c, cb) => c.setData(path, data, version, cb),
      (r) => toZkStat(r[0] as RawStat),
    );
  }

  async exists(path: string): Promise<ZkStat | null> {
    return this.call(
      path,
      true,
      (c, cb) => c.exists(path, cb),
      (r) => (r[0] ? toZkStat(r[0] as RawStat) : null),
    );
  }

  async getChildren(path: string): Promise<string[]> {
    return this.call(
      path,
      true,
      (c, cb) => c.getChildren(path, cb),
      (r) => (r[0] as string[]).slice().sort(),
    );
  }

  async delete(path: string, version = -1): Promise<void> {
    await this.call(
      path,
      false,
      (c, cb) => c.remove(path, version, cb),
      () => undefined,
    );
  }

  /** Deletes a subtree, children first. Missing nodes are ignored. */
  deleteRecursive(path: string): Promise<void> {
    return deleteTree(this, path, async (p) => {
      try {
        await this.delete(p);
      } catch (err) {
        if (!isZkError(err, ZkCode.NO_NODE)) throw err;
      }
    });
  }

  /** One-shot watch on a node's data: resolves with the data (or null) and calls `onEvent` once. */
  async getWithWatch(path: string, onEvent: () => void): Promise<{ data: Buffer; stat: ZkStat } | null> {
    const gen = this.generation;
    const watcher = () => {
      if (gen === this.generation) onEvent();
    };
    try {
      return await this.call(
        path,
        true,
        (c, cb) => c.getData(path, watcher, cb),
        (r) => ({ data: (r[0] as Buffer | null) ?? Buffer.alloc(0), stat: toZkStat(r[1] as RawStat) }),
      );
    } catch (err) {
      if (!isZkError(err, ZkCode.NO_NODE)) throw err;
      const stat = await this.call(
        path,
        true,
        (c, cb) => c.exists(path, watcher, cb),
        (r) => (r[0] ? toZkStat(r[0] as RawStat) : null),
      );
      // created between the two calls: read it (the exists watch will fire on the next change)
      return stat ? this.get(path) : null;
    }
  }

  /** One-shot watch through exists (a data watch, or a creation watch when absent): resolves with the stat and calls `onEvent` once. */
  async existsWithWatch(path: string, onEvent: () => void): Promise<ZkStat | null> {
    const gen = this.generation;
    const watcher = () => {
      if (gen === this.generation) onEvent();
    };
    return this.call(
      path,
      true,
      (c, cb) => c.exists(path, watcher, cb),
      (r) => (r[0] ? toZkStat(r[0] as RawStat) : null),
    );
  }

  /** One-shot watch on a node's children: resolves with them (null if the node is absent). */
  async getChildrenWithWatch(path: string, onEvent: () => void): Promise<string[] | null> {
    const gen = this.generation;
    const watcher = () => {
      if (gen === this.generation) onEvent();
    };
    try {
      return await this.call(
        path,
        true,
        (c, cb) => c.getChildren(path, watcher, cb),
        (r) => (r[0] as string[]).slice().sort(),
      );
    } catch (err) {
      if (!isZkError(err, ZkCode.NO_NODE)) throw err;
      const stat = await this.call(
        path,
        true,
        (c, cb) => c.exists(path, watcher, cb),
        (r) => r[0] ?? null,
      );
      return stat ? this.getChildren(path) : null;
    }
  }

  /**
   * Keeps a child watch armed on `path`: `handler` gets the current (sorted) children — or null when
   * the node does not exist — now, after every change, and after every new session.
   */
  watchChildren(path: string, handler: (children: string[] | null) => void): Unwatch {
    return this.keepArmed(path, async (rearm) => handler(await this.getChildrenWithWatch(path, rearm)));
  }

  /** Keeps a data watch armed on `path`: `handler` gets the data and stat (or null when absent). */
  watchData(path: string, handler: (node: { data: Buffer; stat: ZkStat } | null) => void): Unwatch {
    return this.keepArmed(path, async (rearm) => handler(await this.getWithWatch(path, rearm)));
  }

  private keepArmed(path: string, readAndWatch: (rearm: () => void) => Promise<void>): Unwatch {
    const w: ArmedWatch = {
      active: true,
      arm: () => {
        if (!w.active || this.closed) return;
        readAndWatch(() => w.arm()).catch((err: unknown) => {
          if (!w.active || this.closed) return;
          // a lost session re-arms every watch when the new one is up; anything else retries shortly
          if (isZkError(err, ZkCode.SESSION_LOST)) return;
          this.log?.warn({ err, path }, 'watch re-arm failed; retrying');
          setTimeout(() => w.arm(), 200).unref();
        });
      },
    };
    this.watches.add(w);
    w.arm();
    return () => {
      w.active = false;
      this.watches.delete(w);
    };
  }

  /**
   * Runs ops atomically. On failure throws ZkMultiError naming the first failing op and its code;
   * nothing was applied.
   */
  async multi(ops: ZkOp[]): Promise<ZkOpResult[]> {
    const inner = await this.client();
    const started = performance.now();
    return new Promise<ZkOpResult[]>((resolve, reject) => {
      const rej = (e: Error) => reject(e);
      this.pending.add(rej);
      let tx = inner.transaction();
      // node-zookeeper-client's Transaction turns version 0 into -1 (`version || -1`), silently
      // making check/set/delete of a fresh node unconditional: write the real version back.
      const txOps = (tx as unknown as { ops: Array<{ version?: number }> }).ops;
      const pinVersion = (v: number | undefined) => {
        const last = txOps[txOps.length - 1];
        if (last) last.version = v ?? -1;
      };
      for (const op of ops) {
        switch (op.type) {
          case 'create':
            tx = tx.create(op.path, op.data ?? Buffer.alloc(0), this.aclsFor(op.path), op.mode ?? CreateMode.Persistent);
            break;
          case 'set':
            tx = tx.setData(op.path, op.data, op.version ?? -1);
            pinVersion(op.version);
            break;
          case 'delete':
            tx = tx.remove(op.path, op.version ?? -1);
            pinVersion(op.version);
            break;
          case 'check':
            tx = tx.check(op.path, op.version);
            pinVersion(op.version);
            break;
          default: {
            const never: never = op;
            throw new Error(`unknown multi op ${JSON.stringify(never)}`);
          }
        }
      }
      tx.commit((err: unknown, results: Array<{ type: number; err?: number; path?: string; stat?: RawStat }> | undefined) => {
        if (!this.pending.delete(rej)) return;
        this.requestLatencyListener?.(performance.now() - started);
        const code = (err as { code?: number } | null)?.code;
        if (code !== ZkCode.CONNECTION_LOSS) this.lastHeard = Date.now();
        if (err) {
          if (results && results.length === ops.length) {
            const codes = results.map((r) => (r.type === -1 ? (r.err ?? 0) : 0));
            const idx = codes.findIndex((c) => c !== 0);
            reject(new ZkMultiError(codes[idx] ?? ZkCode.SYSTEM_ERROR, idx, codes, ops[idx]?.path, { cause: err }));
          } else {
            reject(toZkError(err, undefined));
          }
          return;
        }
        resolve(
          (results ?? []).map((r, i) => ({
            type: ops[i]!.type,
            ...(r.path !== undefined ? { path: r.path } : {}),
            ...(r.stat ? { stat: toZkStat(r.stat) } : {}),
          })),
        );
      });
    });
  }

  /** Closes the session (ephemerals go away now, not after the timeout). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sessionState = 'CLOSED';
    clearInterval(this.livenessTimer);
    this.watches.clear();
    const inner = this.inner;
    this.inner = undefined;
    this.generation++;
    const err = new ZkError(ZkCode.CLIENT_CLOSED, undefined, 'ZkClient is closed');
    for (const reject of this.pending) reject(err);
    this.pending.clear();
    this.ready.resolve();
    if (!inner) return;
    if (!this.isReady) {
      this.abandon(inner);
      return;
    }
    this.isReady = false;
    // wait for the close-session round trip (bounded), then drop the socket
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 1000);
      inner.once('state', () => {
        clearTimeout(t);
        resolve();
      });
      inner.close();
    });
    this.abandon(inner);
  }
}

/**
 * Deletes the subtree at `path` children first with `deleteOne` (which should ignore a node
 * already gone); a missing `path` is nothing to do.
 */
export async function deleteTree(
  zk: { getChildren(path: string): Promise<string[]> },
  path: string,
  deleteOne: (path: string) => Promise<void>,
): Promise<void> {
  let children: string[];
  try {
    children = await zk.getChildren(path);
  } catch (err) {
    if (isZkError(err, ZkCode.NO_NODE)) return;
    throw err;
  }
  for (const c of children) await deleteTree(zk, `${path === '/' ? '' : path}/${c}`, deleteOne);
  await deleteOne(path);
}
