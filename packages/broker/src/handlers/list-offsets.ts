import { AclOperation, AclResourceType, KafkaError, errorCodeOf, type ListOffsetsResponsePartition } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { authorizedNames } from '../security/authorizer.js';

const LATEST = -1n;
const EARLIEST = -2n;

function part(partitionIndex: number, errorCode: number): ListOffsetsResponsePartition {
  return { partitionIndex, errorCode, oldStyleOffsets: [], timestamp: -1n, offset: -1n, leaderEpoch: -1 };
}

/**
 * ListOffsets: -2 earliest (log start), -1 latest (what consumers can read: the high watermark, the
 * last stable offset for isolation_level 1 READ_COMMITTED, v2+), otherwise the first offset whose
 * timestamp is at or after the given time, below that same bound (Kafka's fetchOffsetForTimestamp).
 * Leader only. v0 answers in the old `oldStyleOffsets` form.
 */
export const listOffsetsHandler: ApiHandler<2, BrokerServices> = {
  apiKey: 2,
  async handle(req, ctx, s) {
    const v = req.apiVersion;
    const topics = [];
    const describable = authorizedNames(
      s,
      ctx,
      AclOperation.DESCRIBE,
      AclResourceType.TOPIC,
      req.body.topics.map((t) => t.name),
    );
    for (const t of req.body.topics) {
      const partitions: ListOffsetsResponsePartition[] = [];
      for (const p of t.partitions) {
        const partition = s.replicaManager.getPartition(t.name, p.partitionIndex);
        try {
          if (!describable.has(t.name)) throw new KafkaError('TOPIC_AUTHORIZATION_FAILED');
          if (!partition) throw new KafkaError(s.metadata.hasTopic(t.name) ? 'NOT_LEADER_OR_FOLLOWER' : 'UNKNOWN_TOPIC_OR_PARTITION');
          // hosted here but its log not attached yet (LeaderAndIsr in progress; the metadata cache may
          // not know the topic yet either): a leadership question, as Kafka's localLogOrException.
          // librdkafka takes UNKNOWN_TOPIC_OR_PARTITION on ListOffsets as permanent: it resets the
          // consumer's position to auto.offset.reset and reports an error (kcat exits)
          if (!partition.log || !partition.isLeader) throw new KafkaError('NOT_LEADER_OR_FOLLOWER');
          partition.checkLeaderEpoch(p.currentLeaderEpoch);
          const log = partition.log;
          const readCommitted = v >= 2 && req.body.isolationLevel === 1;
          const lastFetchable = readCommitted ? log.lastStableOffset : log.highWatermark;
          let offset: bigint;
          let timestamp = -1n;
          let leaderEpoch = -1;
          if (p.timestamp === LATEST) {
            // replicas (replica_id >= 0) get the log end offset; clients only what is committed
            offset = req.body.replicaId >= 0 ? log.logEndOffset : lastFetchable;
            leaderEpoch = log.epochs.latestEpoch ?? -1;
          } else if (p.timestamp === EARLIEST) {
            offset = log.logStartOffset;
            leaderEpoch = log.epochs.epochForOffset(offset) ?? -1;
          } else {
            const found = await log.offsetForTimestamp(p.timestamp);
            if (found && found.offset < lastFetchable) {
              offset = found.offset;
              timestamp = found.timestamp;
              leaderEpoch = found.leaderEpoch ?? -1;
            } else {
              offset = -1n;
            }
          }
          const r = part(p.partitionIndex, 0);
          if (v === 0) r.oldStyleOffsets = offset >= 0n ? [offset] : [];
          else {
            r.offset = offset;
            r.timestamp = timestamp;
            r.leaderEpoch = leaderEpoch;
          }
          partitions.push(r);
        } catch (err) {
          partitions.push(part(p.partitionIndex, errorCodeOf(err)));
        }
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, code) {
    return { throttleTimeMs: 0, topics: req.body.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => part(p.partitionIndex, code)) })) };
  },
};
