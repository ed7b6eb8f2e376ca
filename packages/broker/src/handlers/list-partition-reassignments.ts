import { AclOperation, ErrorCode, type ListPartitionReassignmentsResponseOngoingTopicReassignment } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireCluster } from '../security/authorizer.js';

/**
 * ListPartitionReassignments (KIP-455): the controller's ongoing reassignments — all of them, or
 * those of the partitions asked for (partitions not being reassigned are left out). NOT_CONTROLLER
 * on other brokers.
 */
export const listPartitionReassignmentsHandler: ApiHandler<46, BrokerServices> = {
  apiKey: 46,
  async handle(req, ctx, s) {
    requireCluster(s, ctx, AclOperation.DESCRIBE);
    if (!s.controller.isActive) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: null, topics: [] };
    const asked = req.body.topics === null ? null : req.body.topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition })));
    const { errorCode, reassignments } = await s.controller.listPartitionReassignments(asked, req.body.timeoutMs);
    if (errorCode !== 0) return { throttleTimeMs: 0, errorCode, errorMessage: null, topics: [] };
    const byTopic = new Map<string, ListPartitionReassignmentsResponseOngoingTopicReassignment>();
    for (const r of reassignments) {
      let t = byTopic.get(r.topic);
      if (!t) {
        t = { name: r.topic, partitions: [] };
        byTopic.set(r.topic, t);
      }
      t.partitions.push({ partitionIndex: r.partition, replicas: r.replicas, addingReplicas: r.addingReplicas, removingReplicas: r.removingReplicas });
    }
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, topics: [...byTopic.values()] };
  },
  errorResponse(_req, code) {
    return { throttleTimeMs: 0, errorCode: code, errorMessage: null, topics: [] };
  },
};
