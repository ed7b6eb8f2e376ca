import { AclOperation, AclResourceType, ErrorCode, type TopicPartition } from '@samsa/protocol';
import type { OffsetAndMetadata } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames, requireGroup, requireTransactionalId } from '../security/authorizer.js';
import { PartitionErrors } from './partition-results.js';

/**
 * TxnOffsetCommit v0–v3 (KIP-98; v3 carries the consumer group metadata of KIP-447): a
 * transactional producer's sendOffsetsToTransaction. Sent to the group's coordinator, which
 * writes the offsets as the producer's transactional batch to `__consumer_offsets`; they become
 * the group's committed offsets when the transaction's COMMIT marker is written there. Partitions of
 * unknown topics answer UNKNOWN_TOPIC_OR_PARTITION; before v2, COORDINATOR_LOAD_IN_PROGRESS is
 * answered as COORDINATOR_NOT_AVAILABLE (clients before Kafka 2.0 do not retry the former, as
 * Kafka's KafkaApis has it).
 */
export const txnOffsetCommitHandler: ApiHandler<28, BrokerServices> = {
  apiKey: 28,
  async handle(req, ctx, s) {
    const b = req.body;
    const v = req.apiVersion;
    requireTransactionalId(s, ctx, b.transactionalId);
    requireGroup(s, ctx, AclOperation.READ, b.groupId);
    const readable = authorizedNames(
      s,
      ctx,
      AclOperation.READ,
      AclResourceType.TOPIC,
      b.topics.map((t) => t.name),
    );
    const results = new PartitionErrors();
    const now = Date.now();
    const offsets: Array<[TopicPartition, OffsetAndMetadata]> = [];
    for (const t of b.topics) {
      for (const p of t.partitions) {
        if (!readable.has(t.name)) {
          results.set(t.name, p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          continue;
        }
        if (!s.metadata.partition(t.name, p.partitionIndex)) {
          results.set(t.name, p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          continue;
        }
        results.set(t.name, p.partitionIndex, ErrorCode.UNKNOWN_SERVER_ERROR);
        offsets.push([
          { topic: t.name, partition: p.partitionIndex },
          {
            committedOffset: p.committedOffset,
            leaderEpoch: v >= 2 ? p.committedLeaderEpoch : -1,
            metadata: p.committedMetadata ?? '',
            commitTimestampMs: now,
            expireTimestampMs: null,
          },
        ]);
      }
    }
    if (offsets.length > 0) {
      await new Promise<void>((resolve) => {
        s.groupCoordinator.handleTxnCommitOffsets(
          b.groupId,
          b.producerId,
          b.producerEpoch,
          v >= 3 ? b.memberId : '',
          v >= 3 ? b.groupInstanceId : null,
          v >= 3 ? b.generationId : -1,
          offsets,
          (r) => {
            for (const [tp, code] of r) {
              results.set(tp.topic, tp.partition, v < 2 && code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? ErrorCode.COORDINATOR_NOT_AVAILABLE : code);
            }
            resolve();
          },
        );
      });
    }
    return { throttleTimeMs: 0, topics: results.topics() };
  },
  errorResponse(req, code) {
    return {
      throttleTimeMs: 0,
      topics: req.body.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })),
    };
  },
};
