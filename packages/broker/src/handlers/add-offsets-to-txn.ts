import { AclOperation } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireGroup, requireTransactionalId } from '../security/authorizer.js';

/**
 * AddOffsetsToTxn v0–v3: a transactional producer's sendOffsetsToTransaction, first step — the
 * group's `__consumer_offsets` partition joins the transaction, so that the TxnOffsetCommit that
 * follows (sent to the group coordinator) is completed by the transaction's marker.
 */
export const addOffsetsToTxnHandler: ApiHandler<25, BrokerServices> = {
  apiKey: 25,
  async handle(req, ctx, s) {
    const b = req.body;
    requireTransactionalId(s, ctx, b.transactionalId);
    requireGroup(s, ctx, AclOperation.READ, b.groupId);
    const errorCode = await s.transactionCoordinator.handleAddOffsetsToTransaction(b.transactionalId, b.producerId, b.producerEpoch, b.groupId, req.apiVersion);
    return { throttleTimeMs: 0, errorCode };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode };
  },
};
