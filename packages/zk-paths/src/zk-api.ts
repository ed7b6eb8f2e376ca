import type { EventEmitter } from 'node:events';
import type { CreateMode, Unwatch, ZkOp, ZkOpResult, ZkSessionEvent, ZkStat } from './zk-client.js';

/**
 * What Samsa uses of a ZooKeeper client. `ZkClient` implements it over a real ensemble;
 * `FakeZkClient` in memory, for unit tests of pure logic (state machines, KafkaZk).
 */
export interface ZkClientApi extends Pick<EventEmitter<{ state: [ZkSessionEvent] }>, 'on' | 'off' | 'once'> {
  readonly sessionId: string | undefined;
  create(path: string, data?: Buffer | null, opts?: { mode?: CreateMode; mkdirp?: boolean }): Promise<string>;
  mkdirp(path: string): Promise<void>;
  get(path: string): Promise<{ data: Buffer; stat: ZkStat }>;
  getOrNull(path: string): Promise<{ data: Buffer; stat: ZkStat } | null>;
  set(path: string, data: Buffer, version?: number): Promise<ZkStat>;
  exists(path: string): Promise<ZkStat | null>;
  getChildren(path: string): Promise<string[]>;
  delete(path: string, version?: number): Promise<void>;
  deleteRecursive(path: string): Promise<void>;
  /** One-shot data watch: the node (or null) now, `onEvent` once on its next change (creation, data, deletion). */
  getWithWatch(path: string, onEvent: () => void): Promise<{ data: Buffer; stat: ZkStat } | null>;
  /** The same through exists: only the stat. */
  existsWithWatch(path: string, onEvent: () => void): Promise<ZkStat | null>;
  watchChildren(path: string, handler: (children: string[] | null) => void): Unwatch;
  watchData(path: string, handler: (node: { data: Buffer; stat: ZkStat } | null) => void): Unwatch;
  multi(ops: ZkOp[]): Promise<ZkOpResult[]>;
  close(): Promise<void>;
}
