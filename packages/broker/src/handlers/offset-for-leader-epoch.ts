import { AclOperation, AclResourceType, KafkaError, errorCodeOf, type OffsetForLeaderEpochResponsePartition } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames, requireCluster } from '../security/authorizer.js';

const part = (partition: number, errorCode: number): OffsetForLeaderEpochResponsePartition => ({ errorCode, partition, leaderEpoch: -1, endOffset: -1n });

/**
 * OffsetForLeaderEpoch (KIP-101/279): the end offset of the requested leader epoch on this leader —
 * the start offset of the next larger epoch, or the LEO for the current one — so a follower (or a
 * client) truncates to where its history diverges instead of to the high watermark.
 */
export const offsetForLeaderEpochHandler: ApiHandler<23, BrokerServices> = {
  apiKey: 23,
  async handle(req, ctx, s) {
    // a follower's request (v3+ replica_id >= 0) needs CLUSTER_ACTION; every topic needs DESCRIBE
    if (req.apiVersion >= 3 && req.body.replicaId >= 0) requireCluster(s, ctx, AclOperation.CLUSTER_ACTION);
    const describable = authorizedNames(
      s,
      ctx,
      AclOperation.DESCRIBE,
      AclResourceType.TOPIC,
      req.body.topics.map((t) => t.topic),
    );
    const topics = req.body.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => {
        try {
          if (!describable.has(t.topic)) throw new KafkaError('TOPIC_AUTHORIZATION_FAILED');
          const partition = s.replicaManager.getPartition(t.topic, p.partition);
          if (!partition) throw new KafkaError(s.metadata.hasTopic(t.topic) ? 'NOT_LEADER_OR_FOLLOWER' : 'UNKNOWN_TOPIC_OR_PARTITION');
          // hosted here, log not attached yet (LeaderAndIsr in progress): a leadership question, as in Kafka
          if (!partition.log || !partition.isLeader) throw new KafkaError('NOT_LEADER_OR_FOLLOWER');
          partition.checkLeaderEpoch(p.currentLeaderEpoch);
          const r = partition.log.endOffsetForEpoch(p.leaderEpoch);
          return r ? { errorCode: 0, partition: p.partition, leaderEpoch: r.epoch, endOffset: r.endOffset } : part(p.partition, 0);
        } catch (err) {
          return part(p.partition, errorCodeOf(err));
        }
      }),
    }));
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, code) {
    return { throttleTimeMs: 0, topics: req.body.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => part(p.partition, code)) })) };
  },
};
