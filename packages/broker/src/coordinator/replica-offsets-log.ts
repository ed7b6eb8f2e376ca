/**
 * The coordinator's storage on this broker's replicas of `__consumer_offsets`: appends go through
 * ReplicaManager.appendRecords like a producer's (acks=-1 waits in the produce purgatory for the
 * high watermark, bounded by offsets.commit.timeout.ms); loads read the leader's log to its end.
 */
import { ErrorCode } from '@samsa/protocol';
import { AppendOrigin } from '../replica/produce-response.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import { GROUP_METADATA_TOPIC_NAME, type OffsetsLog } from '@samsa/group-coordinator';

/** Coordinator appends are not validated as a client's are; the version only has to be a current one. */
const COORDINATOR_PRODUCE_VERSION = 9;

export class ReplicaOffsetsLog implements OffsetsLog {
  constructor(private readonly rm: ReplicaManager) {}

  private partition(p: number) {
    return this.rm.getPartition(GROUP_METADATA_TOPIC_NAME, p);
  }

  hasLog(p: number): boolean {
    return this.partition(p)?.log !== undefined;
  }

  append(p: number, records: Buffer, requiredAcks: number, timeoutMs: number): Promise<{ errorCode: number; baseOffset: bigint }> {
    const entries = [{ name: GROUP_METADATA_TOPIC_NAME, partitionData: [{ index: p, records }] }];
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
