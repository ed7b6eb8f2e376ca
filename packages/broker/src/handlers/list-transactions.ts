import type { ApiHandler } from '../api/api-handler.js';
import type { BrokerServices } from './services.js';

/**
 * ListTransactions v0 (KIP-664): the transactional ids this broker coordinates, filtered by state
 * names and producer ids; state names Kafka does not know come back in unknownStateFilters.
 */
export const listTransactionsHandler: ApiHandler<66, BrokerServices> = {
  apiKey: 66,
  async handle(req, _ctx, s) {
    const r = s.transactionCoordinator.handleListTransactions(req.body.producerIdFilters, req.body.stateFilters);
    return { throttleTimeMs: 0, ...r };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, unknownStateFilters: [], transactionStates: [] };
  },
};
