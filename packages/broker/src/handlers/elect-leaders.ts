import { AclOperation, ErrorCode, type ElectLeadersResponseReplicaElectionResult } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireCluster } from '../security/authorizer.js';

/**
 * ElectLeaders (KIP-460): preferred (v0 always) or unclean elections run by the controller's event
 * loop; NOT_CONTROLLER on other brokers. Null topic partitions means every partition.
 */
export const electLeadersHandler: ApiHandler<43, BrokerServices> = {
  apiKey: 43,
  async handle(req, ctx, s) {
    const b = req.body;
    requireCluster(s, ctx, AclOperation.ALTER);
    const type = (req.apiVersion === 0 ? 0 : b.electionType) as 0 | 1;
    if (type !== 0 && type !== 1) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, replicaElectionResults: [] };
    if (!s.controller.isActive) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, replicaElectionResults: [] };
    const requested = b.topicPartitions === null ? null : b.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
    const { errorCode, results } = await s.controller.electLeaders(requested, type, b.timeoutMs);
    if (errorCode !== 0) return { throttleTimeMs: 0, errorCode, replicaElectionResults: [] };
    const byTopic = new Map<string, ElectLeadersResponseReplicaElectionResult>();
    for (const [{ topic, partition }, r] of results) {
      let t = byTopic.get(topic);
      if (!t) {
        t = { topic, partitionResult: [] };
        byTopic.set(topic, t);
      }
      t.partitionResult.push({ partitionId: partition, errorCode: r.errorCode, errorMessage: r.message });
    }
    for (const t of byTopic.values()) t.partitionResult.sort((x, y) => x.partitionId - y.partitionId);
    return { throttleTimeMs: 0, errorCode: 0, replicaElectionResults: [...byTopic.values()].sort((x, y) => x.topic.localeCompare(y.topic)) };
  },
  errorResponse(_req, code) {
    return { throttleTimeMs: 0, errorCode: code, replicaElectionResults: [] };
  },
};
