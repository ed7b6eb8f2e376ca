import type { Logger } from 'pino';
import { KafkaError, type PartitionState } from '@samsa/protocol';
import type { Log, LogAppendInfo } from '../log/log.js';
import type { FetchDataInfo } from '../log/segment.js';

/** A follower's progress as the leader sees it (from its fetches). */
export interface RemoteReplica {
  logEndOffset: bigint;
  lastCaughtUpTimeMs: number;
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
  partitionEpoch = -1;
  controllerEpoch = -1;
  log: Log | undefined;
  readonly remote = new Map<number, RemoteReplica>();
  private readonly hwListeners = new Set<() => void>();

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly localBrokerId: number,
    private readonly logger: Logger,
  ) {}

  get isLeader(): boolean {
    return this.leaderId === this.localBrokerId;
  }

  get highWatermark(): bigint {
    return this.log?.highWatermark ?? 0n;
  }

  /** Applies a LeaderAndIsr state where this broker leads. Returns true if leadership changed. */
  async makeLeader(s: PartitionState, log: Log): Promise<boolean> {
    const wasLeader = this.isLeader && this.leaderEpoch === s.leaderEpoch;
    this.applyState(s);
    this.log = log;
    // the new epoch starts at our LEO (Kafka assigns it when leadership begins)
    await log.epochs.assign(s.leaderEpoch, log.logEndOffset);
    this.remote.clear();
    const now = Date.now();
    for (const r of s.replicas) if (r !== this.localBrokerId) this.remote.set(r, { logEndOffset: -1n, lastCaughtUpTimeMs: s.isr.includes(r) ? now : 0 });
    this.maybeIncrementHighWatermark();
    this.logger.info({ topic: this.topic, partition: this.partition, leaderEpoch: s.leaderEpoch, isr: s.isr, highWatermark: String(log.highWatermark) }, 'became leader');
    return !wasLeader;
  }

  /** Applies a LeaderAndIsr state where another broker leads. */
  async makeFollower(s: PartitionState, log: Log): Promise<boolean> {
    const changed = this.leaderId !== s.leader || this.leaderEpoch !== s.leaderEpoch;
    this.applyState(s);
    this.log = log;
    this.remote.clear();
    this.logger.info({ topic: this.topic, partition: this.partition, leader: s.leader, leaderEpoch: s.leaderEpoch }, 'became follower');
    return changed;
  }

  private applyState(s: PartitionState): void {
    this.leaderId = s.leader;
    this.leaderEpoch = s.leaderEpoch;
    this.isr = [...s.isr];
    this.replicas = [...s.replicas];
    this.partitionEpoch = s.partitionEpoch;
    this.controllerEpoch = s.controllerEpoch;
  }

  /**
   * Leader append (Kafka's appendRecordsToLeader): NOT_LEADER_OR_FOLLOWER unless leading;
   * acks=all needs ISR ≥ min.insync.replicas (NOT_ENOUGH_REPLICAS) before anything is written.
   */
  async appendRecordsToLeader(records: Buffer, requiredAcks: number, minInsyncReplicas: number): Promise<LogAppendInfo> {
    const log = this.log;
    if (!this.isLeader || !log) {
      throw new KafkaError('NOT_LEADER_OR_FOLLOWER', `Broker ${this.localBrokerId} is not the leader of ${this.topic}-${this.partition}`);
    }
    if (requiredAcks === -1 && this.isr.length < minInsyncReplicas) {
      throw new KafkaError(
        'NOT_ENOUGH_REPLICAS',
        `The size of the current ISR [${this.isr.join(',')}] is insufficient to satisfy the min.isr requirement of ${minInsyncReplicas} for partition ${this.topic}-${this.partition}`,
      );
    }
    const info = await log.appendAsLeader(records, this.leaderEpoch);
    this.maybeIncrementHighWatermark();
    return info;
  }

  /**
   * HW = min LEO over the ISR (the leader's own LEO included), never moving back (the seed's
   * maybeIncrementLeaderHW). Followers report their LEO by fetching.
   */
  maybeIncrementHighWatermark(): boolean {
    const log = this.log;
    if (!log || !this.isLeader) return false;
    let hw = log.logEndOffset;
    for (const id of this.isr) {
      if (id === this.localBrokerId) continue;
      const r = this.remote.get(id);
      const leo = r ? r.logEndOffset : -1n;
      if (leo < hw) hw = leo;
    }
    if (hw > log.highWatermark) {
      log.updateHighWatermark(hw);
      for (const l of this.hwListeners) l();
      return true;
    }
    return false;
  }

  /** Called whenever the high watermark (what consumers may read) moves. */
  onHighWatermark(l: () => void): () => void {
    this.hwListeners.add(l);
    return () => this.hwListeners.delete(l);
  }

  /** Consumer read: leader only, up to the high watermark. */
  async readForConsumer(offset: bigint, maxBytes: number, minOneMessage: boolean, currentLeaderEpoch: number): Promise<FetchDataInfo> {
    const log = this.log;
    if (!this.isLeader || !log) throw new KafkaError('NOT_LEADER_OR_FOLLOWER', `Broker ${this.localBrokerId} is not the leader of ${this.topic}-${this.partition}`);
    this.checkLeaderEpoch(currentLeaderEpoch);
    return log.read(offset, maxBytes, log.highWatermark, minOneMessage);
  }

  /** KIP-320: a client with a newer epoch than ours → UNKNOWN_LEADER_EPOCH; older → FENCED_LEADER_EPOCH. */
  checkLeaderEpoch(requested: number): void {
    if (requested < 0) return;
    if (requested > this.leaderEpoch) throw new KafkaError('UNKNOWN_LEADER_EPOCH', `Leader epoch ${requested} is newer than ${this.leaderEpoch}`);
    if (requested < this.leaderEpoch) throw new KafkaError('FENCED_LEADER_EPOCH', `Leader epoch ${requested} is older than ${this.leaderEpoch}`);
  }
}
