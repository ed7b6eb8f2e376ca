import { EventEmitter } from 'node:events';
import { CreateMode, type Unwatch, type ZkOp, type ZkOpResult, type ZkSessionEvent, type ZkStat } from './zk-client.js';
import type { ZkClientApi } from './zk-api.js';
import { ZkCode, ZkError, ZkMultiError } from './zk-errors.js';

interface Node {
  data: Buffer;
  version: number;
  cversion: number;
  czxid: bigint;
  mzxid: bigint;
  ephemeralOwner: bigint;
  seq: number;
}

/** One in-memory ZooKeeper tree shared by several FakeZkClient "sessions". */
export class FakeZkServer {
  readonly nodes = new Map<string, Node>([['/', { data: Buffer.alloc(0), version: 0, cversion: 0, czxid: 0n, mzxid: 0n, ephemeralOwner: 0n, seq: 0 }]]);
  zxid = 0n;
  private nextSession = 1n;
  readonly watchers = new Set<() => void>();

  newSessionId(): bigint {
    return this.nextSession++;
  }

  /** Runs every registered watcher re-read (armed watches re-read the tree after each write). */
  changed(): void {
    for (const w of [...this.watchers]) w();
  }
}

const parentOf = (p: string) => (p.lastIndexOf('/') <= 0 ? '/' : p.slice(0, p.lastIndexOf('/')));

/**
 * An in-memory ZooKeeper client behind the same interface as ZkClient: versions, ephemerals,
 * sequential nodes, multi with check ops (all or nothing), armed watches (re-read after every
 * write). For unit tests of logic that talks to ZooKeeper; integration tests use the real ensemble.
 */
export class FakeZkClient extends EventEmitter<{ state: [ZkSessionEvent] }> implements ZkClientApi {
  private readonly session: bigint;
  private closed = false;

  constructor(readonly server: FakeZkServer = new FakeZkServer()) {
    super();
    this.session = server.newSessionId();
  }

  get sessionId(): string | undefined {
    return this.closed ? undefined : this.session.toString(16);
  }

  private stat(n: Node, path: string): ZkStat {
    const children = [...this.server.nodes.keys()].filter((k) => k !== '/' && parentOf(k) === path).length;
    return {
      czxid: n.czxid,
      mzxid: n.mzxid,
      pzxid: n.mzxid,
      ctime: 0,
      mtime: 0,
      version: n.version,
      cversion: n.cversion,
      aversion: 0,
      ephemeralOwner: n.ephemeralOwner,
      dataLength: n.data.length,
      numChildren: children,
    };
  }

  private node(path: string): Node {
    const n = this.server.nodes.get(path);
    if (!n) throw new ZkError(ZkCode.NO_NODE, path);
    return n;
  }

  /** Applies one op to `nodes` (a working copy during multi). */
  private apply(nodes: Map<string, Node>, op: ZkOp): ZkOpResult {
    const s = this.server;
    switch (op.type) {
      case 'create': {
        const parent = nodes.get(parentOf(op.path));
        if (!parent) throw new ZkError(ZkCode.NO_NODE, op.path);
        if (parent.ephemeralOwner !== 0n) throw new ZkError(ZkCode.NO_CHILDREN_FOR_EPHEMERALS, op.path);
        const mode = op.mode ?? CreateMode.Persistent;
        let path = op.path;
        if (mode === CreateMode.PersistentSequential || mode === CreateMode.EphemeralSequential) {
          path = `${op.path}${String(parent.seq++).padStart(10, '0')}`;
        }
        if (nodes.has(path)) throw new ZkError(ZkCode.NODE_EXISTS, path);
        const zxid = ++s.zxid;
        const eph = mode === CreateMode.Ephemeral || mode === CreateMode.EphemeralSequential ? this.session : 0n;
        nodes.set(path, { data: op.data ?? Buffer.alloc(0), version: 0, cversion: 0, czxid: zxid, mzxid: zxid, ephemeralOwner: eph, seq: 0 });
        parent.cversion++;
        return { type: 'create', path };
      }
      case 'set': {
        const n = nodes.get(op.path);
        if (!n) throw new ZkError(ZkCode.NO_NODE, op.path);
        if (op.version !== undefined && op.version !== -1 && op.version !== n.version) throw new ZkError(ZkCode.BAD_VERSION, op.path);
        const updated = { ...n, data: op.data, version: n.version + 1, mzxid: ++s.zxid };
        nodes.set(op.path, updated);
        return { type: 'set', stat: this.stat(updated, op.path) };
      }
      case 'delete': {
        const n = nodes.get(op.path);
        if (!n) throw new ZkError(ZkCode.NO_NODE, op.path);
        if (op.version !== undefined && op.version !== -1 && op.version !== n.version) throw new ZkError(ZkCode.BAD_VERSION, op.path);
        if ([...nodes.keys()].some((k) => k !== op.path && parentOf(k) === op.path)) throw new ZkError(ZkCode.NOT_EMPTY, op.path);
        nodes.delete(op.path);
        const parent = nodes.get(parentOf(op.path));
        if (parent) parent.cversion++;
        return { type: 'delete' };
      }
      case 'check': {
        const n = nodes.get(op.path);
        if (!n) throw new ZkError(ZkCode.NO_NODE, op.path);
        if (op.version !== -1 && op.version !== n.version) throw new ZkError(ZkCode.BAD_VERSION, op.path);
        return { type: 'check' };
      }
      default: {
        const never: never = op;
        throw new Error(`unknown op ${JSON.stringify(never)}`);
      }
    }
  }

  private write(op: ZkOp): ZkOpResult {
    this.ensureOpen();
    const r = this.apply(this.server.nodes, op);
    queueMicrotask(() => this.server.changed());
    return r;
  }

  private ensureOpen(): void {
    if (this.closed) throw new ZkError(ZkCode.CLIENT_CLOSED, undefined, 'ZkClient is closed');
  }

  async create(path: string, data: Buffer | null = null, opts: { mode?: CreateMode; mkdirp?: boolean } = {}): Promise<string> {
    if (opts.mkdirp) await this.mkdirp(parentOf(path));
    return this.write({ type: 'create', path, data, mode: opts.mode ?? CreateMode.Persistent }).path!;
  }

  async mkdirp(path: string): Promise<void> {
    let cur = '';
    for (const p of path.split('/').filter(Boolean)) {
      cur += `/${p}`;
      if (!this.server.nodes.has(cur)) this.write({ type: 'create', path: cur });
    }
  }

  async get(path: string): Promise<{ data: Buffer; stat: ZkStat }> {
    this.ensureOpen();
    const n = this.node(path);
    return { data: n.data, stat: this.stat(n, path) };
  }

  async getOrNull(path: string): Promise<{ data: Buffer; stat: ZkStat } | null> {
    return this.server.nodes.has(path) ? this.get(path) : null;
  }

  async set(path: string, data: Buffer, version = -1): Promise<ZkStat> {
    return this.write({ type: 'set', path, data, version }).stat!;
  }

  async exists(path: string): Promise<ZkStat | null> {
    this.ensureOpen();
    const n = this.server.nodes.get(path);
    return n ? this.stat(n, path) : null;
  }

  async getChildren(path: string): Promise<string[]> {
    this.ensureOpen();
    this.node(path);
    const prefix = path === '/' ? '/' : `${path}/`;
    return [...this.server.nodes.keys()]
      .filter((k) => k !== '/' && parentOf(k) === path)
      .map((k) => k.slice(prefix.length))
      .sort();
  }

  async delete(path: string, version = -1): Promise<void> {
    this.write({ type: 'delete', path, version });
  }

  async deleteRecursive(path: string): Promise<void> {
    if (!this.server.nodes.has(path)) return;
    for (const c of await this.getChildren(path)) await this.deleteRecursive(`${path === '/' ? '' : path}/${c}`);
    await this.delete(path);
  }

  /** A one-shot data watch as ZooKeeper's: `onEvent` once when the node is created, written or deleted. */
  private oneShot(path: string, onEvent: () => void): void {
    const seen = this.server.nodes.get(path)?.mzxid ?? -1n;
    const check = () => {
      if (this.closed) this.server.watchers.delete(check);
      else if ((this.server.nodes.get(path)?.mzxid ?? -1n) !== seen) {
        this.server.watchers.delete(check);
        onEvent();
      }
    };
    this.server.watchers.add(check);
  }

  async getWithWatch(path: string, onEvent: () => void): Promise<{ data: Buffer; stat: ZkStat } | null> {
    const n = await this.getOrNull(path);
    this.oneShot(path, onEvent);
    return n;
  }

  async existsWithWatch(path: string, onEvent: () => void): Promise<ZkStat | null> {
    const s = await this.exists(path);
    this.oneShot(path, onEvent);
    return s;
  }

  /** An armed watch: re-reads after every write to the tree; the handler sees only changes. */
  private arm(read: () => Promise<string>): Unwatch {
    let active = true;
    const check = () => {
      if (!active || this.closed) return;
      void read();
    };
    this.server.watchers.add(check);
    check();
    return () => {
      active = false;
      this.server.watchers.delete(check);
    };
  }

  watchChildren(path: string, handler: (children: string[] | null) => void): Unwatch {
    return this.arm(async () => {
      const c = this.server.nodes.has(path) ? await this.getChildren(path) : null;
      const key = JSON.stringify(c);
      if (key !== (this.lastSeen.get(handler) ?? '\u0000')) {
        this.lastSeen.set(handler, key);
        handler(c);
      }
      return key;
    });
  }

  watchData(path: string, handler: (node: { data: Buffer; stat: ZkStat } | null) => void): Unwatch {
    return this.arm(async () => {
      const n = await this.getOrNull(path);
      const key = n ? `${n.stat.mzxid}` : 'null';
      if (key !== (this.lastSeen.get(handler) ?? '\u0000')) {
        this.lastSeen.set(handler, key);
        handler(n);
      }
      return key;
    });
  }

  private readonly lastSeen = new WeakMap<object, string>();

  async multi(ops: ZkOp[]): Promise<ZkOpResult[]> {
    this.ensureOpen();
    // all or nothing: apply to a copy, keep it only if every op succeeded
    const copy = new Map([...this.server.nodes].map(([k, v]) => [k, { ...v }]));
    const zxid = this.server.zxid;
    const results: ZkOpResult[] = [];
    for (let i = 0; i < ops.length; i++) {
      try {
        results.push(this.apply(copy, ops[i]!));
      } catch (err) {
        this.server.zxid = zxid;
        const code = err instanceof ZkError ? err.code : ZkCode.SYSTEM_ERROR;
        const codes = ops.map((_, j) => (j < i ? 0 : j === i ? code : ZkCode.RUNTIME_INCONSISTENCY));
        throw new ZkMultiError(code, i, codes, ops[i]!.path, { cause: err });
      }
    }
    this.server.nodes.clear();
    for (const [k, v] of copy) this.server.nodes.set(k, v);
    queueMicrotask(() => this.server.changed());
    return results;
  }

  /** Closing ends the session: its ephemerals go. */
  async close(): Promise<void> {
    if (this.closed) return;
    for (const [k, n] of [...this.server.nodes]) if (n.ephemeralOwner === this.session) this.server.nodes.delete(k);
    this.closed = true;
    queueMicrotask(() => this.server.changed());
  }
}
