import {
  AclOperation,
  ErrorCode,
  topicPartitionKey,
  type AlterPartitionReassignmentsResponse,
  type AlterPartitionReassignmentsResponseReassignableTopicResponse,
} from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireCluster } from '../security/authorizer.js';

function response(
  errorCode: number,
  errorMessage: string | null,
  responses: AlterPartitionReassignmentsResponseReassignableTopicResponse[],
  allowReplicationFactorChange = true,
): AlterPartitionReassignmentsResponse {
  return { throttleTimeMs: 0, allowReplicationFactorChange, errorCode, errorMessage, responses };
}

/**
 * AlterPartitionReassignments (KIP-455): only the controller serves it (NOT_CONTROLLER elsewhere);
 * the reassignments start on the controller's event loop and the answer says, per partition,
 * whether each was accepted — not that it finished (ListPartitionReassignments follows progress).
 * Null replicas cancel a partition's reassignment. v1 (KIP-860): with allowReplicationFactorChange
 * false, a target of another size than the current replica set answers INVALID_REPLICATION_FACTOR.
 */
export const alterPartitionReassignmentsHandler: ApiHandler<45, BrokerServices> = {
  apiKey: 45,
  async handle(req, ctx, s) {
    const b = req.body;
    requireCluster(s, ctx, AclOperation.ALTER);
    const allowRfChange = req.apiVersion >= 1 ? b.allowReplicationFactorChange : true;
    if (!s.controller.isActive) return response(ErrorCode.NOT_CONTROLLER, null, [], allowRfChange);
    const results = new Map<string, { errorCode: number; message: string | null }>();
    const toAlter: Array<{ topic: string; partition: number; replicas: number[] | null }> = [];
    for (const t of b.topics) {
      for (const p of t.partitions) {
        const k = `${t.name}\u0000${p.partitionIndex}`;
        if (!allowRfChange && p.replicas !== null) {
          const current = s.metadata.partitions(t.name).find((x) => x.partition === p.partitionIndex);
          if (current && current.replicas.length !== p.replicas.length) {
            results.set(k, {
              errorCode: ErrorCode.INVALID_REPLICATION_FACTOR,
              message: `The replication factor is changed from ${current.replicas.length} to ${p.replicas.length}`,
            });
            continue;
          }
        }
        toAlter.push({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas });
      }
    }
    if (toAlter.length > 0) {
      const { errorCode, results: outcomes } = await s.controller.alterPartitionReassignments(toAlter, b.timeoutMs);
      if (errorCode !== 0) return response(errorCode, null, [], allowRfChange);
      for (const r of toAlter) {
        const o = outcomes.get(topicPartitionKey(r)) ?? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, message: 'no result' };
        results.set(`${r.topic}\u0000${r.partition}`, o);
      }
    }
    return response(
      0,
      null,
      b.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const o = results.get(`${t.name}\u0000${p.partitionIndex}`)!;
          return { partitionIndex: p.partitionIndex, errorCode: o.errorCode, errorMessage: o.errorCode === 0 ? null : o.message };
        }),
      })),
      allowRfChange,
    );
  },
  errorResponse(req, code) {
    return response(
      code,
      null,
      req.body.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code, errorMessage: null })),
      })),
    );
  },
};
