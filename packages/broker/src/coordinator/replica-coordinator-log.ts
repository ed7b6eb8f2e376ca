/**
 * A coordinator's storage on this broker's replicas of its internal topic (`__consumer_offsets`
 * for the group coordinator, `__transaction_state` for the transaction coordinator): appends go
 * through ReplicaManager.appendRecords like a producer's (acks=-1 waits in the produce purgatory
 * for the high watermark, bounded by the caller's timeout); loads read the leader's log to its end.
 */
import { ErrorCode } from '@samsa/protocol';
import type { CoordinatorLog } from '@samsa/server-common';
import { AppendOrigin } from '../replica/produce-response.js';
import type { ReplicaManager } from '../replica/replica-manager.js';

/** Coordinator appends are not validated as a client's are; the version only has to be a current one. */
const COORDINATOR_PRODUCE_VERSION = 9;

export class ReplicaCoordinatorLog implements CoordinatorLog {
  constructor(
    private readonly rm: ReplicaManager,
    readonly topic: string,
  ) {}

  private partition(p: number) {
    return this.rm.getPartition(this.topic, p);
  }

  hasLog(p: number): boolean {
    return this.partition(p)?.log !== undefined;
  }

  append(p: number, records: Buffer, requiredAcks: number, timeoutMs: number): Promise<{ errorCode: number; baseOffset: bigint }> {
    const entries = [{ name: this.topic, partitionData: [{ index: p, records }] }];
    return new Promise((resolve) =>
      this.rm.appendRecords(timeoutMs, requiredAcks, AppendOrigin.Coordinator, COORDINATOR_PRODUCE_VERSION, entries, ([t]) => {
        const r = t?.partitionResponses[0];
        resolve(r ? { errorCode: r.errorCode, baseOffset: r.baseOffset } : { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, baseOffset: -1n });
      }),
    );
  }

  logStartOffset(p: number): bigint | undefined {
    return this.partition(p)?.log?.logStartOffset;
  }

  leaderLogEndOffset(p: number): bigint {
    const partition = this.partition(p);
    return partition?.isLeader && partition.log ? partition.log.logEndOffset : -1n;
  }

  async read(p: number, offset: bigint, maxBytes: number): Promise<Buffer> {
    const log = this.partition(p)?.log;
    if (!log) return Buffer.alloc(0);
    const info = await log.read(offset, maxBytes, undefined, true);
    return info.records.read();
  }
}
