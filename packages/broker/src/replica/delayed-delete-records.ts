import { ErrorCode } from '@samsa/protocol';
import type { Partition } from './partition.js';
import { DelayedOperation } from '@samsa/server-common';

export interface DeleteRecordsPartitionStatus {
  partition: Partition;
  /** The new log start offset every replica must reach. */
  requiredOffset: bigint;
  /** The low watermark answered; -1 until known. */
  lowWatermark: bigint;
  /** Undefined while waiting; then the partition's answer. */
  errorCode: number | undefined;
}

/**
 * Kafka's DelayedDeleteRecords: one operation per request, waiting until each partition's low
 * watermark (the smallest log start offset over its replicas, followers reporting theirs in their
 * fetches) reaches the requested offset. Leadership loss answers NOT_LEADER_OR_FOLLOWER; the
 * timeout answers REQUEST_TIMED_OUT.
 */
export class DelayedDeleteRecords extends DelayedOperation {
  constructor(
    timeoutMs: number,
    readonly statuses: DeleteRecordsPartitionStatus[],
    private readonly done: () => void,
  ) {
    super(timeoutMs);
  }

  tryComplete(): boolean {
    let pending = 0;
    for (const s of this.statuses) {
      if (s.errorCode !== undefined) continue;
      const p = s.partition;
      if (!p.isLeader) {
        s.errorCode = ErrorCode.NOT_LEADER_OR_FOLLOWER;
        continue;
      }
      const low = p.lowWatermark;
      if (low >= s.requiredOffset) {
        s.lowWatermark = low;
        s.errorCode = ErrorCode.NONE;
      } else pending++;
    }
    return pending === 0 ? this.forceComplete() : false;
  }

  protected onExpiration(): void {
    for (const s of this.statuses) if (s.errorCode === undefined) s.errorCode = ErrorCode.REQUEST_TIMED_OUT;
  }

  protected onComplete(): void {
    this.done();
  }
}
