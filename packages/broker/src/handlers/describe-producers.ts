import type { DescribeProducersResponsePartition, DescribeProducersResponseProducerState } from '@samsa/protocol';
import { AclOperation, AclResourceType, ErrorCode } from '@samsa/protocol';
import type { ProducerStateEntry } from '@samsa/storage';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames } from '../security/authorizer.js';

/** Kafka's ProducerStateEntry as DescribeProducers reports it (UnifiedLog.activeProducers). */
export function activeProducerState(e: ProducerStateEntry): DescribeProducersResponseProducerState {
  return {
    producerId: e.producerId,
    producerEpoch: e.producerEpoch,
    lastSequence: e.lastSeq,
    lastTimestamp: BigInt(e.lastTimestamp),
    coordinatorEpoch: e.coordinatorEpoch,
    currentTxnStartOffset: e.currentTxnFirstOffset,
  };
}

function partitionError(partitionIndex: number, errorCode: number): DescribeProducersResponsePartition {
  return { partitionIndex, errorCode, errorMessage: null, activeProducers: [] };
}

/**
 * DescribeProducers v0 (KIP-664): per partition, the producers in the producer state of this
 * broker's replica of it (Kafka's ReplicaManager.activeProducerState → Partition.activeProducerState):
 * producer id and epoch, last sequence and timestamp, the epoch of the coordinator that wrote its last
 * marker, and the first offset of its open transaction (-1 when none). As in Kafka any replica with
 * a local log answers (so `kafka-transactions.sh describe-producers --broker-id` can ask a
 * follower); a partition this broker has no replica of is NOT_LEADER_OR_FOLLOWER, one the
 * metadata does not know UNKNOWN_TOPIC_OR_PARTITION.
 */
export const describeProducersHandler: ApiHandler<61, BrokerServices> = {
  apiKey: 61,
  async handle(req, ctx, s) {
    const readable = authorizedNames(
      s,
      ctx,
      AclOperation.READ,
      AclResourceType.TOPIC,
      req.body.topics.map((t) => t.name),
    );
    const topics = req.body.topics.map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((p): DescribeProducersResponsePartition => {
        if (!readable.has(t.name)) return partitionError(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        const log = s.replicaManager.getPartition(t.name, p)?.log;
        if (!log) return partitionError(p, s.metadata.partition(t.name, p) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        return { ...partitionError(p, ErrorCode.NONE), activeProducers: [...log.producerState.activeProducers.values()].map(activeProducerState) };
      }),
    }));
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      topics: req.body.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => partitionError(p, errorCode)) })),
    };
  },
};
