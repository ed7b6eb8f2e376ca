import type { Logger } from 'pino';
import {
  ErrorCode,
  errorCodeOf,
  TopicPartitionMap,
  topicPartitionKey,
  validateRecords,
  type LeaderAndIsrRequest,
  type LeaderAndIsrResponse,
  type ProduceRequestTopic,
  type ProduceResponsePartition,
  type ProduceResponseTopic,
  type RecordsValidationOptions,
  type StopReplicaRequest,
  type StopReplicaResponse,
} from '@samsa/protocol';
import { INTERNAL_TOPICS } from '../admin/topic-admin.js';
import type { KafkaZk } from '@samsa/zk-paths';
import { prepareAppends, type Log } from '@samsa/storage';
import { ReplicaFetcherManager } from './fetcher-manager.js';
import { ReplicationQuotaManager, type QuotaWindow } from './replication-quota.js';
import type { FetcherOptions } from './replica-fetcher.js';
import { Partition, type ConsumerRead } from './partition.js';
import { AppendOrigin, answerAll, partitionResponse, validationOptions } from './produce-response.js';
import { readHighWatermarks, writeHighWatermarks } from './high-watermark-checkpoint.js';
import { IsrChangePropagation, ISR_PROPAGATION_INTERVAL_MS } from './isr-change-propagation.js';
import { DelayedOperationPurgatory, SystemTimer } from '@samsa/server-common';
import type { LatencyTrace } from '../trace/latency-trace.js';
import type { TopicSettings } from '../config/topic-settings.js';
import { DelayedProduce, type ProducePartitionStatus } from './delayed-produce.js';
import type { DelayedFetch } from './delayed-fetch.js';
import type { DelayedDeleteRecords } from './delayed-delete-records.js';
import { applyLeaderAndIsr, applyStopReplica, type LeadershipChange, type LogProvider, type ReplicaStateHost } from './leader-and-isr.js';

export type { LeadershipChange, LogProvider };

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
  /** Whether the metadata cache knows a topic (a partition not here is then NOT_LEADER_OR_FOLLOWER, not UNKNOWN). */
  hasTopic?: (topic: string) => boolean;
  /** Told of each client append (the metrics registry counts bytes and records in per topic). */
  onProduced?: (topic: string, bytes: number, records: number) => void;
  /**
   * TEST ONLY — breaks the acks=all guarantee on purpose: acks=all appends are answered as soon as
   * they are in the leader's log, before the high watermark covers them (as acks=1 would). It exists
   * so the chaos suite can prove that `samsa verify` catches lost acknowledged writes
   * (SAMSA_TEST_UNSAFE_ACK_BEFORE_HW=true; test-e2e/chaos/broken-broker.chaos.test.ts). Chosen once,
   * at construction: the produce path carries no check for it.
   */
  unsafeAckBeforeHighWatermark?: boolean;
  /** Stage timings of the produce path (SAMSA_TRACE_LATENCY): wired at construction when given. */
  latencyTrace?: LatencyTrace;
}

/** What appendToLocalLog hands to the acks decision. */
interface LocalProduceResult {
  responses: ProduceResponseTopic[];
  /** acks=-1 appends, with their answers (same positions), for a DelayedProduce. */
  waiting: ProducePartitionStatus[];
  waitingResponses: ProduceResponsePartition[];
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
  data: ConsumerRead | undefined;
}

/**
 * Kafka's ReplicaManager: applies the controller's LeaderAndIsr and StopReplica to this broker's
 * partitions, appends produced records on leaders and serves reads. Controller requests carrying
 * an older controller epoch than one already seen are rejected (STALE_CONTROLLER_EPOCH).
 */
export class ReplicaManager {
  readonly partitions = new TopicPartitionMap<Partition>();
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
  private readonly isrChanges: IsrChangePropagation;
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
    this.isrChanges = new IsrChangePropagation(o.kzk, this.log);
    if (o.unsafeAckBeforeHighWatermark) this.delayedProduceRequired = () => false;
    if (o.latencyTrace) this.traceProducePath(o.latencyTrace);
    this.stateHost = this.makeStateHost();
  }

  /** Wraps the produce path's stages with timings: the local append, then the wait for the high watermark. */
  private traceProducePath(trace: LatencyTrace): void {
    const append = this.appendToLocalLog;
    this.appendToLocalLog = async (...args) => {
      const t = trace.now();
      try {
        return await append(...args);
      } finally {
        trace.since('produce.append', t);
      }
    };
    const completeOrDelay = this.completeOrDelay;
    this.completeOrDelay = (local, timeoutMs, requiredAcks, responseCallback, onDelayed) => {
      const t = trace.now();
      completeOrDelay.call(
        this,
        local,
        timeoutMs,
        requiredAcks,
        (r) => {
          trace.since('produce.awaitHw', t);
          responseCallback(r);
        },
        onDelayed,
      );
    };
  }

  /** High watermarks read from replication-offset-checkpoint at startup, applied when a partition gets its log. */
  private checkpointedHw = new Map<string, bigint>();

  /** Reads every log dir's replication-offset-checkpoint (Kafka restores HWs from it). */
  async loadHighWatermarks(): Promise<void> {
    this.checkpointedHw = await readHighWatermarks(this.o.logDirs, this.log);
  }

  /** Writes each log dir's high watermarks (atomically, Kafka's checkpoint format). */
  checkpointHighWatermarks(): Promise<void> {
    return writeHighWatermarks(this.o.logDirs, this.partitions.values());
  }

  /** Starts the isr-expiration (replica.lag.time.max.ms / 2), isr-change-propagation and HW checkpoint tasks. */
  startup(): void {
    const hwTask = setInterval(
      () => {
        this.checkpointHighWatermarks().catch((err: unknown) => this.log.warn({ err }, 'high watermark checkpoint failed'));
      },
      Math.max(100, this.o.highWatermarkCheckpointIntervalMs),
    );
    hwTask.unref();
    this.timers.push(hwTask);
    const expire = setInterval(() => void this.shrinkIsrs(), Math.max(50, Math.floor(this.o.replicaLagTimeMaxMs / 2)));
    const propagate = setInterval(() => void this.isrChanges.maybePropagate(), ISR_PROPAGATION_INTERVAL_MS);
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
      p.zkVersion,
    );
    if (v !== null) this.isrChanges.record(p.topic, p.partition);
    return v;
  };

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
    return this.partitions.get(topic, partition);
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

  /**
   * Kafka's replicaStateChangeLock: LeaderAndIsr and StopReplica requests are applied one at a time
   * (a controller that timed out waiting resends the same request on a new connection; it waits
   * here, then finds its partitions applied).
   */
  private replicaStateChange: Promise<unknown> = Promise.resolve();

  private withReplicaStateChangeLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.replicaStateChange.then(fn);
    this.replicaStateChange = run.catch(() => undefined);
    return run;
  }

  becomeLeaderOrFollower(req: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    return this.withReplicaStateChangeLock(() => applyLeaderAndIsr(this.stateHost, req));
  }

  stopReplicas(req: StopReplicaRequest): Promise<StopReplicaResponse> {
    return this.withReplicaStateChangeLock(() => applyStopReplica(this.stateHost, req));
  }

  /** What LeaderAndIsr and StopReplica change (`leader-and-isr.ts`); built by the constructor. */
  private readonly stateHost: ReplicaStateHost;

  private makeStateHost(): ReplicaStateHost {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the controller epoch accessors below
    const rm = this;
    const o = this.o;
    return {
      brokerId: o.brokerId,
      interBrokerListenerName: o.interBrokerListenerName,
      logs: o.logs,
      log: this.log,
      stateChangeLogger: o.stateChangeLogger,
      partitions: this.partitions,
      fetchers: this.fetchers,
      get controllerEpoch() {
        return rm.controllerEpoch;
      },
      set controllerEpoch(e: number) {
        rm.controllerEpoch = e;
      },
      fetchingStopped: () => this.fetchingStopped,
      settingsFor: (topic) => this.settingsFor(topic),
      forgetTopicSettings: (topic) => this.topicSettingsCache.delete(topic),
      takeCheckpointedHw: (key) => {
        const hw = this.checkpointedHw.get(key);
        if (hw !== undefined) this.checkpointedHw.delete(key);
        return hw;
      },
      newPartition: (topic, partition) => this.newPartition(topic, partition),
      completeDelayed: (key) => {
        this.producePurgatory.checkAndComplete(key);
        this.deleteRecordsPurgatory.checkAndComplete(key);
        this.fetchPurgatory.checkAndComplete(key);
      },
      notifyLeadership: (c) => this.notifyLeadership(c),
    };
  }

  private newPartition(topic: string, partition: number): Partition {
    const p = new Partition(topic, partition, this.o.brokerId, this.o.stateChangeLogger, {
      replicaLagTimeMaxMs: this.o.replicaLagTimeMaxMs,
      writeIsr: this.writeIsr,
      ...(this.o.onIsrChange ? { onIsrChange: this.o.onIsrChange } : {}),
      ...(this.o.isBrokerAlive ? { isBrokerAlive: this.o.isBrokerAlive } : {}),
    });
    this.partitions.set(topic, partition, p);
    const k = topicPartitionKey(topic, partition);
    // as in Kafka's ReplicaManager: HW growth completes produces and consumer fetches, appends follower fetches
    p.onHighWatermark(() => {
      this.producePurgatory.checkAndComplete(k);
      this.fetchPurgatory.checkAndComplete(k);
    });
    p.onAppend(() => this.fetchPurgatory.checkAndComplete(k));
    return p;
  }

  /**
   * Kafka's ReplicaManager.appendRecords: appends each partition's records on this broker's leader
   * replica and answers through `responseCallback` — at once for acks=0/1 (and for acks=-1 when the
   * high watermark already covers every append), else from a DelayedProduce in the produce
   * purgatory once the high watermark passes the appended batches, the leadership moves, or
   * `timeoutMs` ends (REQUEST_TIMED_OUT). Client appends are validated first (framing, CRC, magic,
   * sizes, timestamps) and may not touch internal topics. A topic's settings (validation limits,
   * min.insync.replicas) are looked up once per request. `onDelayed` is told when the answer waits
   * in the purgatory. The callback is always called, exactly once; answers keep the request's order.
   */
  appendRecords(
    timeoutMs: number,
    requiredAcks: number,
    origin: AppendOrigin,
    produceVersion: number,
    entries: readonly ProduceRequestTopic[],
    responseCallback: (responses: ProduceResponseTopic[]) => void,
    onDelayed?: () => void,
  ): void {
    if (requiredAcks !== 0 && requiredAcks !== 1 && requiredAcks !== -1) {
      responseCallback(answerAll(entries, ErrorCode.INVALID_REQUIRED_ACKS));
      return;
    }
    this.appendToLocalLog(origin, produceVersion, requiredAcks, entries).then(
      (local) => this.completeOrDelay(local, timeoutMs, requiredAcks, responseCallback, onDelayed),
      (err: unknown) => {
        this.log.error({ err }, 'produce append failed');
        responseCallback(answerAll(entries, ErrorCode.UNKNOWN_SERVER_ERROR));
      },
    );
  }

  /** Kafka's delayedProduceRequestRequired: acks=-1 with at least one partition appended. */
  private delayedProduceRequired = (requiredAcks: number, local: LocalProduceResult): boolean => requiredAcks === -1 && local.waiting.length > 0;

  private completeOrDelay(
    local: LocalProduceResult,
    timeoutMs: number,
    requiredAcks: number,
    responseCallback: (responses: ProduceResponseTopic[]) => void,
    onDelayed: (() => void) | undefined,
  ): void {
    if (!this.delayedProduceRequired(requiredAcks, local)) {
      responseCallback(local.responses);
      return;
    }
    const { waiting, waitingResponses } = local;
    const op = new DelayedProduce(timeoutMs, waiting, () => {
      for (let i = 0; i < waiting.length; i++) {
        const code = waiting[i]!.errorCode;
        if (code === undefined || code === ErrorCode.NONE) continue;
        const r = waitingResponses[i]!;
        r.errorCode = code;
        // the records are in the leader's log, only too few replicas have them: the offset stands
        if (code !== ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND) r.baseOffset = -1n;
      }
      responseCallback(local.responses);
    });
    const keys = waiting.map((w) => topicPartitionKey(w.partition.topic, w.partition.partition));
    if (!this.producePurgatory.tryCompleteElseWatch(op, keys)) onDelayed?.();
  }

  /** Runs what new logs need before their first records (`prepareAppends`) for all partitions of a produce request led here. */
  private async prepareNewLogs(entries: readonly ProduceRequestTopic[]): Promise<void> {
    const unprepared: Log[] = [];
    for (const t of entries) {
      for (const d of t.partitionData) {
        const p = this.partitions.get(t.name, d.index);
        if (p?.isLeader && p.log && !p.log.readyToAppend) unprepared.push(p.log);
      }
    }
    await prepareAppends(unprepared);
  }

  /** Kafka's appendToLocalLog: every partition answered by position; acks=-1 appends also listed to wait on. */
  private appendToLocalLog = async (
    origin: AppendOrigin,
    produceVersion: number,
    requiredAcks: number,
    entries: readonly ProduceRequestTopic[],
  ): Promise<LocalProduceResult> => {
    const responses: ProduceResponseTopic[] = new Array(entries.length);
    const waiting: ProducePartitionStatus[] = [];
    const waitingResponses: ProduceResponsePartition[] = [];
    let prepared = false;
    for (let ti = 0; ti < entries.length; ti++) {
      const t = entries[ti]!;
      const answers: ProduceResponsePartition[] = new Array(t.partitionData.length);
      responses[ti] = { name: t.name, partitionResponses: answers };
      let settings: TopicSettings | undefined;
      let validation: RecordsValidationOptions | undefined;
      for (let pi = 0; pi < t.partitionData.length; pi++) {
        const { index, records } = t.partitionData[pi]!;
        if (origin === AppendOrigin.Client && INTERNAL_TOPICS.has(t.name)) {
          answers[pi] = partitionResponse(index, ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${t.name}`);
          continue;
        }
        const p = this.partitions.get(t.name, index);
        if (!p || !p.isLeader) {
          // Kafka's getPartitionOrException: a partition the cluster has but not here is a leadership question
          answers[pi] = partitionResponse(
            index,
            !p && !this.o.hasTopic?.(t.name) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NOT_LEADER_OR_FOLLOWER,
            null,
          );
          continue;
        }
        if (!records || records.length === 0) {
          answers[pi] = partitionResponse(index, ErrorCode.CORRUPT_MESSAGE, 'empty record set');
          continue;
        }
        try {
          // one lookup per topic and request: validation limits and min.insync.replicas both come from it
          settings ??= this.cachedSettings(t.name) ?? (await this.settingsFor(t.name));
          if (origin === AppendOrigin.Client) {
            const v = validateRecords(records, (validation ??= validationOptions(produceVersion, settings)));
            if (!v.ok) {
              const r = (answers[pi] = partitionResponse(index, v.errorCode, v.message));
              r.recordErrors = v.recordErrors.map((e) => ({ batchIndex: e.batchIndex, batchIndexErrorMessage: e.message }));
              continue;
            }
          }
          // the first new log met: the partition.metadata of every new log in the request, at once
          if (!prepared && p.log && !p.log.readyToAppend) {
            prepared = true;
            await this.prepareNewLogs(entries);
          }
          const info = await p.appendRecordsToLeader(records, requiredAcks, settings.minInsyncReplicas, origin);
          if (origin === AppendOrigin.Client) this.o.onProduced?.(t.name, info.validBytes, info.recordCount);
          const r = partitionResponse(index, ErrorCode.NONE, null);
          r.baseOffset = info.firstOffset;
          r.logAppendTimeMs = info.logAppendTime;
          r.logStartOffset = info.logStartOffset;
          answers[pi] = r;
          if (requiredAcks === -1) {
            waiting.push({ partition: p, requiredOffset: info.lastOffset + 1n, minInsyncReplicas: settings.minInsyncReplicas, errorCode: undefined });
            waitingResponses.push(r);
          }
        } catch (err) {
          const code = errorCodeOf(err);
          if (code === ErrorCode.UNKNOWN_SERVER_ERROR) this.log.error({ err, topic: t.name, partition: index }, 'append failed');
          answers[pi] = partitionResponse(index, code, (err as Error).message);
        }
      }
    }
    return { responses, waiting, waitingResponses };
  };

  /** Reads for a consumer from each partition (leader only, up to the high watermark, or the LSO for isolation_level 1). */
  readFromLocalLogs(entries: FetchEntry[], maxBytes: number, isolationLevel = 0): Promise<ReadResult[]> {
    return this.readPartitions(entries, maxBytes, (p, e, limit, minOne) =>
      p.readForConsumer(e.fetchOffset, limit, minOne, e.currentLeaderEpoch, isolationLevel),
    );
  }

  /**
   * Reads for a follower (replica fetch): leader only, up to the LEO; the fetch offset is the
   * follower's LEO, which updates its catch-up state, the ISR and the high watermark.
   */
  readForFollower(replicaId: number, entries: FetchEntry[], maxBytes: number): Promise<ReadResult[]> {
    const now = Date.now();
    // synchronous unless there is data to read: a caught-up follower's partitions cost no turn of
    // the event loop each
    return this.readPartitions(entries, maxBytes, (p, e, limit, minOne) => {
      const leaderEnd = p.log!.logEndOffset;
      // the follower's position counts as soon as its request is valid (readPartitions refused it
      // otherwise): the high watermark (and the acks=all answers waiting on it) need not wait for this read from disk
      const expanding = p.updateFollowerFetchState(replicaId, e.fetchOffset, leaderEnd, now, e.logStartOffset ?? -1n);
      // the answer does not wait for an ISR expansion's ZooKeeper write (Kafka's AlterIsr is
      // asynchronous too): a follower back after a partition expands thousands of ISRs with one
      // fetch, and waiting for all those writes outlasted its request timeout, so it fetched again
      // from scratch and fell out of the ISRs meanwhile, over and over
      expanding?.catch((err: unknown) =>
        this.log.warn({ err, topic: p.topic, partition: p.partition, replicaId }, 'ISR expansion failed; the next fetch tries again'),
      );
      const read = (): ConsumerRead | Promise<ConsumerRead> => {
        this.deleteRecordsPurgatory.checkAndComplete(topicPartitionKey(p.topic, p.partition));
        // Kafka's shouldLeaderThrottle: an out-of-sync follower of a throttled partition gets nothing while over quota
        if (this.shouldLeaderThrottle(p, replicaId)) return p.readForFollower(e.fetchOffset, 0, false, e.currentLeaderEpoch);
        const data = p.readForFollower(e.fetchOffset, limit, minOne, e.currentLeaderEpoch);
        if (!this.quotas.leader.isThrottled(p.topic, p.partition)) return data;
        return Promise.resolve(data).then((d) => {
          this.quotas.leader.record(d.records.sizeInBytes);
          return d;
        });
      };
      return read();
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
    read: (p: Partition, e: FetchEntry, limit: number, minOneMessage: boolean) => ConsumerRead | Promise<ConsumerRead>,
  ): Promise<ReadResult[]> {
    let budget = maxBytes;
    let first = true;
    const out: ReadResult[] = [];
    for (const e of entries) {
      const p = this.partitions.get(e.topic, e.partition);
      if (!p || !p.log) {
        // as Produce (Kafka's getPartitionOrException): a partition the cluster has, not (yet) here, is a leadership question
        out.push(readResult(e, !p && !this.o.hasTopic?.(e.topic) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.NOT_LEADER_OR_FOLLOWER));
        continue;
      }
      const log = p.log;
      // not the leader (any more), or another leader epoch: answered without an exception per partition
      const refusal = p.readRefusal(e.currentLeaderEpoch);
      if (refusal !== ErrorCode.NONE) {
        out.push(readResult(e, refusal, log));
        continue;
      }
      try {
        const pending = read(p, e, Math.max(0, Math.min(e.maxBytes, budget)), first);
        const data = pending instanceof Promise ? await pending : pending;
        const size = data.records.sizeInBytes;
        if (size > 0) {
          first = false;
          budget -= size;
        }
        out.push(readResult(e, ErrorCode.NONE, log, data));
      } catch (err) {
        const code = errorCodeOf(err);
        if (code === ErrorCode.UNKNOWN_SERVER_ERROR) this.log.error({ err, topic: e.topic, partition: e.partition }, 'read failed');
        out.push(readResult(e, code, log));
      }
    }
    return out;
  }
}

/** One partition's read answer: the log's offsets (-1 without a log here) and the data read, if any. */
function readResult(e: FetchEntry, errorCode: number, log?: Log, data?: ConsumerRead): ReadResult {
  return {
    topic: e.topic,
    partition: e.partition,
    errorCode,
    highWatermark: log ? log.highWatermark : -1n,
    logStartOffset: log ? log.logStartOffset : -1n,
    lastStableOffset: log ? log.lastStableOffset : -1n,
    data,
  };
}
