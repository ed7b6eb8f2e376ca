import { AclOperation, AclResourceType, ErrorCode, type AddPartitionsToTxnResponse, type TopicPartition } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames, requireTransactionalId } from '../security/authorizer.js';

function answer(topics: ReadonlyArray<{ name: string; partitions: ReadonlyArray<[number, number]> }>): AddPartitionsToTxnResponse {
  return {
    throttleTimeMs: 0,
    resultsByTopic: topics.map((t) => ({
      name: t.name,
      resultsByPartition: t.partitions.map(([partitionIndex, partitionErrorCode]) => ({ partitionIndex, partitionErrorCode })),
    })),
  };
}

/**
 * AddPartitionsToTxn v0–v3: a transactional producer's partitions join its ongoing transaction
 * (sent to the transaction coordinator before the first Produce to each). As Kafka's KafkaApis: a
 * partition this cluster does not have fails the whole request — UNKNOWN_TOPIC_OR_PARTITION for it,
 * OPERATION_NOT_ATTEMPTED for the others; otherwise every partition gets the coordinator's answer
 * (PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH below v2).
 */
export const addPartitionsToTxnHandler: ApiHandler<24, BrokerServices> = {
  apiKey: 24,
  async handle(req, ctx, s) {
    const b = req.body;
    requireTransactionalId(s, ctx, b.transactionalId);
    const writable = authorizedNames(
      s,
      ctx,
      AclOperation.WRITE,
      AclResourceType.TOPIC,
      b.topics.map((t) => t.name),
    );
    const partitions: TopicPartition[] = [];
    let missing = false;
    for (const t of b.topics) {
      for (const p of t.partitions) {
        if (!writable.has(t.name) || !s.metadata.partition(t.name, p)) missing = true;
        partitions.push({ topic: t.name, partition: p });
      }
    }
    if (missing) {
      // unauthorized topics, then unknown partitions; the rest is not attempted
      const codeOf = (topic: string, p: number) =>
        !writable.has(topic)
          ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
          : s.metadata.partition(topic, p)
            ? ErrorCode.OPERATION_NOT_ATTEMPTED
            : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      return answer(b.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => [p, codeOf(t.name, p)]) })));
    }
    const error = await s.transactionCoordinator.handleAddPartitionsToTransaction(b.transactionalId, b.producerId, b.producerEpoch, partitions, req.apiVersion);
    return answer(b.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => [p, error]) })));
  },
  errorResponse(req, code) {
    return answer(req.body.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => [p, code]) })));
  },
};
