import { AclOperation, AclResourceType, ErrorCode, type OffsetDeleteResponseTopic, type TopicPartition } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames, requireGroup } from '../security/authorizer.js';

/**
 * OffsetDelete v0 (KIP-496): deletes a group's committed offsets of the requested partitions.
 * Partitions this broker's metadata does not know are UNKNOWN_TOPIC_OR_PARTITION; the coordinator
 * answers GROUP_SUBSCRIBED_TO_TOPIC for topics a consumer group with members still subscribes to.
 * Group errors (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, NOT_COORDINATOR, ...) are top-level, with no
 * partitions, as in Kafka.
 */
export const offsetDeleteHandler: ApiHandler<47, BrokerServices> = {
  apiKey: 47,
  async handle(req, ctx, s) {
    requireGroup(s, ctx, AclOperation.DELETE, req.body.groupId);
    const readable = authorizedNames(
      s,
      ctx,
      AclOperation.READ,
      AclResourceType.TOPIC,
      req.body.topics.map((t) => t.name),
    );
    const results: Array<[TopicPartition, number]> = [];
    const known: TopicPartition[] = [];
    for (const t of req.body.topics) {
      for (const p of t.partitions) {
        const tp = { topic: t.name, partition: p.partitionIndex };
        if (!readable.has(t.name)) results.push([tp, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
        else if (s.metadata.partition(tp.topic, tp.partition)) known.push(tp);
        else results.push([tp, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      }
    }
    const r = s.groupCoordinator.handleDeleteOffsets(req.body.groupId, known);
    if (r.error !== ErrorCode.NONE) return this.errorResponse(req, r.error);
    results.push(...r.partitions);
    const byTopic = new Map<string, OffsetDeleteResponseTopic>();
    for (const [tp, errorCode] of results) {
      let t = byTopic.get(tp.topic);
      if (!t) {
        t = { name: tp.topic, partitions: [] };
        byTopic.set(tp.topic, t);
      }
      t.partitions.push({ partitionIndex: tp.partition, errorCode });
    }
    return { errorCode: ErrorCode.NONE, throttleTimeMs: 0, topics: [...byTopic.values()] };
  },
  errorResponse(_req, code) {
    return { errorCode: code, throttleTimeMs: 0, topics: [] };
  },
};
