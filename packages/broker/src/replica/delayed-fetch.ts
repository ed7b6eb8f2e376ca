import type { Partition } from './partition.js';
import { DelayedOperation } from '@samsa/server-common';

export interface FetchPartitionStatus {
  partition: Partition | undefined;
  fetchOffset: bigint;
  /** The fetch's current_leader_epoch (-1: none given, not checked). */
  leaderEpoch: number;
}

/**
 * Kafka's DelayedFetch: a fetch that found less than min_bytes waits up to max_wait_ms. It
 * completes early when enough new data is readable — past the high watermark for consumers (the
 * last stable offset for read_committed ones), past
 * the log end offset for followers — or when a partition stops being led here or its leader epoch
 * is no longer the one the fetch named (Kafka's cases A and E; the re-read then reports the error).
 * A LeaderAndIsr that bumps the epochs of thousands of partitions so completes a follower's delayed
 * fetch at its first partition instead of re-scanning the whole fetch once per partition. Readable data is estimated in offsets, not bytes (exact for min_bytes = 1,
 * the default of every client and of replica.fetch.min.bytes).
 */
export class DelayedFetch extends DelayedOperation {
  constructor(
    timeoutMs: number,
    private readonly minBytes: number,
    private readonly follower: boolean,
    private readonly statuses: FetchPartitionStatus[],
    private readonly done: () => void,
    /** Partitions whose data does not count (a throttled follower over the leader's replication quota). */
    private readonly excluded: (p: Partition) => boolean = () => false,
    /** A read_committed consumer: data counts up to the last stable offset. */
    private readonly readCommitted = false,
  ) {
    super(timeoutMs);
  }

  tryComplete(): boolean {
    let available = 0;
    for (const s of this.statuses) {
      const p = s.partition;
      if (!p || !p.isLeader || !p.log) return this.forceComplete();
      if (s.leaderEpoch >= 0 && s.leaderEpoch !== p.leaderEpoch) return this.forceComplete();
      const end = this.follower ? p.log.logEndOffset : this.readCommitted ? p.log.lastStableOffset : p.highWatermark;
      if (end > s.fetchOffset) {
        if (!this.excluded(p)) available += Number(end - s.fetchOffset);
      } else if (end < s.fetchOffset) return this.forceComplete(); // truncated below the fetch offset: answer now
    }
    return available >= Math.max(1, this.minBytes) ? this.forceComplete() : false;
  }

  protected onExpiration(): void {}

  protected onComplete(): void {
    this.done();
  }
}
