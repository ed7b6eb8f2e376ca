import { TransactionResult } from '@samsa/transaction-coordinator';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';
import { requireTransactionalId } from '../security/authorizer.js';

/**
 * EndTxn v0–v3: commitTransaction / abortTransaction. The coordinator answers once the transaction's
 * PrepareCommit or PrepareAbort is written to `__transaction_state`; its markers follow.
 */
export const endTxnHandler: ApiHandler<26, BrokerServices> = {
  apiKey: 26,
  async handle(req, ctx, s) {
    const b = req.body;
    requireTransactionalId(s, ctx, b.transactionalId);
    const result = b.committed ? TransactionResult.COMMIT : TransactionResult.ABORT;
    const errorCode = await s.transactionCoordinator.handleEndTransaction(b.transactionalId, b.producerId, b.producerEpoch, result, req.apiVersion);
    return { throttleTimeMs: 0, errorCode };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode };
  },
};
