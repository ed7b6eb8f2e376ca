import { AclOperation, AclResourceType, CLUSTER_RESOURCE_NAME, ErrorCode, KafkaError, type MetadataResponseTopic } from '@samsa/protocol';
import {
  AUTHORIZED_OPERATIONS_OMITTED,
  SUPPORTED_OPERATIONS,
  authorize,
  authorizeCluster,
  authorizedNames,
  authorizedOperations,
} from '../security/authorizer.js';
import { topicIdFromString } from '@samsa/zk-paths';
import { INTERNAL_TOPICS, validateTopicName } from '../admin/topic-admin.js';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';

const ZERO_UUID: Buffer = Buffer.alloc(16);
const NO_OPS = AUTHORIZED_OPERATIONS_OMITTED;

function topicIdBytes(id: string | undefined): Buffer {
  if (!id) return ZERO_UUID;
  try {
    return topicIdFromString(id);
  } catch {
    return ZERO_UUID;
  }
}

function errorTopic(name: string | null, code: number, topicId: Buffer = ZERO_UUID): MetadataResponseTopic {
  return { errorCode: code, name, topicId, isInternal: false, partitions: [], topicAuthorizedOperations: NO_OPS };
}

/**
 * Metadata: brokers on the listener the client used, the controller, and per topic its
 * partitions' leader, replicas, ISR and offline replicas. Unknown topics are created when
 * auto.create.topics.enable and the request allow it (answered LEADER_NOT_AVAILABLE meanwhile).
 */
export const metadataHandler: ApiHandler<3, BrokerServices> = {
  apiKey: 3,
  async handle(req, ctx, s) {
    const v = req.apiVersion;
    const body = req.body;
    // KIP-430 (v8+): the topic operations the principal may perform, when asked
    const includeTopicOps = v >= 8 && body.includeTopicAuthorizedOperations;
    const brokers = [];
    for (const b of s.metadata.aliveBrokers()) {
      const e = s.metadata.endpoint(b.id, ctx.listener);
      if (e) brokers.push({ nodeId: b.id, host: e.host, port: e.port, rack: b.rack });
    }
    // v0: an empty list means all topics; v1+: null means all, empty means none
    const all = body.topics === null || (v === 0 && body.topics.length === 0);
    // all topics: those the principal may not DESCRIBE are left out (their denials logged at trace)
    let allNames = all ? s.metadata.allTopics() : [];
    if (all && s.authorizer) {
      const visible = authorizedNames(s, ctx, AclOperation.DESCRIBE, AclResourceType.TOPIC, allNames, { logIfDenied: false });
      allNames = allNames.filter((name) => visible.has(name));
    }
    const requested: Array<{ name: string | null; id: Buffer }> = all
      ? allNames.map((name) => ({ name, id: ZERO_UUID }))
      : body.topics!.map((t) => ({ name: t.name, id: t.topicId }));
    const topics: MetadataResponseTopic[] = [];
    for (const t of requested) {
      let name = t.name;
      if (name === null) {
        // v10+: lookup by topic id
        const idStr = t.id.toString('base64url');
        name = s.metadata.topicName(idStr) ?? null;
        if (name === null) {
          topics.push(errorTopic(null, ErrorCode.UNKNOWN_TOPIC_ID, t.id));
          continue;
        }
      }
      if (!all && !authorize(s, ctx, AclOperation.DESCRIBE, AclResourceType.TOPIC, name)) {
        topics.push(errorTopic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, t.id));
        continue;
      }
      if (!s.metadata.hasTopic(name)) {
        try {
          validateTopicName(name);
        } catch {
          topics.push(errorTopic(name, ErrorCode.INVALID_TOPIC_EXCEPTION));
          continue;
        }
        const allow = v < 4 || body.allowAutoTopicCreation;
        if (!all && allow && s.settings.autoCreateTopicsEnable && !INTERNAL_TOPICS.has(name)) {
          // auto-creation needs CREATE on the cluster or on the topic
          const mayCreate =
            authorizeCluster(s, ctx, AclOperation.CREATE, { logIfDenied: false }) || authorize(s, ctx, AclOperation.CREATE, AclResourceType.TOPIC, name);
          if (!mayCreate) {
            topics.push(errorTopic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
            continue;
          }
          try {
            await s.topicAdmin.autoCreate(name);
            topics.push(errorTopic(name, ErrorCode.LEADER_NOT_AVAILABLE));
          } catch (err) {
            const code = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
            s.log.warn({ err, topic: name }, 'topic auto-creation failed');
            topics.push(errorTopic(name, code));
          }
        } else {
          topics.push(errorTopic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        }
        continue;
      }
      const partitions = s.metadata.partitions(name).map((p) => {
        const leaderAlive = p.leader >= 0 && s.metadata.isBrokerAlive(p.leader);
        // v0 reports missing replicas as REPLICA_NOT_AVAILABLE (Kafka's errorUnavailableEndpoints); leader errors win
        const code = !leaderAlive ? ErrorCode.LEADER_NOT_AVAILABLE : v === 0 && p.offlineReplicas.length > 0 ? ErrorCode.REPLICA_NOT_AVAILABLE : 0;
        return {
          errorCode: code,
          partitionIndex: p.partition,
          leaderId: leaderAlive ? p.leader : -1,
          leaderEpoch: p.leaderEpoch,
          replicaNodes: p.replicas,
          isrNodes: p.isr,
          offlineReplicas: p.offlineReplicas,
        };
      });
      topics.push({
        errorCode: 0,
        name,
        topicId: topicIdBytes(s.metadata.topicId(name)),
        isInternal: INTERNAL_TOPICS.has(name),
        partitions,
        topicAuthorizedOperations: includeTopicOps ? authorizedOperations(s, ctx, AclResourceType.TOPIC, name, SUPPORTED_OPERATIONS.topic) : NO_OPS,
      });
    }
    return {
      throttleTimeMs: 0,
      brokers,
      clusterId: s.clusterId,
      controllerId: s.metadata.controllerId,
      topics,
      clusterAuthorizedOperations: req.body.includeClusterAuthorizedOperations
        ? authorizedOperations(s, ctx, AclResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, SUPPORTED_OPERATIONS.cluster)
        : NO_OPS,
    };
  },
  errorResponse(req, code) {
    const topics = (req.body.topics ?? []).map((t) => errorTopic(t.name, code, t.topicId));
    return { throttleTimeMs: 0, brokers: [], clusterId: null, controllerId: -1, topics, clusterAuthorizedOperations: NO_OPS };
  },
};
