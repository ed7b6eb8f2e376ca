import type { DescribeTransactionsResponseState } from '@samsa/protocol';
import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';

/**
 * DescribeTransactions v0 (KIP-664): the state of each transactional id this broker coordinates
 * (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or TRANSACTIONAL_ID_NOT_FOUND per id otherwise).
 */
export const describeTransactionsHandler: ApiHandler<65, BrokerServices> = {
  apiKey: 65,
  async handle(req, _ctx, s) {
    const transactionStates: DescribeTransactionsResponseState[] = req.body.transactionalIds.map((id) => {
      const d = s.transactionCoordinator.handleDescribeTransactions(id);
      return { ...d, transactionStartTimeMs: BigInt(d.transactionStartTimeMs) };
    });
    return { throttleTimeMs: 0, transactionStates };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      transactionStates: req.body.transactionalIds.map((transactionalId) => ({
        errorCode,
        transactionalId,
        transactionState: '',
        transactionTimeoutMs: 0,
        transactionStartTimeMs: -1n,
        producerId: -1n,
        producerEpoch: -1,
        topics: [],
      })),
    };
  },
};
