import { AclOperation, AclResourceType, ErrorCode, type OffsetCommitResponseTopic, type TopicPartition } from '@samsa/protocol';
import type { OffsetAndMetadata } from '@samsa/group-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames, requireGroup } from '../security/authorizer.js';
import { checkStaticMembershipSupported } from './static-membership.js';
import { PartitionErrors } from './partition-results.js';

/** Kafka's ZooKeeper path of a v0 offset commit. */
export const zkConsumerOffsetPath = (group: string, topic: string, partition: number) => `/consumers/${group}/offsets/${topic}/${partition}`;

/**
 * OffsetCommit v0–v9. Partitions of unknown topics answer UNKNOWN_TOPIC_OR_PARTITION. v0 stores
 * the offsets in ZooKeeper (/consumers/<group>/offsets/<topic>/<partition>) as Kafka's ZooKeeper
 * mode does; v1+ go to the group coordinator: generation and member checks (generation -1 from a
 * non-member of an Empty group is a simple commit), stored in `__consumer_offsets` with acks=-1.
 * v1 may set each commit's timestamp, v2–v4 a retention time (the expire timestamp), v6+ the
 * leader epoch, v7+ the group.instance.id.
 */
export const offsetCommitHandler: ApiHandler<8, BrokerServices> = {
  apiKey: 8,
  async handle(req, ctx, s) {
    const b = req.body;
    const v = req.apiVersion;
    requireGroup(s, ctx, AclOperation.READ, b.groupId);
    const readable = authorizedNames(
      s,
      ctx,
      AclOperation.READ,
      AclResourceType.TOPIC,
      b.topics.map((t) => t.name),
    );
    checkStaticMembershipSupported(s, v >= 7 ? b.groupInstanceId : null);
    const now = Date.now();
    const results = new PartitionErrors();
    const set = (topic: string, partition: number, code: number) => results.set(topic, partition, code);
    const expireTimestampMs = v >= 2 && v <= 4 && b.retentionTimeMs !== -1n ? now + Number(b.retentionTimeMs) : null;
    const offsets: Array<[TopicPartition, OffsetAndMetadata]> = [];
    for (const t of b.topics) {
      for (const p of t.partitions) {
        if (!readable.has(t.name)) {
          set(t.name, p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          continue;
        }
        if (!s.metadata.partition(t.name, p.partitionIndex)) {
          set(t.name, p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          continue;
        }
        set(t.name, p.partitionIndex, ErrorCode.UNKNOWN_SERVER_ERROR);
        offsets.push([
          { topic: t.name, partition: p.partitionIndex },
          {
            committedOffset: p.committedOffset,
            leaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1,
            metadata: p.committedMetadata ?? '',
            commitTimestampMs: v === 1 && p.commitTimestamp !== -1n ? Number(p.commitTimestamp) : now,
            expireTimestampMs,
          },
        ]);
      }
    }
    if (offsets.length > 0 && v === 0) {
      const max = s.config.get('offset.metadata.max.bytes');
      for (const [tp, o] of offsets) {
        if (o.metadata.length > max) {
          set(tp.topic, tp.partition, ErrorCode.OFFSET_METADATA_TOO_LARGE);
          continue;
        }
        const path = zkConsumerOffsetPath(b.groupId, tp.topic, tp.partition);
        const data = Buffer.from(String(o.committedOffset));
        try {
          if (await s.kzk.zk.exists(path)) await s.kzk.zk.set(path, data);
          else await s.kzk.zk.create(path, data, { mkdirp: true });
          set(tp.topic, tp.partition, ErrorCode.NONE);
        } catch (err) {
          s.log.warn({ err, groupId: b.groupId, topic: tp.topic, partition: tp.partition }, 'v0 offset commit to ZooKeeper failed');
          set(tp.topic, tp.partition, ErrorCode.UNKNOWN_SERVER_ERROR);
        }
      }
    } else if (offsets.length > 0) {
      await new Promise<void>((resolve) => {
        s.groupCoordinator.handleCommitOffsets(
          b.groupId,
          v >= 1 ? b.memberId : '',
          v >= 7 ? b.groupInstanceId : null,
          v >= 1 ? b.generationIdOrMemberEpoch : -1,
          offsets,
          (r) => {
            for (const [tp, code] of r) set(tp.topic, tp.partition, code);
            resolve();
          },
        );
      });
    }
    const topics: OffsetCommitResponseTopic[] = results.topics();
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, code) {
    return {
      throttleTimeMs: 0,
      topics: req.body.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })),
    };
  },
};
