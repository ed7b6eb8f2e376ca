import { AclOperation, AclResourceType, ErrorCode, errorCodeOf, KafkaError, topicPartitionKey, type DeleteRecordsResponseTopicResult } from '@samsa/protocol';
import { DelayedDeleteRecords, type DeleteRecordsPartitionStatus } from '../replica/delayed-delete-records.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames } from '../security/authorizer.js';

/** DeleteRecords' "up to the high watermark" offset. */
const HIGH_WATERMARK = -1n;

/**
 * DeleteRecords (KIP-107): on each partition's leader the log start offset moves to the requested
 * offset (-1: the high watermark), whole segments below it are deleted at once, and the answer's
 * low watermark waits (DelayedDeleteRecords) until every replica's log start offset — followers
 * learn the leader's from fetch responses and report theirs in fetch requests — reached it.
 * Errors as Kafka: OFFSET_OUT_OF_RANGE beyond the high watermark or below zero, POLICY_VIOLATION
 * on topics without cleanup.policy=delete, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION.
 */
export const deleteRecordsHandler: ApiHandler<21, BrokerServices> = {
  apiKey: 21,
  async handle(req, ctx, s) {
    const rm = s.replicaManager;
    const answers = new Map<string, { errorCode: number; lowWatermark: bigint }>();
    const waiting: DeleteRecordsPartitionStatus[] = [];
    const id = (t: string, p: number) => `${t}\u0000${p}`;
    const deletable = authorizedNames(
      s,
      ctx,
      AclOperation.DELETE,
      AclResourceType.TOPIC,
      req.body.topics.map((t) => t.name),
    );
    for (const t of req.body.topics) {
      for (const p of t.partitions) {
        try {
          if (!deletable.has(t.name)) throw new KafkaError('TOPIC_AUTHORIZATION_FAILED');
          const partition = rm.getPartition(t.name, p.partitionIndex);
          if (!partition) throw new KafkaError(s.metadata.hasTopic(t.name) ? 'NOT_LEADER_OR_FOLLOWER' : 'UNKNOWN_TOPIC_OR_PARTITION');
          // hosted here, log not attached yet (LeaderAndIsr in progress): a leadership question, as in Kafka
          if (!partition.log || !partition.isLeader) throw new KafkaError('NOT_LEADER_OR_FOLLOWER');
          if ((await rm.settingsFor(t.name)).deletes === false) {
            throw new KafkaError(
              'POLICY_VIOLATION',
              `Records of partition ${topicPartitionKey(t.name, p.partitionIndex)} can not be deleted due to the configured policy`,
            );
          }
          const log = partition.log;
          const offset = p.offset === HIGH_WATERMARK ? log.highWatermark : p.offset;
          if (offset < 0n)
            throw new KafkaError('OFFSET_OUT_OF_RANGE', `The offset ${p.offset} for partition ${topicPartitionKey(t.name, p.partitionIndex)} is not valid`);
          await log.maybeIncrementLogStartOffset(offset);
          // whole segments now below the log start offset go at once (not only at the next retention check)
          await log.deleteOldSegments();
          const st: DeleteRecordsPartitionStatus = { partition, requiredOffset: offset, lowWatermark: partition.lowWatermark, errorCode: undefined };
          if (req.body.timeoutMs > 0) waiting.push(st);
          else st.errorCode = ErrorCode.NONE;
          answers.set(id(t.name, p.partitionIndex), st as { errorCode: number; lowWatermark: bigint });
        } catch (err) {
          const code = errorCodeOf(err);
          if (code === ErrorCode.UNKNOWN_SERVER_ERROR) s.log.error({ err, topic: t.name, partition: p.partitionIndex }, 'DeleteRecords failed');
          answers.set(id(t.name, p.partitionIndex), { errorCode: code, lowWatermark: -1n });
        }
      }
    }
    if (waiting.length > 0) {
      await new Promise<void>((resolve) => {
        const op = new DelayedDeleteRecords(req.body.timeoutMs, waiting, resolve);
        rm.deleteRecordsPurgatory.tryCompleteElseWatch(
          op,
          waiting.map((w) => topicPartitionKey(w.partition)),
        );
      });
      for (const w of waiting) if (w.errorCode !== ErrorCode.NONE) w.lowWatermark = -1n;
    }
    const topics: DeleteRecordsResponseTopicResult[] = req.body.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        const a = answers.get(id(t.name, p.partitionIndex));
        return { partitionIndex: p.partitionIndex, errorCode: a?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, lowWatermark: a?.lowWatermark ?? -1n };
      }),
    }));
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, code) {
    return {
      throttleTimeMs: 0,
      topics: req.body.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code, lowWatermark: -1n })),
      })),
    };
  },
};
