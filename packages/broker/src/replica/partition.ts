import type { Logger } from 'pino';
import { ErrorCode, KafkaError, topicPartitionKey, type PartitionState } from '@samsa/protocol';
import type { AbortedTxn, FetchDataInfo, Log, LogAppendInfo } from '@samsa/storage';
import { AppendOrigin } from './produce-response.js';

const COORDINATOR_APPEND = { origin: 'coordinator' } as const;

/** A consumer read; read_committed reads carry the aborted transactions of the range read. */
export type ConsumerRead = FetchDataInfo & { abortedTransactions?: AbortedTxn[] };

/** A follower's progress as the leader sees it (from its fetches). */
export interface RemoteReplica {
  logEndOffset: bigint;
  lastCaughtUpTimeMs: number;
  /** The leader's LEO when this follower last fetched, and when that was (Kafka's Replica rule). */
  lastFetchLeaderLogEndOffset: bigint;
  lastFetchTimeMs: number;
  /** The follower's log start offset from its last fetch (-1 until it fetched). */
  logStartOffset: bigint;
}

/** Writes a leader's new ISR to the partition-state znode; the new zkVersion, or null if it moved. */
export type IsrWriter = (p: Partition, newIsr: number[]) => Promise<number | null>;

export interface PartitionOptions {
  /** replica.lag.time.max.ms */
  replicaLagTimeMaxMs: number;
  writeIsr: IsrWriter;
  /** Told of each ISR change this leader wrote (Kafka's IsrExpandsPerSec / IsrShrinksPerSec). */
  onIsrChange?: (why: 'expand' | 'shrink') => void;
  /** Whether a broker is alive (the metadata cache); without it every follower counts as alive. */
  isBrokerAlive?: (brokerId: number) => boolean;
}

/**
 * One partition on this broker (Kafka's Partition): its leadership state from the controller, its
 * log, and — when leading — the high watermark, moved forward to the smallest LEO in the ISR.
 */
export class Partition {
  leaderId = -1;
  leaderEpoch = -1;
  isr: number[] = [];
  replicas: number[] = [];
  zkVersion = -1;
  controllerEpoch = -1;
  log: Log | undefined;
  readonly remote = new Map<number, RemoteReplica>();
  private readonly hwListeners = new Set<() => void>();
  private readonly appendListeners = new Set<() => void>();

  private isrUpdateInFlight = false;
  private stateLock: Promise<unknown> = Promise.resolve();
  /** LEO at which this broker's leadership (current epoch) started: followers below it cannot join the ISR. */
  private leaderEpochStartOffset = 0n;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly localBrokerId: number,
    private readonly logger: Logger,
    private readonly opts: PartitionOptions,
  ) {}

  get isLeader(): boolean {
    return this.leaderId === this.localBrokerId;
  }

  get highWatermark(): bigint {
    return this.log?.highWatermark ?? 0n;
  }

  /** What read_committed consumers may read up to (Kafka's Log.lastStableOffset). */
  get lastStableOffset(): bigint {
    return this.log?.lastStableOffset ?? 0n;
  }

  /** Applies a LeaderAndIsr state where this broker leads. Returns true if leadership changed. */
  makeLeader(s: PartitionState, log: Log): Promise<boolean> {
    return this.exclusive(async () => {
      const wasLeader = this.isLeader && this.leaderEpoch === s.leaderEpoch;
      // the new epoch starts at our LEO (Kafka assigns it when leadership begins); leader appends
      // wait (exclusive), so no batch of an older epoch lands after this entry. Its checkpoint is
      // written in the background, and only with the first record of a log holding none: a
      // LeaderAndIsr making thousands of leaders waits for no file
      log.assignLeaderEpochStart(s.leaderEpoch);
      // then the whole leader state at once, with no await between taking leadership and knowing
      // the followers: an append meanwhile would see no followers and move the HW to our LEO,
      // acknowledging acks=all records that no follower has
      const now = Date.now();
      const remote = new Map<number, RemoteReplica>();
      for (const r of s.replicas) {
        if (r === this.localBrokerId) continue;
        // ISR members get a full lag window to show up before they can be shrunk out
        remote.set(r, {
          logEndOffset: -1n,
          logStartOffset: -1n,
          lastCaughtUpTimeMs: s.isr.includes(r) ? now : 0,
          lastFetchLeaderLogEndOffset: -1n,
          lastFetchTimeMs: 0,
        });
      }
      this.applyState(s);
      this.log = log;
      this.leaderEpochStartOffset = log.logEndOffset;
      this.remote.clear();
      for (const [id, r] of remote) this.remote.set(id, r);
      this.maybeIncrementHighWatermark();
      this.logger.debug(
        { topic: this.topic, partition: this.partition, leaderEpoch: s.leaderEpoch, isr: s.isr, highWatermark: String(log.highWatermark) },
        'became leader',
      );
      return !wasLeader;
    });
  }

  /** Applies a LeaderAndIsr state where another broker leads (after any leader append in progress). */
  makeFollower(s: PartitionState, log: Log): Promise<boolean> {
    return this.exclusive(async () => {
      const changed = this.leaderId !== s.leader || this.leaderEpoch !== s.leaderEpoch;
      this.applyState(s);
      this.log = log;
      this.remote.clear();
      this.logger.debug({ topic: this.topic, partition: this.partition, leader: s.leader, leaderEpoch: s.leaderEpoch }, 'became follower');
      return changed;
    });
  }

  /**
   * Kafka's leaderIsrUpdateLock, simplified to one exclusive lock: leadership changes and leader
   * appends run one at a time (appends are serialized by the log lock anyway).
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.stateLock.then(fn);
    this.stateLock = run.catch(() => undefined);
    return run;
  }

  private applyState(s: PartitionState): void {
    this.leaderId = s.leader;
    this.leaderEpoch = s.leaderEpoch;
    this.isr = [...s.isr];
    this.replicas = [...s.replicas];
    this.zkVersion = s.zkVersion;
    this.controllerEpoch = s.controllerEpoch;
  }

  /**
   * Leader append (Kafka's appendRecordsToLeader): NOT_LEADER_OR_FOLLOWER unless leading;
   * acks=all needs ISR ≥ min.insync.replicas (NOT_ENOUGH_REPLICAS) before anything is written.
   */
  appendRecordsToLeader(records: Buffer, requiredAcks: number, minInsyncReplicas: number, origin: AppendOrigin = AppendOrigin.Client): Promise<LogAppendInfo> {
    return this.exclusive(async () => {
      const log = this.log;
      if (!this.isLeader || !log) {
        throw new KafkaError('NOT_LEADER_OR_FOLLOWER', `Broker ${this.localBrokerId} is not the leader of ${topicPartitionKey(this)}`);
      }
      if (requiredAcks === -1 && this.isr.length < minInsyncReplicas) {
        throw new KafkaError(
          'NOT_ENOUGH_REPLICAS',
          `The size of the current ISR [${this.isr.join(',')}] is insufficient to satisfy the min.isr requirement of ${minInsyncReplicas} for partition ${topicPartitionKey(this)}`,
        );
      }
      // coordinators (transaction markers) skip the sequence checks; clients keep the default options
      const info = await (origin === AppendOrigin.Coordinator
        ? log.appendAsLeader(records, this.leaderEpoch, COORDINATOR_APPEND)
        : log.appendAsLeader(records, this.leaderEpoch));
      this.maybeIncrementHighWatermark();
      for (const l of this.appendListeners) l();
      return info;
    });
  }

  /**
   * HW = min LEO over the ISR and over followers caught up within replica.lag.time.max.ms (so a
   * follower about to join the ISR is not left behind), never moving back (Kafka's
   * Partition.maybeIncrementLeaderHW). Followers report their LEO by fetching.
   */
  maybeIncrementHighWatermark(now = Date.now()): boolean {
    const log = this.log;
    if (!log || !this.isLeader) return false;
    let hw = log.logEndOffset;
    for (const [id, r] of this.remote) {
      const counts = this.isr.includes(id) || now - r.lastCaughtUpTimeMs <= this.opts.replicaLagTimeMaxMs;
      if (counts && r.logEndOffset < hw) hw = r.logEndOffset;
    }
    if (hw < 0n) return false;
    if (hw > log.highWatermark) {
      log.updateHighWatermark(hw);
      for (const l of this.hwListeners) l();
      return true;
    }
    return false;
  }

  /**
   * A follower fetched at `fetchOffset` (its LEO) while our LEO was `leaderEndOffset`: Kafka's
   * Replica.updateLogReadResult rule for lastCaughtUpTimeMs, then ISR expansion and HW.
   */
  updateFollowerFetchState(
    replicaId: number,
    fetchOffset: bigint,
    leaderEndOffset: bigint,
    now: number,
    followerLogStartOffset = -1n,
  ): Promise<void> | undefined {
    const r = this.remote.get(replicaId);
    if (!r || !this.isLeader) return undefined;
    if (followerLogStartOffset >= 0n) r.logStartOffset = followerLogStartOffset;
    if (fetchOffset >= leaderEndOffset) r.lastCaughtUpTimeMs = Math.max(r.lastCaughtUpTimeMs, now);
    else if (fetchOffset >= r.lastFetchLeaderLogEndOffset) r.lastCaughtUpTimeMs = Math.max(r.lastCaughtUpTimeMs, r.lastFetchTimeMs);
    r.logEndOffset = fetchOffset;
    r.lastFetchLeaderLogEndOffset = leaderEndOffset;
    r.lastFetchTimeMs = now;
    const log = this.log;
    // a promise only when the ISR expands (a ZooKeeper write): a fetch of thousands of partitions
    // takes no turn of the event loop for each
    if (log && !this.isr.includes(replicaId) && fetchOffset >= log.highWatermark && fetchOffset >= this.leaderEpochStartOffset) {
      return this.updateIsr([...this.isr, replicaId], 'expand').then(() => {
        this.maybeIncrementHighWatermark(now);
      });
    }
    this.maybeIncrementHighWatermark(now);
    return undefined;
  }

  /**
   * Kafka's lowWatermarkIfLeader: the smallest log start offset over the leader and the followers on
   * live brokers (DeleteRecords waits for it to reach its offset). A dead follower does not hold it
   * back: it truncates to the leader's log start offset when it comes back. A live follower that
   * has not fetched yet (log start unknown, -1) is not counted either: its first fetch reports the
   * log start it has then. -1 when not leading.
   */
  get lowWatermark(): bigint {
    const log = this.log;
    if (!log || !this.isLeader) return -1n;
    let low = log.logStartOffset;
    const alive = this.opts.isBrokerAlive;
    for (const [id, r] of this.remote) {
      if (r.logStartOffset >= 0n && r.logStartOffset < low && (!alive || alive(id))) low = r.logStartOffset;
    }
    return low;
  }

  /** Drops followers that have not caught up within replica.lag.time.max.ms (the isr-expiration task). */
  async maybeShrinkIsr(now = Date.now()): Promise<void> {
    if (!this.isLeader) return;
    const lagging = this.isr.filter((id) => {
      if (id === this.localBrokerId) return false;
      const r = this.remote.get(id);
      return !r || now - r.lastCaughtUpTimeMs > this.opts.replicaLagTimeMaxMs;
    });
    if (lagging.length === 0) return;
    await this.updateIsr(
      this.isr.filter((id) => !lagging.includes(id)),
      'shrink',
    );
    this.maybeIncrementHighWatermark(now);
  }

  private async updateIsr(newIsr: number[], why: 'expand' | 'shrink'): Promise<void> {
    if (this.isrUpdateInFlight) return;
    this.isrUpdateInFlight = true;
    try {
      const epoch = this.leaderEpoch;
      const v = await this.opts.writeIsr(this, newIsr);
      // leadership may have moved while the write was in flight
      if (v === null || !this.isLeader || this.leaderEpoch !== epoch) {
        if (v === null)
          this.logger.info({ topic: this.topic, partition: this.partition, isr: newIsr }, 'ISR update lost a race on the state znode; retrying later');
        return;
      }
      this.logger.info(
        { topic: this.topic, partition: this.partition, leaderEpoch: epoch, from: this.isr, isr: newIsr, why },
        why === 'expand' ? 'expanding ISR' : 'shrinking ISR',
      );
      this.isr = newIsr;
      this.zkVersion = v;
      this.opts.onIsrChange?.(why);
    } finally {
      this.isrUpdateInFlight = false;
    }
  }

  /** StopReplica: this broker no longer hosts the partition. */
  stopLeading(): void {
    this.leaderId = -1;
    this.remote.clear();
  }

  /** Called after every leader append (wakes followers' long polls). */
  onAppend(l: () => void): () => void {
    this.appendListeners.add(l);
    return () => this.appendListeners.delete(l);
  }

  /** Called whenever the high watermark (what consumers may read) moves. */
  onHighWatermark(l: () => void): () => void {
    this.hwListeners.add(l);
    return () => this.hwListeners.delete(l);
  }

  /**
   * Consumer read: leader only, up to the high watermark (isolation_level 0, READ_UNCOMMITTED) or
   * the last stable offset with the aborted transactions read (1, READ_COMMITTED).
   */
  async readForConsumer(offset: bigint, maxBytes: number, minOneMessage: boolean, currentLeaderEpoch: number, isolationLevel = 0): Promise<ConsumerRead> {
    const log = this.log;
    if (!this.isLeader || !log) throw new KafkaError('NOT_LEADER_OR_FOLLOWER', `Broker ${this.localBrokerId} is not the leader of ${topicPartitionKey(this)}`);
    this.checkLeaderEpoch(currentLeaderEpoch);
    if (isolationLevel === 1) return log.readCommitted(offset, maxBytes, minOneMessage);
    return log.read(offset, maxBytes, log.highWatermark, minOneMessage);
  }

  /**
   * Follower read (replica fetch): leader only, up to the log end offset. A follower at our log end
   * is answered at once (no promise); errors are thrown, not returned as rejections.
   */
  readForFollower(offset: bigint, maxBytes: number, minOneMessage: boolean, currentLeaderEpoch: number): FetchDataInfo | Promise<FetchDataInfo> {
    const log = this.log;
    if (!this.isLeader || !log) throw new KafkaError('NOT_LEADER_OR_FOLLOWER', `Broker ${this.localBrokerId} is not the leader of ${topicPartitionKey(this)}`);
    this.checkLeaderEpoch(currentLeaderEpoch);
    return log.readAtLogEnd(offset) ?? log.read(offset, maxBytes, undefined, minOneMessage);
  }

  /** KIP-320: a client with a newer epoch than ours → UNKNOWN_LEADER_EPOCH; older → FENCED_LEADER_EPOCH. */
  checkLeaderEpoch(requested: number): void {
    const code = this.leaderEpochRefusal(requested);
    if (code !== ErrorCode.NONE) {
      throw new KafkaError(code, `Leader epoch ${requested} is ${code === ErrorCode.UNKNOWN_LEADER_EPOCH ? 'newer' : 'older'} than ${this.leaderEpoch}`);
    }
  }

  /**
   * Why a read (consumer or follower) with this leader epoch would be refused, as an error code
   * (NONE when it would not): the checks of `readForConsumer` / `readForFollower`, without building
   * an exception. Fetches name thousands of partitions right after their leadership moved.
   */
  readRefusal(requestedLeaderEpoch: number): number {
    if (!this.isLeader || !this.log) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    return this.leaderEpochRefusal(requestedLeaderEpoch);
  }

  /** The KIP-320 comparison: NONE when no epoch was given (-1) or it is ours. */
  private leaderEpochRefusal(requested: number): number {
    if (requested < 0 || requested === this.leaderEpoch) return ErrorCode.NONE;
    return requested > this.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH;
  }
}
