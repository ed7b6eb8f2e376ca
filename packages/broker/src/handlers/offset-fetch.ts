import { AclOperation, AclResourceType, ErrorCode, type OffsetFetchResponseGroup, type OffsetFetchResponseTopic, type TopicPartition } from '@samsa/protocol';
import type { PartitionData } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorize, authorizedNames, requireGroup } from '../security/authorizer.js';
import { zkConsumerOffsetPath } from './offset-commit.js';

type Requested = Array<{ name: string; partitionIndexes: number[] }> | null;

const flatten = (topics: NonNullable<Requested>): TopicPartition[] =>
  topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition })));

/** Groups partition results by topic, in first-seen order. */
function byTopic(results: Array<[TopicPartition, PartitionData]>): Array<{
  name: string;
  partitions: Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; metadata: string | null; errorCode: number }>;
}> {
  const m = new Map<
    string,
    Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; metadata: string | null; errorCode: number }>
  >();
  for (const [tp, d] of results) {
    let list = m.get(tp.topic);
    if (!list) {
      list = [];
      m.set(tp.topic, list);
    }
    list.push({ partitionIndex: tp.partition, committedOffset: d.offset, committedLeaderEpoch: d.leaderEpoch, metadata: d.metadata, errorCode: d.error });
  }
  return [...m].map(([name, partitions]) => ({ name, partitions }));
}

/**
 * OffsetFetch v0–v9: v0 reads ZooKeeper (as Kafka's ZooKeeper mode; a missing offset is
 * UNKNOWN_TOPIC_OR_PARTITION there), v1+ the group coordinator's cache: -1 for partitions without
 * a committed offset, all of the group's offsets when topics is null (v2+), UNSTABLE_OFFSET_COMMIT
 * with requireStable (v7+) while a commit is in flight, several groups per request from v8.
 * Group errors are top-level from v2 (per partition before).
 */
export const offsetFetchHandler: ApiHandler<9, BrokerServices> = {
  apiKey: 9,
  async handle(req, ctx, s) {
    const b = req.body;
    const v = req.apiVersion;
    const requireStable = v >= 7 && b.requireStable;
    if (v < 8) requireGroup(s, ctx, AclOperation.DESCRIBE, b.groupId);
    if (v === 0) {
      const results: Array<[TopicPartition, PartitionData]> = [];
      for (const tp of flatten(b.topics ?? [])) {
        const unknown: PartitionData = { offset: -1n, leaderEpoch: -1, metadata: '', error: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
        if (!s.metadata.partition(tp.topic, tp.partition)) {
          results.push([tp, unknown]);
          continue;
        }
        try {
          const node = await s.kzk.zk.getOrNull(zkConsumerOffsetPath(b.groupId, tp.topic, tp.partition));
          results.push([tp, node ? { offset: BigInt(node.data.toString()), leaderEpoch: -1, metadata: '', error: ErrorCode.NONE } : unknown]);
        } catch (err) {
          s.log.warn({ err, groupId: b.groupId, topic: tp.topic, partition: tp.partition }, 'v0 offset fetch from ZooKeeper failed');
          results.push([tp, { offset: -1n, leaderEpoch: -1, metadata: '', error: ErrorCode.UNKNOWN_SERVER_ERROR }]);
        }
      }
      return { throttleTimeMs: 0, topics: byTopic(results), errorCode: 0, groups: [] };
    }
    // DESCRIBE on each topic: named partitions of other topics are TOPIC_AUTHORIZATION_FAILED, "all" leaves them out
    const fetch = (groupId: string, topics: Requested) => {
      const describable = authorizedNames(s, ctx, AclOperation.DESCRIBE, AclResourceType.TOPIC, topics?.map((t) => t.name) ?? [], {
        logIfDenied: topics !== null,
      });
      const allowed = topics?.filter((t) => describable.has(t.name)) ?? null;
      const r = s.groupCoordinator.handleFetchOffsets(groupId, requireStable, allowed === null ? null : flatten(allowed));
      if (r.error !== ErrorCode.NONE) return r;
      if (topics === null) {
        const seen = authorizedNames(s, ctx, AclOperation.DESCRIBE, AclResourceType.TOPIC, new Set(r.offsets.map(([tp]) => tp.topic)), { logIfDenied: false });
        return { ...r, offsets: r.offsets.filter(([tp]) => seen.has(tp.topic)) };
      }
      const denied = flatten(topics.filter((t) => !describable.has(t.name))).map((tp): [TopicPartition, PartitionData] => [
        tp,
        { offset: -1n, leaderEpoch: -1, metadata: '', error: ErrorCode.TOPIC_AUTHORIZATION_FAILED },
      ]);
      return denied.length === 0 ? r : { ...r, offsets: [...r.offsets, ...denied] };
    };
    if (v >= 8) {
      const groups: OffsetFetchResponseGroup[] = b.groups.map((g) => {
        if (!authorize(s, ctx, AclOperation.DESCRIBE, AclResourceType.GROUP, g.groupId))
          return { groupId: g.groupId, topics: [], errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
        const r = fetch(g.groupId, g.topics);
        return { groupId: g.groupId, topics: r.error === ErrorCode.NONE ? byTopic(r.offsets) : [], errorCode: r.error };
      });
      return { throttleTimeMs: 0, topics: [], errorCode: 0, groups };
    }
    const r = fetch(b.groupId, b.topics);
    if (r.error !== ErrorCode.NONE) return this.errorResponse(req, r.error);
    return { throttleTimeMs: 0, topics: byTopic(r.offsets) as OffsetFetchResponseTopic[], errorCode: 0, groups: [] };
  },
  errorResponse(req, code) {
    const v = req.apiVersion;
    if (v >= 8)
      return { throttleTimeMs: 0, topics: [], errorCode: 0, groups: req.body.groups.map((g) => ({ groupId: g.groupId, topics: [], errorCode: code })) };
    // before v2 there is no top-level error: each requested partition carries it
    const topics = v < 2 ? byTopic(flatten(req.body.topics ?? []).map((tp) => [tp, { offset: -1n, leaderEpoch: -1, metadata: '', error: code }])) : [];
    return { throttleTimeMs: 0, topics, errorCode: v >= 2 ? code : 0, groups: [] };
  },
};
