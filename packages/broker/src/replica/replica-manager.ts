import type { Logger } from 'pino';
import {
  ErrorCode,
  KafkaError,
  errorCodeOf,
  type LeaderAndIsrRequest,
  type LeaderAndIsrResponse,
  type PartitionError,
  type StopReplicaRequest,
  type StopReplicaResponse,
} from '@samsa/protocol';
import type { Log, LogAppendInfo } from '../log/log.js';
import type { LogConfig } from '../log/config.js';
import type { FetchDataInfo } from '../log/segment.js';
import { CreateMode, IsrChangeNotificationSequenceZNode, type KafkaZk } from '@samsa/zk-paths';
import { dirname, join, resolve } from 'node:path';
import { OffsetCheckpointFile } from '../log/checkpoint.js';
import { ReplicaFetcherManager } from './fetcher-manager.js';
import { ReplicationQuotaManager, type QuotaWindow } from './replication-quota.js';
import type { FetcherOptions } from './replica-fetcher.js';
import { Partition } from './partition.js';
import { DelayedOperationPurgatory } from '../purgatory/purgatory.js';
import { SystemTimer } from '../purgatory/timing-wheel.js';
import type { DelayedProduce } from '../purgatory/delayed-produce.js';
import type { DelayedFetch } from '../purgatory/delayed-fetch.js';
import type { DelayedDeleteRecords } from '../purgatory/delayed-delete-records.js';

export interface TopicPartition {
  topic: string;
  partition: number;
}

const key = (topic: string, partition: number) => `${topic}-${partition}`;

/** What the replica manager needs from the log manager. */
export interface LogProvider {
  getOrCreateLog(tp: TopicPartition, config: LogConfig, topicId: string): Promise<Log>;
  getLog(tp: TopicPartition): Log | undefined;
  /** Closes and schedules deletion (`<dir>.<uuid>-delete`, removed asynchronously). */
  deleteLog(tp: TopicPartition): Promise<void>;
}

/** Per-topic settings resolved from /config/topics/<t> over the broker defaults. */
export interface TopicSettings {
  logConfig: LogConfig;
  minInsyncReplicas: number;
  /** message.timestamp.before/after.max.ms (CreateTime checks); Infinity = unbounded. */
  timestampBeforeMaxMs: number;
  timestampAfterMaxMs: number;
  /** cleanup.policy includes compact (records need keys). */
  compacted: boolean;
  /** cleanup.policy includes delete (DeleteRecords is refused otherwise); absent means yes. */
  deletes?: boolean;
}

export interface ReplicaManagerOptions {
  brokerId: number;
  logs: LogProvider;
  topicSettings: (topic: string) => Promise<TopicSettings>;
  logger: Logger;
  stateChangeLogger: Logger;
  kzk: KafkaZk;
  /** replica.lag.time.max.ms */
  replicaLagTimeMaxMs: number;
  /** inter.broker.listener.name: where followers fetch from. */
  interBrokerListenerName: string;
  fetcher: Omit<FetcherOptions, 'brokerId'> & { numFetchers: number };
  /** log.dirs, for replication-offset-checkpoint (the high watermarks). */
  logDirs: readonly string[];
  /** replica.high.watermark.checkpoint.interval.ms */
  highWatermarkCheckpointIntervalMs: number;
  /** replication.quota.window.num × replication.quota.window.size.seconds (Kafka: 11 × 1 s). */
  replicationQuotaWindow?: QuotaWindow;
  /** Told of each ISR expand/shrink a leader here wrote (the metrics registry counts them). */
  onIsrChange?: (why: 'expand' | 'shrink') => void;
  /** Whether a broker is alive in the metadata cache (the DeleteRecords low watermark counts live followers only). */
  isBrokerAlive?: (brokerId: number) => boolean;
}

const REPLICATION_OFFSET_CHECKPOINT = 'replication-offset-checkpoint';

/** Kafka's ISR-change propagation rule: write when the last change is 5 s old, or 60 s passed. */
const ISR_CHANGE_QUIET_MS = 5000;
const ISR_CHANGE_MAX_DELAY_MS = 60_000;
const ISR_PROPAGATION_INTERVAL_MS = 2500;

/** A partition this broker started or stopped leading (the group coordinator follows `__consumer_offsets`). */
export interface LeadershipChange {
  topic: string;
  partition: number;
  /** The leader epoch of the change; -1 when unknown (StopReplica without one). */
  leaderEpoch: number;
  isLeader: boolean;
}

export interface AppendResult {
  topic: string;
  partition: number;
  errorCode: number;
  errorMessage: string | null;
  info: LogAppendInfo | undefined;
}

export interface FetchEntry {
  topic: string;
  partition: number;
  fetchOffset: bigint;
  maxBytes: number;
  currentLeaderEpoch: number;
  /** A follower's log start offset (fetch v5+); -1 or absent otherwise. */
  logStartOffset?: bigint;
}

export interface ReadResult {
  topic: string;
  partition: number;
  errorCode: number;
  highWatermark: bigint;
  logStartOffset: bigint;
  lastStableOffset: bigint;
  data: FetchDataInfo | undefined;
}

/**
 * Kafka's ReplicaManager: applies the controller's LeaderAndIsr and StopReplica to this broker's
 * partitions, appends produced records on leaders and serves reads. Controller requests carrying
 * an older controller epoch than one already seen are rejected (STALE_CONTROLLER_EPOCH).
 */
export class ReplicaManager {
  readonly partitions = new Map<string, Partition>();
  controllerEpoch = 0;
  private readonly log: Logger;
  private readonly topicSettingsCache = new Map<string, TopicSettings>();
  readonly fetchers: ReplicaFetcherManager;
  /** Replication throttles: leader (bytes sent to throttled followers) and follower (bytes fetched). */
  readonly quotas: { leader: ReplicationQuotaManager; follower: ReplicationQuotaManager };
  /** The purgatory's timing wheel, and Kafka's two purgatories, produce and fetch (keyed by partition). */
  readonly timer = new SystemTimer();
  readonly producePurgatory: DelayedOperationPurgatory<DelayedProduce>;
  readonly fetchPurgatory: DelayedOperationPurgatory<DelayedFetch>;
  /** DeleteRecords waiting for every replica's log start offset (Kafka's DelayedDeleteRecords). */
  readonly deleteRecordsPurgatory: DelayedOperationPurgatory<DelayedDeleteRecords>;
  private readonly isrChangeSet = new Map<string, TopicPartition>();
  private lastIsrChangeMs = 0;
  private lastIsrPropagationMs = Date.now();
  private timers: NodeJS.Timeout[] = [];
  private readonly leadershipListeners = new Set<(c: LeadershipChange) => void>();

  constructor(private readonly o: ReplicaManagerOptions) {
    this.log = o.logger.child({ component: 'replica-manager' });
    const window = o.replicationQuotaWindow ?? { samples: 11, sampleMs: 1000 };
    this.quotas = { leader: new ReplicationQuotaManager('leader', window), follower: new ReplicationQuotaManager('follower', window) };
    this.fetchers = new ReplicaFetcherManager({ ...o.fetcher, brokerId: o.brokerId, quota: this.quotas.follower }, this.log);
    this.producePurgatory = new DelayedOperationPurgatory('Produce', this.timer);
    this.fetchPurgatory = new DelayedOperationPurgatory('Fetch', this.timer);
    this.deleteRecordsPurgatory = new DelayedOperationPurgatory('DeleteRecords', this.timer);
  }

  /** High watermarks read from replication-offset-checkpoint at startup, applied when a partition gets its log. */
  private checkpointedHw = new Map<string, bigint>();

  /** Reads every log dir's replication-offset-checkpoint (Kafka restores HWs from it). */
  async loadHighWatermarks(): Promise<void> {
    for (const dir of this.o.logDirs) {
      try {
        for (const [k, hw] of await new OffsetCheckpointFile(join(dir, REPLICATION_OFFSET_CHECKPOINT)).read()) this.checkpointedHw.set(k, hw);
      } catch (err) {
        this.log.warn({ err, dir }, 'unreadable replication-offset-checkpoint; high watermarks start at the log start');
      }
    }
  }

  /** Writes each log dir's high watermarks (atomically, Kafka's checkpoint format). */
  async checkpointHighWatermarks(): Promise<void> {
    const byDir = new Map<string, Array<{ topic: string; partition: number; offset: bigint }>>();
    for (const d of this.o.logDirs) byDir.set(resolve(d), []);
    for (const p of this.partitions.values()) {
      const log = p.log;
      if (!log) continue;
      const dir = resolve(dirname(log.dir));
      const list = byDir.get(dir) ?? [];
      list.push({ topic: p.topic, partition: p.partition, offset: log.highWatermark });
      byDir.set(dir, list);
    }
    for (const [dir, entries] of byDir) await new OffsetCheckpointFile(join(dir, REPLICATION_OFFSET_CHECKPOINT)).write(entries);
  }

  /** Starts the isr-expiration (replica.lag.time.max.ms / 2), isr-change-propagation and HW checkpoint tasks. */
  startup(): void {
    const hwTask = setInterval(() => {
      this.checkpointHighWatermarks().catch((err: unknown) => this.log.warn({ err }, 'high watermark checkpoint failed'));
    }, Math.max(100, this.o.highWatermarkCheckpointIntervalMs));
    hwTask.unref();
    this.timers.push(hwTask);
    const expire = setInterval(() => void this.shrinkIsrs(), Math.max(50, Math.floor(this.o.replicaLagTimeMaxMs / 2)));
    const propagate = setInterval(() => void this.maybePropagateIsrChanges(), ISR_PROPAGATION_INTERVAL_MS);
    expire.unref();
    propagate.unref();
    this.timers.push(expire, propagate);
  }

  private fetchingStopped = false;

  /** Controlled shutdown: stop following now and for good (leaderships moved away become no fetchers). */
  async stopFetching(): Promise<void> {
    this.fetchingStopped = true;
    await this.fetchers.shutdown();
  }

  async shutdown(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.producePurgatory.shutdown();
    this.fetchPurgatory.shutdown();
    this.deleteRecordsPurgatory.shutdown();
    this.timer.shutdown();
    await this.checkpointHighWatermarks().catch((err: unknown) => this.log.warn({ err }, 'final high watermark checkpoint failed'));
    await this.fetchers.shutdown();
  }

  private async shrinkIsrs(): Promise<void> {
    const now = Date.now();
    for (const p of this.partitions.values()) {
      if (!p.isLeader) continue;
      try {
        await p.maybeShrinkIsr(now);
      } catch (err) {
        this.log.warn({ err, topic: p.topic, partition: p.partition }, 'ISR shrink failed');
      }
    }
  }

  /** Leader ISR change: conditional on the state znode's zkVersion; recorded for propagation. */
  private readonly writeIsr = async (p: Partition, isr: number[]): Promise<number | null> => {
    const v = await this.o.kzk.conditionalUpdatePartitionState(
      { topic: p.topic, partition: p.partition },
      { leader: p.leaderId, leaderEpoch: p.leaderEpoch, isr, controllerEpoch: p.controllerEpoch },
      p.partitionEpoch,
    );
    if (v !== null) {
      this.isrChangeSet.set(key(p.topic, p.partition), { topic: p.topic, partition: p.partition });
      this.lastIsrChangeMs = Date.now();
    }
    return v;
  };

  private async maybePropagateIsrChanges(): Promise<void> {
    const now = Date.now();
    if (this.isrChangeSet.size === 0) return;
    if (this.lastIsrChangeMs + ISR_CHANGE_QUIET_MS > now && this.lastIsrPropagationMs + ISR_CHANGE_MAX_DELAY_MS > now) return;
    const parts = [...this.isrChangeSet.values()];
    this.isrChangeSet.clear();
    try {
      await this.o.kzk.zk.create(IsrChangeNotificationSequenceZNode.createPath, IsrChangeNotificationSequenceZNode.encode(parts), {
        mode: CreateMode.PersistentSequential,
        mkdirp: true,
      });
      this.lastIsrPropagationMs = now;
    } catch (err) {
      for (const tp of parts) this.isrChangeSet.set(key(tp.topic, tp.partition), tp);
      this.log.warn({ err }, 'could not write the ISR change notification; will retry');
    }
  }

  /** Called after each LeaderAndIsr partition state applied here and each StopReplica'd partition. */
  onLeadershipChange(l: (c: LeadershipChange) => void): () => void {
    this.leadershipListeners.add(l);
    return () => this.leadershipListeners.delete(l);
  }

  private notifyLeadership(c: LeadershipChange): void {
    for (const l of this.leadershipListeners) {
      try {
        l(c);
      } catch (err) {
        this.log.error({ err, topic: c.topic, partition: c.partition }, 'leadership change listener failed');
      }
    }
  }

  getPartition(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(key(topic, partition));
  }

  async settingsFor(topic: string): Promise<TopicSettings> {
    let s = this.topicSettingsCache.get(topic);
    if (!s) {
      s = await this.o.topicSettings(topic);
      this.topicSettingsCache.set(topic, s);
    }
    return s;
  }

  /** Settings already resolved for a topic (no ZooKeeper read), for scrape-time gauges. */
  cachedSettings(topic: string): TopicSettings | undefined {
    return this.topicSettingsCache.get(topic);
  }

  /** Topic config changed (dynamic configs): drop the cached settings. */
  invalidateTopicSettings(topic: string): void {
    this.topicSettingsCache.delete(topic);
  }

  async becomeLeaderOrFollower(req: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    const scl = this.o.stateChangeLogger;
    if (req.controllerEpoch < this.controllerEpoch) {
      scl.warn({ controllerId: req.controllerId, controllerEpoch: req.controllerEpoch, latest: this.controllerEpoch }, 'ignoring LeaderAndIsr from a stale controller');
      throw new KafkaError('STALE_CONTROLLER_EPOCH', `controller epoch ${req.controllerEpoch} is older than ${this.controllerEpoch}`);
    }
    this.controllerEpoch = req.controllerEpoch;
    const errors: PartitionError[] = [];
    for (const s of req.partitionStates) {
      const tp = { topic: s.topic, partition: s.partition };
      const err = (code: number) => errors.push({ topic: s.topic, topicId: s.topicId, partition: s.partition, errorCode: code });
      if (!s.replicas.includes(this.o.brokerId)) {
        scl.warn({ topic: s.topic, partition: s.partition, replicas: s.replicas }, 'LeaderAndIsr for a partition not assigned to this broker');
        err(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        continue;
      }
      let p = this.partitions.get(key(s.topic, s.partition));
      if (p && s.leaderEpoch < p.leaderEpoch) {
        scl.warn({ topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, current: p.leaderEpoch }, 'ignoring LeaderAndIsr with an older leader epoch');
        err(ErrorCode.STALE_CONTROLLER_EPOCH);
        continue;
      }
      if (!p) {
        p = new Partition(s.topic, s.partition, this.o.brokerId, scl, {
          replicaLagTimeMaxMs: this.o.replicaLagTimeMaxMs,
          writeIsr: this.writeIsr,
          ...(this.o.onIsrChange ? { onIsrChange: this.o.onIsrChange } : {}),
          ...(this.o.isBrokerAlive ? { isBrokerAlive: this.o.isBrokerAlive } : {}),
        });
        this.partitions.set(key(s.topic, s.partition), p);
        const k = key(s.topic, s.partition);
        // as in Kafka's ReplicaManager: HW growth completes produces and consumer fetches, appends follower fetches
        p.onHighWatermark(() => {
          this.producePurgatory.checkAndComplete(k);
          this.fetchPurgatory.checkAndComplete(k);
        });
        p.onAppend(() => this.fetchPurgatory.checkAndComplete(k));
      }
      try {
        const settings = await this.settingsFor(s.topic);
        const log = await this.o.logs.getOrCreateLog(tp, settings.logConfig, s.topicId);
        const hw = this.checkpointedHw.get(key(s.topic, s.partition));
        if (hw !== undefined) {
          this.checkpointedHw.delete(key(s.topic, s.partition));
          if (hw > log.highWatermark) log.updateHighWatermark(hw);
        }
        if (s.leader === this.o.brokerId) {
          this.fetchers.removePartition(key(s.topic, s.partition));
          await p.makeLeader(s, log);
        } else {
          await p.makeFollower(s, log);
          const leader = req.liveLeaders.find((b) => b.brokerId === s.leader);
          const e = leader?.endpoints.find((x) => x.listener === this.o.interBrokerListenerName);
          if (this.fetchingStopped) {
            // shutting down: following again would put this broker back into the new leader's ISR
          } else if (e) this.fetchers.addPartition(p, { brokerId: s.leader, host: e.host || '127.0.0.1', port: e.port }, s.leaderEpoch);
          else {
            this.fetchers.removePartition(key(s.topic, s.partition));
            if (s.leader >= 0) scl.warn({ topic: s.topic, partition: s.partition, leader: s.leader }, 'no endpoint for the leader; not fetching');
          }
        }
        scl.info({ topic: s.topic, partition: s.partition, leader: s.leader, leaderEpoch: s.leaderEpoch, isr: s.isr, controllerEpoch: req.controllerEpoch }, 'applied LeaderAndIsr');
        // leadership moved: waiting produces and fetches on this partition answer now
        this.producePurgatory.checkAndComplete(key(s.topic, s.partition));
        this.deleteRecordsPurgatory.checkAndComplete(key(s.topic, s.partition));
        this.fetchPurgatory.checkAndComplete(key(s.topic, s.partition));
        this.notifyLeadership({ topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, isLeader: s.leader === this.o.brokerId });
        err(ErrorCode.NONE);
      } catch (e) {
        this.log.error({ err: e, topic: s.topic, partition: s.partition }, 'failed to apply LeaderAndIsr');
        err(e instanceof KafkaError ? errorCodeOf(e) : ErrorCode.KAFKA_STORAGE_ERROR);
      }
    }
    return { errorCode: 0, partitionErrors: errors };
  }

  async stopReplicas(req: StopReplicaRequest): Promise<StopReplicaResponse> {
    if (req.controllerEpoch < this.controllerEpoch) {
      throw new KafkaError('STALE_CONTROLLER_EPOCH', `controller epoch ${req.controllerEpoch} is older than ${this.controllerEpoch}`);
    }
    this.controllerEpoch = req.controllerEpoch;
    const partitionErrors: PartitionError[] = [];
    for (const s of req.partitions) {
      const p = this.partitions.get(key(s.topic, s.partition));
      if (p && s.leaderEpoch >= 0 && s.leaderEpoch < p.leaderEpoch) {
        partitionErrors.push({ topic: s.topic, topicId: '', partition: s.partition, errorCode: ErrorCode.FENCED_LEADER_EPOCH });
        continue;
      }
      this.partitions.delete(key(s.topic, s.partition));
      this.fetchers.removePartition(key(s.topic, s.partition));
      p?.stopLeading();
      if (p) this.notifyLeadership({ topic: s.topic, partition: s.partition, leaderEpoch: s.leaderEpoch, isLeader: false });
      this.producePurgatory.checkAndComplete(key(s.topic, s.partition));
      this.deleteRecordsPurgatory.checkAndComplete(key(s.topic, s.partition));
      this.fetchPurgatory.checkAndComplete(key(s.topic, s.partition));
      if (s.deletePartition) {
        try {
          await this.o.logs.deleteLog(s);
          this.topicSettingsCache.delete(s.topic);
        } catch (e) {
          this.log.error({ err: e, topic: s.topic, partition: s.partition }, 'failed to delete log');
          partitionErrors.push({ topic: s.topic, topicId: '', partition: s.partition, errorCode: ErrorCode.KAFKA_STORAGE_ERROR });
          continue;
        }
      }
      this.o.stateChangeLogger.info({ topic: s.topic, partition: s.partition, deletePartition: s.deletePartition }, 'stopped replica');
      partitionErrors.push({ topic: s.topic, topicId: '', partition: s.partition, errorCode: ErrorCode.NONE });
    }
    return { errorCode: 0, partitionErrors };
  }

  /** Appends to leader partitions; one result per partition, errors as Kafka codes. */
  async appendRecords(
    requiredAcks: number,
    entries: Array<{ topic: string; partition: number; records: Buffer | null }>,
  ): Promise<AppendResult[]> {
    const out: AppendResult[] = [];
    for (const e of entries) {
      const p = this.partitions.get(key(e.topic, e.partition));
      const fail = (code: number, message: string | null = null) => out.push({ topic: e.topic, partition: e.partition, errorCode: code, errorMessage: message, info: undefined });
      if (!p) {
        fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        continue;
      }
      if (!e.records || e.records.length === 0) {
        fail(ErrorCode.CORRUPT_MESSAGE, 'empty record set');
        continue;
      }
      try {
        // cached after the topic's first append: no await (a turn of the microtask queue) per request
        const settings = this.cachedSettings(e.topic) ?? (await this.settingsFor(e.topic));
        const info = await p.appendRecordsToLeader(e.records, requiredAcks, settings.minInsyncReplicas);
        out.push({ topic: e.topic, partition: e.partition, errorCode: 0, errorMessage: null, info });
      } catch (err) {
        const code = errorCodeOf(err);
        if (code === ErrorCode.UNKNOWN_SERVER_ERROR) this.log.error({ err, topic: e.topic, partition: e.partition }, 'append failed');
        fail(code, (err as Error).message);
      }
    }
    return out;
  }

  /** Reads for a consumer from each partition (leader only, up to the high watermark). */
  readFromLocalLogs(entries: FetchEntry[], maxBytes: number): Promise<ReadResult[]> {
    return this.readPartitions(entries, maxBytes, (p, e, limit, minOne) => p.readForConsumer(e.fetchOffset, limit, minOne, e.currentLeaderEpoch));
  }

  /**
   * Reads for a follower (replica fetch): leader only, up to the LEO; the fetch offset is the
   * follower's LEO, which updates its catch-up state, the ISR and the high watermark.
   */
  readForFollower(replicaId: number, entries: FetchEntry[], maxBytes: number): Promise<ReadResult[]> {
    const now = Date.now();
    return this.readPartitions(entries, maxBytes, async (p, e, limit, minOne) => {
      const leaderEnd = p.log!.logEndOffset;
      // the follower's position counts as soon as its request is valid: the high watermark (and the
      // acks=all answers waiting on it) need not wait for this read from disk
      if (!p.isLeader) throw new KafkaError('NOT_LEADER_OR_FOLLOWER', `Broker ${this.o.brokerId} is not the leader of ${p.topic}-${p.partition}`);
      p.checkLeaderEpoch(e.currentLeaderEpoch);
      await p.updateFollowerFetchState(replicaId, e.fetchOffset, leaderEnd, now, e.logStartOffset ?? -1n);
      this.deleteRecordsPurgatory.checkAndComplete(key(p.topic, p.partition));
      // Kafka's shouldLeaderThrottle: an out-of-sync follower of a throttled partition gets nothing while over quota
      if (this.shouldLeaderThrottle(p, replicaId)) return p.readForFollower(e.fetchOffset, 0, false, e.currentLeaderEpoch);
      const data = await p.readForFollower(e.fetchOffset, limit, minOne, e.currentLeaderEpoch);
      if (this.quotas.leader.isThrottled(p.topic, p.partition)) this.quotas.leader.record(data.records.sizeInBytes);
      return data;
    });
  }

  /** A follower outside the ISR fetching a leader-throttled partition while the leader quota is used up. */
  shouldLeaderThrottle(p: Partition, replicaId: number): boolean {
    const q = this.quotas.leader;
    return q.isThrottled(p.topic, p.partition) && !p.isr.includes(replicaId) && q.isQuotaExceeded();
  }

  /**
   * The read loop shared by consumers and followers: a response-wide byte budget, and KIP-74 — the
   * first partition with data may return one whole batch even past the limits.
   */
  private async readPartitions(
    entries: FetchEntry[],
    maxBytes: number,
    read: (p: Partition, e: FetchEntry, limit: number, minOneMessage: boolean) => Promise<FetchDataInfo>,
  ): Promise<ReadResult[]> {
    let budget = maxBytes;
    let first = true;
    const out: ReadResult[] = [];
    for (const e of entries) {
      const p = this.partitions.get(key(e.topic, e.partition));
      if (!p || !p.log) {
        out.push({ topic: e.topic, partition: e.partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, highWatermark: -1n, logStartOffset: -1n, lastStableOffset: -1n, data: undefined });
        continue;
      }
      const log = p.log;
      try {
        const data = await read(p, e, Math.max(0, Math.min(e.maxBytes, budget)), first);
        const size = data.records.sizeInBytes;
        if (size > 0) {
          first = false;
          budget -= size;
        }
        out.push({ topic: e.topic, partition: e.partition, errorCode: 0, highWatermark: log.highWatermark, logStartOffset: log.logStartOffset, lastStableOffset: log.highWatermark, data });
      } catch (err) {
        const code = errorCodeOf(err);
        if (code === ErrorCode.UNKNOWN_SERVER_ERROR) this.log.error({ err, topic: e.topic, partition: e.partition }, 'read failed');
        out.push({ topic: e.topic, partition: e.partition, errorCode: code, highWatermark: log.highWatermark, logStartOffset: log.logStartOffset, lastStableOffset: log.highWatermark, data: undefined });
      }
    }
    return out;
  }
}
