import { AclOperation, ErrorCode, type InitProducerIdResponse } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireCluster, requireTransactionalId } from '../security/authorizer.js';

const answer = (errorCode: number, producerId = -1n, producerEpoch = -1): InitProducerIdResponse => ({
  throttleTimeMs: 0,
  errorCode,
  producerId,
  producerEpoch,
});

/**
 * InitProducerId v0–v4 (KIP-98; v3+ KIP-360), as Kafka 3.x's KafkaApis + TransactionCoordinator
 * answer it without an authorizer:
 * - producerId and producerEpoch must be both -1 or both set (INVALID_REQUEST);
 * - no transactional id: a fresh producer id from this broker's block (claimed from
 *   `/latest_producer_id_block`), epoch 0. An id/epoch sent by a v3+ client (KIP-360 epoch bump of
 *   an idempotent producer) is ignored, as Kafka does: the producer gets a new id;
 * - a transactional id: the transaction coordinator of its `__transaction_state` partition bumps the
 *   id's epoch (fencing older instances and aborting their open transaction), or continues the
 *   given id/epoch (KIP-360); NOT_COORDINATOR on another broker, INVALID_REQUEST for an empty id.
 * When no block can be claimed (ZooKeeper trouble) the answer is the retriable
 * COORDINATOR_LOAD_IN_PROGRESS (see ProducerIdManager).
 */
export const initProducerIdHandler: ApiHandler<22, BrokerServices> = {
  apiKey: 22,
  async handle(req, ctx, s) {
    const { transactionalId, transactionTimeoutMs, producerId, producerEpoch } = req.body;
    // WRITE on the transactional id; an idempotent producer (no id) IDEMPOTENT_WRITE on the cluster (Kafka 2.8)
    if (transactionalId !== null) requireTransactionalId(s, ctx, transactionalId);
    else requireCluster(s, ctx, AclOperation.IDEMPOTENT_WRITE);
    if ((producerId === -1n) !== (producerEpoch === -1)) return answer(ErrorCode.INVALID_REQUEST);
    if (transactionalId !== null) {
      const expected = producerId === -1n ? null : { producerId, producerEpoch };
      const r = await s.transactionCoordinator.handleInitProducerId(transactionalId, transactionTimeoutMs, expected, req.apiVersion);
      return answer(r.errorCode, r.producerId, r.producerEpoch);
    }
    return answer(ErrorCode.NONE, await s.producerIds.generateProducerId(), 0);
  },
  errorResponse(_req, code) {
    return answer(code);
  },
};
