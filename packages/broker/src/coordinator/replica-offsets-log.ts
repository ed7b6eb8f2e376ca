/**
 * The coordinator's storage on this broker's replicas of `__consumer_offsets`: appends go through
 * ReplicaManager.appendRecords like a producer's (acks=-1 waits in the produce purgatory for the
 * high watermark, bounded by offsets.commit.timeout.ms); loads read the leader's log to its end.
 */
import { ErrorCode } from '@samsa/protocol';
import { DelayedProduce, type ProducePartitionStatus } from '../replica/delayed-produce.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import type { OffsetsLog } from './group-metadata-manager.js';
import { GROUP_METADATA_TOPIC_NAME } from './offsets-topic.js';

export class ReplicaOffsetsLog implements OffsetsLog {
  constructor(private readonly rm: ReplicaManager) {}

  private partition(p: number) {
    return this.rm.getPartition(GROUP_METADATA_TOPIC_NAME, p);
  }

  hasLog(p: number): boolean {
    return this.partition(p)?.log !== undefined;
  }

  async append(p: number, records: Buffer, requiredAcks: number, timeoutMs: number): Promise<{ errorCode: number; baseOffset: bigint }> {
    const [r] = await this.rm.appendRecords(requiredAcks, [{ topic: GROUP_METADATA_TOPIC_NAME, partition: p, records }]);
    if (!r || r.errorCode !== ErrorCode.NONE || !r.info) return { errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, baseOffset: -1n };
    const baseOffset = r.info.firstOffset;
    const partition = this.partition(p);
    if (requiredAcks !== -1 || !partition) return { errorCode: ErrorCode.NONE, baseOffset };
    const status: ProducePartitionStatus = {
      partition,
      requiredOffset: r.info.lastOffset + 1n,
      minInsyncReplicas: (await this.rm.settingsFor(GROUP_METADATA_TOPIC_NAME)).minInsyncReplicas,
      errorCode: undefined,
    };
    await new Promise<void>((resolve) => {
      this.rm.producePurgatory.tryCompleteElseWatch(new DelayedProduce(timeoutMs, [status], resolve), [`${GROUP_METADATA_TOPIC_NAME}-${p}`]);
    });
    return { errorCode: status.errorCode ?? ErrorCode.NONE, baseOffset };
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
