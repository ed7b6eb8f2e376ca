import { ErrorCode } from '@samsa/protocol';
import type { Partition } from './partition.js';
import { DelayedOperation } from '@samsa/server-common';

export interface ProducePartitionStatus {
  partition: Partition;
  /** The offset the high watermark must reach: last appended offset + 1. */
  requiredOffset: bigint;
  minInsyncReplicas: number;
  /** Undefined while waiting; then the partition's answer. */
  errorCode: number | undefined;
}

/**
 * acks=-1 (Kafka's DelayedProduce): one operation per request, waiting until each partition's
 * high watermark passes what was appended. A partition then answers NONE, or
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND if its ISR fell below min.insync.replicas; a partition whose
 * leadership moved answers NOT_LEADER_OR_FOLLOWER; at the timeout the rest answer REQUEST_TIMED_OUT.
 */
export class DelayedProduce extends DelayedOperation {
  constructor(
    timeoutMs: number,
    readonly statuses: ProducePartitionStatus[],
    private readonly done: () => void,
  ) {
    super(timeoutMs);
  }

  tryComplete(): boolean {
    let pending = 0;
    for (const s of this.statuses) {
      if (s.errorCode !== undefined) continue;
      const p = s.partition;
      if (!p.isLeader) s.errorCode = ErrorCode.NOT_LEADER_OR_FOLLOWER;
      else if (p.highWatermark >= s.requiredOffset) {
        s.errorCode = p.isr.length >= s.minInsyncReplicas ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
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
